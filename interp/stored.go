package interp

// A workflow's stored versions as the front ends read them: every stored
// graph comes through the engine's graph cache (Graph), so a process
// decodes a graph once whoever asks, and one it stored itself not at all.

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// GraphError is a stored graph that cannot be decoded or loaded: the
// database holds a damaged graph, or one this flowrun cannot read.
type GraphError struct {
	Workflow, Version string
	Err               error
}

func (e *GraphError) Error() string {
	return fmt.Sprintf("load workflow %q version %s: %v", e.Workflow, e.Version, e.Err)
}

func (e *GraphError) Unwrap() error { return e.Err }

// Versions returns the stored versions of a workflow, oldest first,
// without their graphs (Graph is nil; Graph or VersionGraph reads them).
func (e *Engine) Versions(ctx context.Context, workflow string) ([]store.Version, error) {
	vs, err := e.st.VersionHeads(ctx, workflow)
	if err != nil {
		return nil, fmt.Errorf("reading the stored versions of workflow %q: %w", workflow, err)
	}
	return vs, nil
}

// VersionGraph returns a stored version of a workflow (without its bytes)
// and its graph, through the graph cache. A version that is not stored is
// an error wrapping store.ErrNotFound; a graph that cannot be read, a
// *GraphError.
func (e *Engine) VersionGraph(ctx context.Context, workflow, version string) (store.Version, *graph.Graph, error) {
	v, err := e.versionHead(ctx, workflow, version)
	if err != nil {
		return v, nil, err
	}
	g, err := e.Graph(ctx, workflow, v.Hash)
	return v, g, err
}

// versionHead returns a stored version without its graph: its hash names
// the graph for load, which reads the graph only when it is not cached.
func (e *Engine) versionHead(ctx context.Context, workflow, version string) (store.Version, error) {
	vs, err := e.Versions(ctx, workflow)
	if err != nil {
		return store.Version{}, err
	}
	for _, v := range vs {
		if v.Version == version {
			return v, nil
		}
	}
	return store.Version{}, fmt.Errorf("version %s of workflow %q: %w", version, workflow, store.ErrNotFound)
}

// StoredGraphs returns the graphs of every stored version of a workflow,
// oldest first (none when it has none): what a workflow step's child is
// typed against (lang.LoadOptions.Stored).
func (e *Engine) StoredGraphs(ctx context.Context, workflow string) ([]*graph.Graph, error) {
	vs, err := e.Versions(ctx, workflow)
	if err != nil {
		return nil, err
	}
	out := make([]*graph.Graph, 0, len(vs))
	for _, v := range vs {
		g, err := e.Graph(ctx, workflow, v.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// RunGraph returns the graph a run is bound to: by its graph hash, or by
// its version when no version has that hash. Neither stored is an error
// wrapping store.ErrNotFound; a graph that cannot be read, a *GraphError.
func (e *Engine) RunGraph(ctx context.Context, run store.Run) (*graph.Graph, error) {
	g, err := e.Graph(ctx, run.Workflow, run.GraphHash)
	if errors.Is(err, store.ErrNotFound) {
		_, g, err = e.VersionGraph(ctx, run.Workflow, run.Version)
	}
	return g, err
}
