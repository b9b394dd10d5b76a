package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/store"
)

// Signal delivers a named signal to a run. It is an error wrapping
// store.ErrNotFound for an unknown run and for a signal no wait step of
// the run takes (naming the nearest), and store.ErrConflict when the wait
// steps that take it have all finished, or the run has. runID may be any run reference (ResolveRun).
func (e *Engine) Signal(ctx context.Context, runID, name string, payload json.RawMessage) (store.Signal, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return store.Signal{}, fmt.Errorf("signal run %s: %w", runID, err)
	}
	if run.Status.Terminal() {
		return store.Signal{}, fmt.Errorf("signal run %s: the run is %s and waits for nothing: %w", run.ID, run.Status, store.ErrConflict)
	}
	if !(run.Status == store.RunWaiting && run.WaitReason == "signal:"+name) {
		if err := e.checkSignal(ctx, run, name); err != nil {
			return store.Signal{}, err
		}
	}
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	if graph.JSONDepthOver(payload, graph.MaxValueDepth) >= 0 {
		return store.Signal{}, fmt.Errorf("signal run %s: the signal data nests deeper than %d levels of lists and objects; flatten it", run.ID, graph.MaxValueDepth)
	}
	if !json.Valid(payload) {
		return store.Signal{}, fmt.Errorf("signal run %s: the signal data is not valid JSON; pass a JSON value such as '{\"approved\": true}'", run.ID)
	}
	if off := InvalidUTF8At(payload); off >= 0 {
		return store.Signal{}, fmt.Errorf("signal run %s: the signal data is not valid UTF-8 (byte %d); JSON text is UTF-8", run.ID, off+1)
	}
	if err := e.checkSignalData(ctx, run, name, payload); err != nil {
		return store.Signal{}, err
	}
	sig, err := e.st.SignalSend(ctx, store.SignalSendParams{RunID: run.ID, Name: name, Payload: payload, Now: e.clk.Now()})
	if err != nil {
		return store.Signal{}, fmt.Errorf("signal run %s: %w", run.ID, err)
	}
	e.poke(run.ID)
	e.wakePools()
	return sig, nil
}

// checkSignal returns an error unless a wait step of the run that has not
// finished takes the signal name: store.ErrNotFound when no wait step
// takes it at all, store.ErrConflict when those that do have finished. Signal skips it
// for a run parked on that very signal (wait_reason "signal:NAME", written
// when the run parked with such a step waiting, cleared when it is
// claimed), which is what a signal usually finds: a long run's graph is
// then not loaded at all.
func (e *Engine) checkSignal(ctx context.Context, run store.Run, name string) error {
	waiting, names, err := e.signalsOf(ctx, run, name)
	if err != nil {
		return fmt.Errorf("signal run %s: %w", run.ID, err)
	}
	if len(waiting) == 0 && !naming.ContainsName(names, name) {
		// No wait step takes the name at all: an unknown signal, most
		// likely misspelled.
		hint := "it has no wait step"
		if len(names) > 0 {
			hint = fmt.Sprintf("its wait steps take %s", naming.QuotedNames(names))
		}
		return fmt.Errorf("signal run %s: no step of the run waits for signal %q (%s).%s: %w",
			run.ID, name, hint, naming.DidYouMean(name, names), store.ErrNotFound)
	}
	if len(waiting) == 0 {
		return fmt.Errorf("signal run %s: no step of the run waits for signal %q (its wait steps that take it have finished): %w", run.ID, name, store.ErrConflict)
	}
	return nil
}

// WaitingSignals returns the signal names a run would take now (Signal
// accepts them): those of its wait steps that have not finished, in graph
// order, each once; none for a finished run. runID may be any run
// reference (ResolveRun).
func (e *Engine) WaitingSignals(ctx context.Context, runID string) ([]string, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("signals of run %s: %w", runID, err)
	}
	if run.Status.Terminal() {
		return nil, nil
	}
	waiting, _, err := e.signalsOf(ctx, run, "")
	if err != nil {
		return nil, fmt.Errorf("signals of run %s: %w", run.ID, err)
	}
	return waiting, nil
}

