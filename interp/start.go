package interp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
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
	// run and its children resolve against it. "" runs in the directory
	// recorded when the version was applied (StoreGraphAt), and when none
	// was, leaves them relative to the worker's working directory.
	WorkDir string
}

// StartRun validates the inputs, computes the run key and creates a
// pending run, or finds the run it should continue instead: a run of the
// same workflow and key that is not finished is returned for resuming
// (created false), and a completed one is returned as it is (not run again)
// unless New or the version started is a newer MAJOR.MINOR than the one it
// completed on (a new MINOR or MAJOR starts a new run; a PATCH does not).
// A failed or canceled run with the key does not stop a new run from
// starting. Bad inputs are an *InputError, a key expression that fails on
// them a *KeyError, and inputs given with the key of an unfinished run
// whose inputs differ a *KeyInUseError.
func (e *Engine) StartRun(ctx context.Context, p StartParams) (store.Run, bool, error) {
	v, l, err := e.startVersion(ctx, p.Workflow, p.Version)
	if err != nil {
		return store.Run{}, false, err
	}
	inputs, err := checkInputs(l.g, p.Inputs)
	if err != nil {
		return store.Run{}, false, err
	}
	key, err := runKey(ctx, l.g, l.prog, inputs)
	if err != nil {
		return store.Run{}, false, err
	}
	workDir, err := e.startDir(ctx, v, p.WorkDir)
	if err != nil {
		return store.Run{}, false, err
	}
	ins := e.insertParams(l, v, inputs, key)
	ins.WorkDir = workDir
	// The store decides, in the transaction that inserts, whether the
	// key's newest run is the one to answer: concurrent starts of one key
	// agree on one run (language.md §2).
	run, created, err := e.st.RunInsertKeyed(ctx, ins, func(old store.Run) (bool, error) {
		if p.New || !continues(old, v) {
			return false, nil
		}
		if !old.Status.Terminal() {
			if differ := differingInputs(p.Inputs, inputs, old); len(differ) > 0 {
				return false, &KeyInUseError{Workflow: p.Workflow, Key: key, Run: old.ID, Status: old.Status, Inputs: differ}
			}
		}
		return true, nil
	})
	var kiu *KeyInUseError
	if errors.As(err, &kiu) {
		return store.Run{}, false, kiu
	}
	if err != nil {
		return store.Run{}, false, fmt.Errorf("start workflow %q: %w", p.Workflow, err)
	}
	if created {
		e.wakePools()
	}
	return run, created, nil
}

// startVersion returns the head and loaded graph of the version a start
// runs: the newest stored one, or the one named.
func (e *Engine) startVersion(ctx context.Context, workflow, version string) (store.Version, *loaded, error) {
	var v store.Version
	var err error
	if version == "" {
		// The newest version's head; its graph is read (or found in this
		// process's cache) by load, not every stored version's graph.
		vs, lerr := e.st.VersionHeads(ctx, workflow)
		if lerr != nil {
			return v, nil, fmt.Errorf("start workflow %q: %w", workflow, lerr)
		}
		if len(vs) == 0 {
			return v, nil, fmt.Errorf("start workflow %q: no version of it is stored; apply its file first: %w", workflow, store.ErrNotFound)
		}
		v = vs[len(vs)-1]
	} else if v, err = e.versionHead(ctx, workflow, version); err != nil {
		return v, nil, fmt.Errorf("start workflow %q version %s: %w", workflow, version, err)
	}
	l, err := e.load(ctx, v.Workflow, v.Hash)
	if err != nil {
		return v, nil, fmt.Errorf("start workflow %q version %s: %w", workflow, v.Version, err)
	}
	return v, l, nil
}

// continues reports whether a start of version v (its current head)
// continues old, the newest run with its key, instead of creating a run:
// old is unfinished, or completed on the same MAJOR.MINOR, except on a
// revision of v that was replaced since (spec/versioning.md §8: a new
// revision of a development version counts as a new release for this
// rule).
func continues(old store.Run, v store.Version) bool {
	if !old.Status.Terminal() {
		return true
	}
	if old.Status != store.RunCompleted || !sameRelease(old.Version, v.Version) {
		return false
	}
	return !replacedUnder(old, v)
}

// replacedUnder reports whether run old is bound to an earlier revision
// of v, its own version, than v's current one.
func replacedUnder(old store.Run, v store.Version) bool {
	return old.Version == v.Version && v.Revision > 1 && old.GraphHash != v.Hash
}

// startDir is the directory a new run of version v executes in: dir when
// given, else the one recorded when the version was applied (spec/api.md:
// runs started through the API or a webhook), else "" (the worker's).
func (e *Engine) startDir(ctx context.Context, v store.Version, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	d, err := e.st.VersionWorkDir(ctx, v.Workflow, v.Version)
	if err != nil {
		return "", fmt.Errorf("start workflow %q version %s: %w", v.Workflow, v.Version, err)
	}
	return d, nil
}

// KeyInUseError refuses inputs given with the key of an unfinished run
// whose inputs differ (language.md §2): following that run would drop
// them without a word.
type KeyInUseError struct {
	Workflow string
	Key      string
	Run      string
	Status   store.RunStatus
	Inputs   []string // the given inputs whose values differ, sorted
}

