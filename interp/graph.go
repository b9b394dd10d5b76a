package interp

import (
	"context"

	"github.com/flowrun/flowrun/lang/graph"
)

// Graph returns the decoded graph of a workflow's stored version, named by
// its graph hash (a run's GraphHash; a version head's Hash). It goes
// through the engine's graph cache (graphcache.go), the one the runs of
// this engine use, so a graph is read and decoded once per process
// whoever asks: the CLI, flowtui and the runner share it. The graph is
// shared and must not be modified. A hash that is not stored is an error
// wrapping store.ErrNotFound.
func (e *Engine) Graph(ctx context.Context, workflow, hash string) (*graph.Graph, error) {
	l, err := e.load(ctx, workflow, hash)
	if err != nil {
		return nil, err
	}
	return l.g, nil
}