// signalsOf reads the run's wait steps: waiting are the signal names of
// those that have not finished (only name's, when name is not ""), each
// once; all are the names of every wait step.
func (e *Engine) signalsOf(ctx context.Context, run store.Run, name string) (waiting, all []string, err error) {
	l, err := e.load(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, s := range l.g.Steps {
		if s.Action.Kind != graph.KindWait {
			continue
		}
		sig := s.Action.Wait.Signal
		all = append(all, sig)
		if seen[sig] || name != "" && sig != name {
			continue
		}
		// Only the wait steps are read: a long run's history is not.
		row, err := e.st.StepGet(ctx, run.ID, s.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			// not begun yet: it will wait
		case err != nil:
			return nil, nil, err
		case row.Status.Terminal():
			continue
		}
		seen[sig] = true
		waiting = append(waiting, sig)
	}
	return waiting, all, nil
}

// Cancel asks for a run and its descendants to be canceled. A run nobody
// works on ends canceled at once; a run being worked on is stopped by its
// worker: at once in this process, within a poll interval in another one
// (its pool reads the cancel requests of its runs every Options.Poll, and
// on Postgres when RunCancel's notification arrives), and at the latest at
// its next heartbeat on a store that cannot be polled. runID may be any
// run reference (ResolveRun).
//
// Once the run's saga has begun a cancel is not taken (semantics.md §14):
// Cancel writes nothing and returns a *CompensatingError, so that no
// compensation is cut short (a run parked between two would otherwise end
// at once).
func (e *Engine) Cancel(ctx context.Context, runID string) (store.Run, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return store.Run{}, fmt.Errorf("cancel run %s: %w", runID, err)
	}
	if !run.Status.Terminal() {
		order, err := e.sagaRunning(ctx, run.ID)
		if err != nil {
			return run, fmt.Errorf("cancel run %s: %w", run.ID, err)
		}
		if order != nil {
			return run, &CompensatingError{RunID: run.ID, Order: order}
		}
	}
	keep, err := e.cancelKeep(ctx, run)
	if err != nil {
		return run, fmt.Errorf("cancel run %s: %w", runID, err)
	}
	run, err = e.st.RunCancel(ctx, store.RunCancelParams{RunID: run.ID, Now: e.clk.Now(), Keep: keep})
	if err != nil {
		return run, fmt.Errorf("cancel run %s: %w", runID, err)
	}
	if run.Status == store.RunCanceled {
		// Nobody held it: the store ended it at once, and no runner will
		// report its end (a held run's runner does).
		tr := telRun(run)
		tr.ErrorKind = "canceled"
		e.opts.Observer.RunEnded(tr)
	}
	e.beatPools()
	e.wakePools()
	return run, nil
}

// CompensatingError is a cancel refused because the run is compensating:
// its saga began, and its compensations run to their end.
type CompensatingError struct {
	RunID string
	Order []string // the steps whose compensation the saga runs, in order
}

func (e *CompensatingError) Error() string {
	return fmt.Sprintf("run %s is compensating (%s); once its compensations have begun a cancel is not taken: they run to their end",
		e.RunID, strings.Join(e.Order, ", "))
}

