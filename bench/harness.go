package bench

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// harness is a scratch store and an engine on it.
type harness struct {
	st *sqlite.Store
	e  *interp.Engine
}

// open opens a scratch store at dir/name in the synchronous mode, with an
// engine that never waits in-process for a parked run.
func open(ctx context.Context, dir, name, sync string, opts interp.Options) (*harness, error) {
	st, err := sqlite.Open(ctx, filepath.Join(dir, name), sqlite.Options{Synchronous: sync})
	if err != nil {
		return nil, err
	}
	if opts.Owner.Host == "" {
		opts.Owner = store.Owner{Host: "bench", Worker: "b"}
	}
	opts.ParkWait = -1
	return &harness{st: st, e: interp.New(st, opts)}, nil
}

func (h *harness) close() error { return h.st.Close() }

// compile compiles HCL source and stores its workflow (compiling is not
// part of what the scenarios time).
func (h *harness) compile(ctx context.Context, src string) (*graph.Graph, error) {
	m, diags := lang.LoadFile("bench.hcl", []byte(src))
	if diags.HasErrors() {
		return nil, fmt.Errorf("compiling the benchmark workflow: %s", diags.Error())
	}
	if len(m.Workflows) != 1 {
		return nil, fmt.Errorf("the benchmark workflow compiled to %d workflows, want 1", len(m.Workflows))
	}
	g := m.Workflows[0].Graph
	if _, err := h.e.StoreGraph(ctx, g); err != nil {
		return nil, err
	}
	return g, nil
}

// start starts a new run of workflow. The first start of a version in a
// process also builds its CEL programs (lang.Load).
func (h *harness) start(ctx context.Context, workflow string, inputs map[string]any) (store.Run, error) {
	run, _, err := h.e.StartRun(ctx, interp.StartParams{Workflow: workflow, Inputs: inputs, New: true})
	return run, err
}

// drive drives a run to its end; it fails unless the run completes.
func (h *harness) drive(ctx context.Context, run store.Run) (store.Run, error) {
	done, err := h.e.Drive(ctx, run.ID)
	if err != nil {
		return done, err
	}
	if done.Status != store.RunCompleted {
		return done, fmt.Errorf("run %s of %s ended %s, want completed: %s", done.ID, done.Workflow, done.Status, done.Error)
	}
	return done, nil
}

// countSteps returns how many top-level and item step rows a run has.
func (h *harness) countSteps(ctx context.Context, runID string) (int, error) {
	steps, err := h.st.StepList(ctx, runID)
	return len(steps), err
}
