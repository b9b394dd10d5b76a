package interp

// compensate: a saga. When a run fails (or is canceled, for the
// compensations that say so), the compensations of the steps that
// completed run one at a time, in the reverse order of the steps'
// completion, each a step key of its own (NAME~compensate) with attempts,
// retries and a timeout as any step; then the run ends with its original
// error (spec/semantics.md §14).
//
// The saga is one controller row (key compKey), written in the transition
// that would have ended the run: its state holds the run's error and the
// order of the compensations, decided once. Each compensation's row says
// how far it got, so a run rebuilt after a crash goes on where it was: a
// compensation that completed never runs again, and none is skipped.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

const (
	// compSuffix ends the step key of a compensation: NAME~compensate.
	compSuffix = "~compensate"
	// compKey is the saga's controller row.
	compKey = "~compensate"
)

// sagaState is the controller row's state: what the saga was started for
// and the compensations it runs, in order.
type sagaState struct {
	Error  json.RawMessage `json:"error"`            // the run's error (runError)
	Cancel bool            `json:"cancel,omitempty"` // started by a cancel
	Order  []string        `json:"order"`            // the steps whose compensation runs, in order
}

// compSteps builds, once per loaded graph, the step each compensation runs
// as: its action, timeout and retry, named NAME~compensate.
type compSteps struct {
	once  sync.Once
	steps map[string]*graph.Step
	list  []*graph.Step // the graph's steps, then the compensations
}

func (l *loaded) compensations() *compSteps {
	l.comp.once.Do(func() {
		l.comp.steps = map[string]*graph.Step{}
		l.comp.list = l.g.Steps
		for _, s := range l.g.Steps {
			c := s.Compensate
			if c == nil {
				continue
			}
			cs := &graph.Step{Name: s.Name + compSuffix, Join: "all", OnError: "continue", Action: c.Action,
				TimeoutMS: c.TimeoutMS, Retry: c.Retry, OutputType: graph.TypeAny}
			l.comp.steps[cs.Name] = cs
		}
		if len(l.comp.steps) > 0 {
			l.comp.list = slices.Clone(l.g.Steps)
			for _, s := range l.g.Steps {
				if cs := l.comp.steps[s.Name+compSuffix]; cs != nil {
					l.comp.list = append(l.comp.list, cs)
				}
			}
			l.comp.steps[compKey] = &graph.Step{Name: compKey, Join: "all", OnError: "continue", OutputType: graph.TypeNull}
		}
	})
	return &l.comp
}

// sagaOf returns the saga's state, or nil when the run has none: it never
// compensated, or a redrive (Engine.Retry) cleared the saga's rows.
func (sc *scheduler) sagaOf() *sagaState {
	if sc.rows[compKey] == nil {
		return nil
	}
	return sc.state(compKey).Saga
}

// sagaRunning reports whether the run is compensating.
func (sc *scheduler) sagaRunning() bool {
	row := sc.rows[compKey]
	return row != nil && !row.Status.Terminal() && sc.sagaOf() != nil
}

// startSaga begins the compensations instead of ending the run with re:
// it reports false (nothing begun) when no step to compensate completed,
// or the saga ran already. With cancel, only the compensations marked
// on_cancel run, and the run ends canceled after them.
func (sc *scheduler) startSaga(re runError, cancel bool) bool {
	if sc.sagaOf() != nil || len(sc.l.compensations().steps) == 0 {
		return false
	}
	type done struct {
		name string
		at   int64
		pos  int
	}
	var ds []done
	for i, s := range sc.l.g.Steps {
		if s.Compensate == nil || cancel && !s.Compensate.OnCancel {
			continue
		}
		if row := sc.rows[s.Name]; row != nil && row.Status == store.StepCompleted {
			ds = append(ds, done{s.Name, row.FinishedAt.UnixMicro(), i})
		}
	}
	if len(ds) == 0 {
		return false
	}
	// The reverse order of completion; steps that completed in the same
	// commit in the reverse order of the graph (a step after its needs).
	slices.SortFunc(ds, func(a, b done) int {
		if a.at != b.at {
			return int(b.at - a.at)
		}
		return b.pos - a.pos
	})
	order := make([]string, len(ds))
	for i, d := range ds {
		order[i] = d.name
	}
	sc.stopAll(store.AttemptCanceled, store.StepCanceled)
	u := unit{s: sc.l.step(compKey), key: compKey, idx: -1, iter: -1}
	row := sc.row(u)
	row.Status, row.StartedAt = store.StepRunning, sc.now
	row.Detail = "compensating: " + strings.Join(order, ", ")
	sc.put(row, &rowState{Saga: &sagaState{Error: mustJSON(re), Cancel: cancel, Order: order}})
	if cancel {
		sc.tx.runUpdate().ClearCancel = true
	}
	sc.tx.event("compensation_started", "", map[string]any{"steps": order, "kind": re.Kind, "message": re.Message, "step": re.Step})
	sc.sagaBegun = true
	return true
}