// Retry redrives a failed (or canceled) run: completed steps are kept; the
// failed and canceled step keys, or with fromStep that step and every step
// downstream of it, are reset to pending, and the run becomes pending. The
// retry budget of a reset step starts afresh; attempt numbers continue.
// runID may be any run reference (ResolveRun).
func (e *Engine) Retry(ctx context.Context, runID, fromStep string) (store.Run, error) {
	run, err := e.ResolveRun(ctx, runID)
	if err != nil {
		return store.Run{}, fmt.Errorf("retry run %s: %w", runID, err)
	}
	if run.Status != store.RunFailed && run.Status != store.RunCanceled {
		return run, fmt.Errorf("retry run %s: the run is %s; only a failed or canceled run can be retried: %w", run.ID, run.Status, store.ErrConflict)
	}
	l, err := e.load(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return run, fmt.Errorf("retry run %s: %w", run.ID, err)
	}
	reset := map[string]bool{}
	if fromStep != "" {
		if !store.GraphStep(fromStep) {
			// A saga's rows (~compensate, NAME~compensate) are the
			// engine's, run again only by what they undo.
			return run, fmt.Errorf("retry run %s: %q is a compensation of the run, not a step of the workflow; name one of its steps (the step it undoes, to run that step and its compensation again): %w", run.ID, fromStep, store.ErrNotFound)
		}
		if l.step(fromStep) == nil {
			return run, fmt.Errorf("retry run %s: the workflow has no step %q; name one of its steps: %w", run.ID, fromStep, store.ErrNotFound)
		}
		reset[fromStep] = true
		for _, s := range l.g.Steps { // topological order: needs come first
			for _, n := range s.Needs {
				if reset[n] {
					reset[s.Name] = true
				}
			}
		}
	}
	steps, err := e.st.StepList(ctx, run.ID)
	if err != nil {
		return run, fmt.Errorf("retry run %s: %w", run.ID, err)
	}
	// A saga that ran undid the steps whose compensation completed: they
	// run again, and every step downstream of them (their outputs came
	// from what was undone), whatever else is reset (semantics.md §14).
	undone := undoneBySaga(steps)
	if len(undone) > 0 {
		for _, s := range l.g.Steps { // topological order: needs come first
			for _, n := range s.Needs {
				if undone[n] {
					undone[s.Name] = true
				}
			}
		}
	}
	atts, err := e.st.AttemptList(ctx, run.ID, "")
	if err != nil {
		return run, fmt.Errorf("retry run %s: %w", run.ID, err)
	}
	last := map[string]int{}
	for _, a := range atts {
		last[a.StepKey] = max(last[a.StepKey], a.Attempt)
	}
	now := e.clk.Now()
	t := store.Transition{RunID: run.ID, Now: now}
	for _, s := range steps {
		switch {
		case isComp(s.Step):
			// The saga's rows are cleared, whatever they hold: the run
			// has no saga until a failure begins another, which runs
			// each compensation afresh.
		case undone[s.Step]:
		case fromStep != "" && !reset[s.Step]:
			continue
		case fromStep == "" && s.Status != store.StepFailed && s.Status != store.StepCanceled:
			continue
		}
		w := store.StepWrite{Key: s.Key, Step: s.Step, Index: s.Index, Iteration: s.Iteration, Status: store.StepPending,
			Attempts: s.Attempts}
		if last[s.Key] > 0 {
			w.State = mustJSON(&rowState{Base: last[s.Key]})
		}
		t.Steps = append(t.Steps, w)
	}
	// ClearCancel: a run canceled while nobody held it keeps the request
	// it carried out; the retried run must not act on it again.
	t.Run = &store.RunUpdate{Status: ptr(store.RunPending), Error: json.RawMessage("null"), FinishedAt: ptr(zeroTime),
		AvailableAt: ptr(now), WaitReason: ptr(""), AttemptsUsed: ptr(0), Attempt: ptr(runAttempt(run) + 1), ClearCancel: true}
	if l.g.DeadlineMS > 0 {
		t.Run.DeadlineAt = ptr(now.Add(msDuration(l.g.DeadlineMS)))
	}
	t.Events = []store.EventWrite{{Kind: "retried", StepKey: fromStep, Data: mustJSON(map[string]any{"reset": len(t.Steps)})}}
	res, err := e.st.TransitionCommit(ctx, []store.Transition{t})
	if err != nil {
		return run, fmt.Errorf("retry run %s: %w", run.ID, err)
	}
	if len(res) > 0 && res[0].Err != nil {
		return run, fmt.Errorf("retry run %s: a worker holds the run: %w", run.ID, res[0].Err)
	}
	e.wakePools()
	run, err = e.st.RunGet(ctx, run.ID)
	if err != nil {
		return run, fmt.Errorf("retry run %s: %w", run.ID, err)
	}
	return run, nil
}

// undoneBySaga returns the steps of a run's rows whose compensation
// completed in the saga the run ran, or nil when it ran none.
func undoneBySaga(steps []store.Step) map[string]bool {
	var saga *sagaState
	for _, s := range steps {
		if s.Key == compKey {
			saga = rowStateOf(s).Saga
		}
	}
	if saga == nil {
		return nil
	}
	undone := map[string]bool{}
	for _, s := range steps {
		if name, ok := strings.CutSuffix(s.Key, compSuffix); ok && name != "" && s.Status == store.StepCompleted &&
			slices.Contains(saga.Order, name) {
			undone[name] = true
		}
	}
	return undone
}

// SignalDataError is a signal refused because its data does not have the
// type its wait step declares (language.md §8.6): nothing was written.
type SignalDataError struct {
	RunID, Step, Signal string
	Type                *graph.Type
	Problem             string // every mismatch (up to maxSignalProblems), from graph.CheckValueAll, "; "-separated
}

func (e *SignalDataError) Error() string {
	return fmt.Sprintf("signal %q of run %s: the data does not have the type step %q declares (%s): %s",
		e.Signal, e.RunID, e.Step, e.Type, e.Problem)
}

