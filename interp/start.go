package interp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
)

// StartParams name the run to start.
type StartParams struct {
	Workflow string
	// Version is the stored version to run; "" runs the newest stored one.
	Version string
	// Inputs are the given inputs (JSON-like values); defaults are applied.
	Inputs map[string]any
	// New always starts a new run, even when one with the same key exists.
	New bool
	// WorkDir is the absolute directory of the workflow file (the CLI's
	// apply passes it): relative exec paths and the default exec dir of the
	// run and its children resolve against it. "" leaves them relative to
	// the worker's working directory.
	WorkDir string
}

// StartRun validates the inputs, computes the run key and creates a
// pending run, or finds the run it should continue instead: a run of the
// same workflow and key that is not finished is returned for resuming
// (created false), and a completed one is returned as it is (not run again)
// unless New or the version started is a newer MAJOR.MINOR than the one it
// completed on (a new MINOR or MAJOR starts a new run; a PATCH does not). A failed or canceled run with the key does not stop a new run
// from starting. Bad inputs are an *InputError.
func (e *Engine) StartRun(ctx context.Context, p StartParams) (store.Run, bool, error) {
	var v store.Version
	var err error
	if p.Version == "" {
		// The newest version's head; its graph is read (or found in this
		// process's cache) by load, not every stored version's graph.
		vs, lerr := e.st.VersionHeads(ctx, p.Workflow)
		if lerr != nil {
			return store.Run{}, false, fmt.Errorf("start workflow %q: %w", p.Workflow, lerr)
		}
		if len(vs) == 0 {
			return store.Run{}, false, fmt.Errorf("start workflow %q: no version of it is stored; apply its file first: %w", p.Workflow, store.ErrNotFound)
		}
		v = vs[len(vs)-1]
	} else if v, err = e.st.VersionGet(ctx, p.Workflow, p.Version); err != nil {
		return store.Run{}, false, fmt.Errorf("start workflow %q version %s: %w", p.Workflow, p.Version, err)
	}
	l, err := e.load(ctx, v.Workflow, v.Hash)
	if err != nil {
		return store.Run{}, false, fmt.Errorf("start workflow %q version %s: %w", p.Workflow, v.Version, err)
	}
	inputs, err := checkInputs(l.g, p.Inputs)
	if err != nil {
		return store.Run{}, false, err
	}
	key, err := e.runKey(ctx, l, inputs)
	if err != nil {
		return store.Run{}, false, err
	}
	if !p.New {
		old, err := e.st.RunGetByKey(ctx, p.Workflow, key)
		switch {
		case err == nil:
			if !old.Status.Terminal() || (old.Status == store.RunCompleted && sameRelease(old.Version, v.Version)) {
				return old, false, nil
			}
		case !errors.Is(err, store.ErrNotFound):
			return store.Run{}, false, fmt.Errorf("start workflow %q: look up run key %q: %w", p.Workflow, key, err)
		}
	}
	ins := e.insertParams(l, v, inputs, key)
	ins.WorkDir = p.WorkDir
	run, err := e.st.RunInsert(ctx, ins)
	if err != nil {
		return store.Run{}, false, fmt.Errorf("start workflow %q: %w", p.Workflow, err)
	}
	e.wakePools()
	return run, true, nil
}

// runKey evaluates the graph's key expression over the inputs, or hashes
// the inputs when the graph has none.
func (e *Engine) runKey(ctx context.Context, l *loaded, inputs map[string]any) (string, error) {
	if l.g.Key == nil {
		return inputsKey(inputs), nil
	}
	kv, err := l.prog.Eval(ctx, l.g.Key, &lang.Activation{Input: inputs})
	if err != nil {
		return "", &InputError{Workflow: l.g.Workflow, Input: "key", Problem: fmt.Sprintf("the run key expression failed on these inputs: %v; fix the inputs or the key expression", err)}
	}
	return keyString(kv), nil
}

// insertParams builds a top-level run (the caller sets the parent fields
// for a child run).
func (e *Engine) insertParams(l *loaded, v store.Version, inputs map[string]any, key string) store.RunInsertParams {
	now := e.clk.Now()
	id := e.newID()
	var deadline time.Time
	if l.g.DeadlineMS > 0 {
		deadline = now.Add(time.Duration(l.g.DeadlineMS) * time.Millisecond)
	}
	return store.RunInsertParams{
		ID: id, Workflow: v.Workflow, Version: v.Version, GraphHash: v.Hash,
		Key: key, Inputs: mustJSON(inputs), Now: now, AvailableAt: now,
		DeadlineAt: deadline, RootRunID: id,
		Events: []store.EventWrite{{Kind: "run_created", Data: mustJSON(map[string]any{"version": v.Version, "key": key})}},
	}
}

// resolvePin returns the head (no graph) of the newest stored version of
// workflow that the pin accepts.
func (e *Engine) resolvePin(ctx context.Context, workflow, pin string) (store.Version, error) {
	p, err := lang.ParsePin(pin)
	if err != nil {
		return store.Version{}, err
	}
	vs, err := e.st.VersionHeads(ctx, workflow)
	if err != nil {
		return store.Version{}, fmt.Errorf("list versions of workflow %q: %w", workflow, err)
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if p.Matches(lang.SemVer{Major: vs[i].Major, Minor: vs[i].Minor, Patch: vs[i].Patch}) {
			return vs[i], nil
		}
	}
	return store.Version{}, fmt.Errorf("no stored version of workflow %q matches version %q; apply a file that defines it: %w", workflow, pin, store.ErrNotFound)
}