// advanceSaga runs the compensations in their order, one at a time, and
// ends the run once the last has ended. A compensation that fails (after
// its retries) does not stop the others: the run's error lists it.
func (sc *scheduler) advanceSaga(ctx context.Context) {
	saga := sc.sagaOf()
	for _, name := range saga.Order {
		cs := sc.l.step(name + compSuffix)
		u := unit{s: cs, key: cs.Name, idx: -1, iter: -1}
		if row := sc.rows[u.key]; row == nil || !row.Status.Terminal() {
			sc.advanceUnit(ctx, u)
			if sc.ended {
				return
			}
			if row := sc.rows[u.key]; row == nil || !row.Status.Terminal() {
				return // in flight or waiting: the next pass goes on
			}
		}
	}
	sc.endSaga()
}

// compResult is a compensation's end, as the run's error lists it.
type compResult struct {
	Step   string `json:"step"`
	Status string `json:"status"`
}

// endSaga ends the run once every compensation ended: failed with the
// error that started the saga (canceled, for a cancel), which lists the
// compensations and how each ended.
func (sc *scheduler) endSaga() {
	saga := sc.sagaOf()
	var re runError
	_ = json.Unmarshal(saga.Error, &re)
	re.Compensations = sc.sagaResults()
	var failed []string
	for _, c := range re.Compensations {
		if c.Status != string(store.StepCompleted) {
			failed = append(failed, c.Step)
		}
	}
	row := sc.row(unit{s: sc.l.step(compKey), key: compKey, idx: -1, iter: -1})
	row.Status, row.FinishedAt = store.StepCompleted, sc.now
	if len(failed) > 0 {
		row.Status = store.StepFailed
		row.Error = mustJSON(&stepError{Kind: "compensation", Type: problemType("compensation"),
			Message: fmt.Sprintf("the compensation of %s failed", strings.Join(failed, ", "))})
	}
	sc.put(row, nil)
	sc.tx.event("compensation_ended", "", map[string]any{"compensations": re.Compensations})
	u := sc.tx.runUpdate()
	if saga.Cancel {
		u.Status = ptr(store.RunCanceled)
		u.Error = mustJSON(re)
		sc.endRun(u)
		sc.tx.event("run_canceled", "", nil)
		return
	}
	u.Status = ptr(store.RunFailed)
	u.Error = mustJSON(re)
	sc.endRun(u)
	sc.tx.event("run_failed", re.Step, re)
	se := &stepError{Kind: re.Kind, Message: re.Message}
	sc.alertRunEnd(se, re.Step)
}

// sagaResults lists the compensations of the saga in their order, with
// the status each has now (pending: not begun).
func (sc *scheduler) sagaResults() []compResult {
	var out []compResult
	for _, name := range sc.sagaOf().Order {
		st := string(store.StepPending)
		if row := sc.rows[name+compSuffix]; row != nil {
			st = string(row.Status)
		}
		out = append(out, compResult{Step: name, Status: st})
	}
	return out
}

// sagaError is the error a compensation's data sees as error: the run's.
func (sc *scheduler) sagaError() map[string]any {
	if saga := sc.sagaOf(); saga != nil {
		return decodeMap(saga.Error)
	}
	return nil
}