// checkSignalData checks a signal's data against the type of every wait
// step of the run's graph that takes the signal name and declares one.
// A graph in the engine's cache is checked there. Otherwise the typed
// waits stored beside the graph (graph.SignalTypes, read with
// VersionSignalTypes) are checked, without reading the graph: a signal
// from a process of its own (flowrun signal, an API server that has not
// loaded the graph) reads a few bytes, not the whole stored graph. A
// version stored before they were recorded reads the graph, decoding it
// only when its bytes may hold a typed wait (graph.MayHaveTypedWait).
func (e *Engine) checkSignalData(ctx context.Context, run store.Run, name string, payload json.RawMessage) error {
	if l := e.graphs.get(run.Workflow + "\x00" + run.GraphHash); l != nil {
		return CheckSignalData(l.g, run.ID, name, payload)
	}
	raw, err := e.st.VersionSignalTypes(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return fmt.Errorf("signal run %s: load workflow %q graph %.12s: %w", run.ID, run.Workflow, run.GraphHash, err)
	}
	if raw != nil {
		waits, err := graph.DecodeSignalTypes(raw)
		if err != nil {
			return fmt.Errorf("signal run %s: workflow %q graph %.12s: %w", run.ID, run.Workflow, run.GraphHash, err)
		}
		c := signalCheck{runID: run.ID, name: name, payload: payload}
		for _, w := range waits[name] {
			if err := c.check(w.Step, w.Type); err != nil {
				return err
			}
		}
		return nil
	}
	v, err := e.st.VersionGetByHash(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return fmt.Errorf("signal run %s: load workflow %q graph %.12s: %w", run.ID, run.Workflow, run.GraphHash, err)
	}
	if !graph.MayHaveTypedWait(v.Graph) {
		return nil
	}
	l, err := e.loadVersion(v)
	if err != nil {
		return fmt.Errorf("signal run %s: %w", run.ID, err)
	}
	return CheckSignalData(l.g, run.ID, name, payload)
}

// CheckSignalData checks a signal's data against the type of every wait
// step of g that takes the signal name and declares one: the check
// Engine.Signal makes, for a caller that holds the run's graph and wants
// to refuse a payload before sending it (flowtui's signal dialog, as it
// is typed). It returns a *SignalDataError for data of another type.
func CheckSignalData(g *graph.Graph, runID, name string, payload json.RawMessage) error {
	c := signalCheck{runID: runID, name: name, payload: payload}
	for _, s := range g.Steps {
		w := s.Action.Wait
		if s.Action.Kind != graph.KindWait || w == nil || w.Signal != name || w.Type == nil {
			continue
		}
		if err := c.check(s.Name, w.Type); err != nil {
			return err
		}
	}
	return nil
}

// SignalExample returns the type the first wait step of g taking the
// signal name declares, and a payload of that type (graph.Example, as
// compact JSON) for hints and forms; ok is false when no wait step
// declares a type for it (any JSON is taken).
func SignalExample(g *graph.Graph, name string) (t *graph.Type, example json.RawMessage, ok bool) {
	for _, s := range g.Steps {
		w := s.Action.Wait
		if s.Action.Kind != graph.KindWait || w == nil || w.Signal != name || w.Type == nil {
			continue
		}
		b, err := json.Marshal(graph.Example(w.Type))
		if err != nil {
			return nil, nil, false
		}
		return w.Type, b, true
	}
	return nil, nil, false
}

// maxSignalProblems bounds the mismatches a refused signal reports.
const maxSignalProblems = 10

// signalCheck checks one signal's data against the types of the waits
// that take it, decoding the data once, at the first typed wait.
type signalCheck struct {
	runID, name string
	payload     json.RawMessage
	v           any
	decoded     bool
}

// check checks the data against the type t that step declares.
func (c *signalCheck) check(step string, t *graph.Type) error {
	if !c.decoded {
		if err := graph.UnmarshalJSON(c.payload, &c.v); err != nil {
			return fmt.Errorf("signal run %s: the signal data is not valid JSON: %w", c.runID, err)
		}
		c.decoded = true
	}
	if errs := graph.CheckValueAll(t, c.v, "data", maxSignalProblems); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		return &SignalDataError{RunID: c.runID, Step: step, Signal: c.name, Type: t, Problem: strings.Join(msgs, "; ")}
	}
	return nil
}