func (e *KeyInUseError) Error() string {
	what := "input "
	if len(e.Inputs) > 1 {
		what = "inputs "
	}
	return fmt.Sprintf("workflow %q: run %s with key %q is still %s and was started with other values of %s%s",
		e.Workflow, e.Run, e.Key, e.Status, what, naming.QuotedNames(e.Inputs))
}

// differingInputs returns the names of the given inputs whose checked
// values differ from those run was started with, sorted. Only given
// inputs that the run has count: a default is not the user's request,
// and an input that the run's version did not declare may be one a newer
// version requires (its version decision says what becomes of it).
func differingInputs(given, checked map[string]any, run store.Run) []string {
	if len(given) == 0 {
		return nil
	}
	had := decodeMap(run.Inputs)
	var differ []string
	for name := range given {
		was, ok := had[name]
		if ok && !bytes.Equal(mustJSON(checked[name]), mustJSON(was)) {
			differ = append(differ, name)
		}
	}
	sort.Strings(differ)
	return differ
}

// CheckStart checks, without a store, what StartRun would refuse of the
// given inputs of graph g: the inputs themselves and the run key
// expression over them. apply calls it before it opens the store, so
// that a mistake writes nothing.
func CheckStart(ctx context.Context, g *graph.Graph, given map[string]any) error {
	inputs, err := checkInputs(g, given)
	if err != nil || g.Key == nil {
		return err
	}
	prog, err := expr.Load(g)
	if err != nil {
		return fmt.Errorf("workflow %q: %w", g.Workflow, err)
	}
	_, err = runKey(ctx, g, prog, inputs)
	return err
}

// runKey evaluates the graph's key expression over the inputs, or hashes
// the inputs when the graph has none.
func runKey(ctx context.Context, g *graph.Graph, prog *expr.Program, inputs map[string]any) (string, error) {
	if g.Key == nil {
		return inputsKey(inputs), nil
	}
	kv, err := prog.Eval(ctx, g.Key, &expr.Activation{Input: inputs})
	if err != nil {
		return "", &KeyError{Workflow: g.Workflow, Err: err}
	}
	return keyString(kv), nil
}

// KeyError is a run key expression that failed on the given inputs.
type KeyError struct {
	Workflow string
	Err      error
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("workflow %q: the run key expression failed on these inputs: %v", e.Workflow, e.Err)
}

func (e *KeyError) Unwrap() error { return e.Err }

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
		DeadlineAt: deadline, RootRunID: id, Trace: storeTrace(telemetry.NewTrace(id)),
		Events: []store.EventWrite{{Kind: "run_created", Data: mustJSON(map[string]any{"version": v.Version, "key": key})}},
	}
}

// resolvePin returns the head (no graph) of the newest stored version of
// workflow that the pin accepts.
func (e *Engine) resolvePin(ctx context.Context, workflow, pin string) (store.Version, error) {
	p, err := graph.ParsePin(pin)
	if err != nil {
		return store.Version{}, err
	}
	vs, err := e.st.VersionHeads(ctx, workflow)
	if err != nil {
		return store.Version{}, fmt.Errorf("list versions of workflow %q: %w", workflow, err)
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if p.Matches(graph.SemVer{Major: vs[i].Major, Minor: vs[i].Minor, Patch: vs[i].Patch}) {
			return vs[i], nil
		}
	}
	return store.Version{}, fmt.Errorf("no stored version of workflow %q matches version %q; apply a file that defines it: %w", workflow, pin, store.ErrNotFound)
}

// ResolveVersion returns the head (no graph) of the stored version a start
// of workflow runs: the newest, or with a pin ("1", "1.2", "1.2.3",
// graph.ParsePin) the newest the pin accepts. A workflow with no stored
// version is an error wrapping store.ErrNotFound that names the nearest
// stored workflow; a pin that does not parse is an error as ParsePin words
// it (not store.ErrNotFound).
func (e *Engine) ResolveVersion(ctx context.Context, workflow, pin string) (store.Version, error) {
	if pin != "" {
		if _, err := graph.ParsePin(pin); err != nil {
			return store.Version{}, &PinError{Pin: pin, Err: err}
		}
	}
	vs, err := e.Versions(ctx, workflow)
	if err != nil {
		return store.Version{}, err
	}
	if len(vs) == 0 {
		all, err := e.Versions(ctx, "")
		if err != nil {
			return store.Version{}, err
		}
		var names []string
		for _, v := range all {
			if len(names) == 0 || names[len(names)-1] != v.Workflow {
				names = append(names, v.Workflow)
			}
		}
		return store.Version{}, fmt.Errorf("no version of workflow %q is stored; apply its file first.%s: %w",
			workflow, naming.DidYouMean(workflow, names), store.ErrNotFound)
	}
	if pin == "" {
		return vs[len(vs)-1], nil
	}
	return e.resolvePin(ctx, workflow, pin)
}

// PinError is a version pin that does not parse.
type PinError struct {
	Pin string
	Err error
}

func (e *PinError) Error() string { return e.Err.Error() }

func (e *PinError) Unwrap() error { return e.Err }