// isComp reports whether a step is a compensation (or the saga).
func isComp(name string) bool { return strings.HasSuffix(name, compSuffix) }

// compensatesOnCancel reports whether a cancel of run runs compensations
// first: a step of its graph with compensate { on_cancel = true }
// completed. The store then leaves the run to a runner, which ends it
// after them (Engine.Cancel).
func (e *Engine) compensatesOnCancel(ctx context.Context, run store.Run) (bool, error) {
	if run.Status.Terminal() {
		return false, nil
	}
	l, err := e.load(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return false, err
	}
	any := false
	for _, s := range l.g.Steps {
		any = any || s.Compensate != nil && s.Compensate.OnCancel
	}
	if !any {
		return false, nil
	}
	tops, err := e.st.StepTops(ctx, run.ID)
	if err != nil {
		return false, fmt.Errorf("read the steps of run %s: %w", run.ID, err)
	}
	for _, row := range tops {
		if s := l.step(row.Step); s != nil && row.Status == store.StepCompleted && s.Compensate != nil && s.Compensate.OnCancel {
			return true, nil
		}
	}
	return false, nil
}

// sagaRunning returns the order of the compensations of run runID when its
// saga has begun and not ended, else nil.
func (e *Engine) sagaRunning(ctx context.Context, runID string) ([]string, error) {
	row, err := e.st.StepGet(ctx, runID, compKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case !row.Status.Terminal() && rowStateOf(row).Saga != nil:
		return rowStateOf(row).Saga.Order, nil
	}
	return nil, nil
}

// cancelKeep names the unfinished runs of root's tree that a cancel of
// root leaves to a runner instead of ending them at once
// (store.RunCancelParams.Keep): those with a compensation to run on a
// cancel (on_cancel) and those whose saga has begun, which runs to its
// end (semantics.md §14; a cancel by request of such a run itself is
// refused before, Cancel).
// A child run is one more level of the same rule, so a child that
// booked something is undone when its parent is canceled, as it would be
// if it were canceled itself.
func (e *Engine) cancelKeep(ctx context.Context, root store.Run) ([]string, error) {
	var keep []string
	err := e.walkTree(ctx, root, func(run store.Run) (bool, error) {
		if run.Status.Terminal() {
			return false, nil // its children ended with it, or on their own
		}
		l, err := e.load(ctx, run.Workflow, run.GraphHash)
		if err != nil {
			return false, err
		}
		if len(l.compensations().steps) == 0 {
			return true, nil
		}
		kept, err := e.compensatesOnCancel(ctx, run)
		if err != nil {
			return false, err
		}
		if !kept {
			order, err := e.sagaRunning(ctx, run.ID)
			if err != nil {
				return false, fmt.Errorf("read the saga of run %s: %w", run.ID, err)
			}
			kept = order != nil
		}
		if kept {
			keep = append(keep, run.ID)
		}
		return true, nil
	})
	return keep, err
}

// walkTree visits root and its descendant runs level by level; visit
// says whether to go on below the run it was given.
func (e *Engine) walkTree(ctx context.Context, root store.Run, visit func(store.Run) (bool, error)) error {
	for level := []store.Run{root}; len(level) > 0; {
		var next []store.Run
		for _, run := range level {
			down, err := visit(run)
			if err != nil {
				return err
			}
			if !down {
				continue
			}
			kids, err := e.st.RunChildren(ctx, run.ID)
			if err != nil {
				return fmt.Errorf("read the child runs of run %s: %w", run.ID, err)
			}
			next = append(next, kids...)
		}
		level = next
	}
	return nil
}

// Canceling lists the runs of rootID's tree that a cancel left to a
// runner (cancelKeep): unfinished, with their cancel requested, each to
// end after the compensations it runs. Drive of rootID claims them.
func (e *Engine) Canceling(ctx context.Context, rootID string) ([]store.Run, error) {
	var out []store.Run
	err := e.walkTree(ctx, store.Run{ID: rootID}, func(run store.Run) (bool, error) {
		if run.ID != rootID && !run.Status.Terminal() && run.CancelRequested {
			out = append(out, run)
		}
		return true, nil
	})
	return out, err
}
