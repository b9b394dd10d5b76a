package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Wait kinds of a waiting step key, kept in its State.
const (
	waitRetry    = "retry"    // backing off before the next attempt
	waitSleep    = "sleep"    // a sleep action's timer
	waitSignal   = "signal"   // a wait action
	waitChild    = "child"    // a workflow action's child run
	waitInterval = "interval" // an until loop between iterations
)

// rowState is the engine's private state of a step key (store.Step.State):
// whatever was decided once and must not be decided again on replay.
type rowState struct {
	Wait      string `json:"wait,omitempty"`
	Signal    string `json:"signal,omitempty"`
	Child     string `json:"child_run_id,omitempty"`
	Iteration int    `json:"iteration,omitempty"` // until: the current iteration
	// Items are a foreach's items, evaluated once (read with itemsOf),
	// unless ItemsInput names the run input they are.
	Items      recordedItems `json:"items,omitempty"`
	ItemsInput string        `json:"items_input,omitempty"`
	Chosen     []string      `json:"chosen,omitempty"` // switch: the targets of the branch taken
	Attempt    int           `json:"next_attempt,omitempty"`
	DelayMS    int64         `json:"delay_ms,omitempty"`  // retry: the backoff drawn
	JitterMS   int64         `json:"jitter_ms,omitempty"` // retry: the jitter drawn
	// Base is the last attempt number before a redrive (Engine.Retry):
	// only failed attempts after it count against the retry budget.
	Base int `json:"base,omitempty"`
	// Interrupts counts the attempts in a row, the latest ones, that were
	// interrupted by the death of their worker (found running when the
	// run was claimed again); at maxInterrupts the step fails with kind
	// "interrupted". An attempt that ends resets it.
	Interrupts int `json:"interrupts,omitempty"`
	// Saga is the saga controller's state (compensate.go).
	Saga *sagaState `json:"saga,omitempty"`
}

// row returns a copy of the step key's row to modify, or a new pending row.
func (sc *scheduler) row(u unit) *store.Step {
	if old := sc.rows[u.key]; old != nil {
		c := *old
		return &c
	}
	return &store.Step{RunID: sc.run.ID, Key: u.key, Step: u.s.Name, Index: u.idx, Iteration: u.iter, Status: store.StepPending}
}

// put records a row's new state, locally and in the transition, with its
// State when st is not nil.
func (sc *scheduler) put(row *store.Step, st *rowState) {
	if st != nil {
		row.State = mustJSON(st)
		sc.states[row.Key] = st
	}
	if !row.Status.Terminal() && row.Key == row.Step {
		// A step open again is no longer in the settled prefix.
		if i, ok := sc.l.g.StepIndex(row.Step); ok && i < sc.settled {
			sc.settled = i
		}
	}
	sc.setRow(row)
	sc.tx.step(stepWrite(row))
}

// unsetRow forgets the runner's row of key, and its entry in top: top must
// not keep a released step's row (and its output) in memory.
func (sc *scheduler) unsetRow(key string) {
	row := sc.rows[key]
	delete(sc.rows, key)
	if row == nil || row.Key != row.Step || sc.top == nil {
		return
	}
	if i, ok := sc.l.g.StepIndex(row.Step); ok && sc.top[i] == row {
		sc.top[i] = nil
	}
}

// setRow makes row the runner's row of its key (and, for a step's
// top-level key, its entry in top).
func (sc *scheduler) setRow(row *store.Step) {
	sc.rows[row.Key] = row
	if row.Key != row.Step {
		return
	}
	if i, ok := sc.l.g.StepIndex(row.Step); ok {
		if sc.top == nil {
			sc.top = make([]*store.Step, len(sc.l.g.Steps))
		}
		sc.top[i] = row
	}
}

// waiting reports whether the step at graph position i has not begun and
// still waits on the unfinished need that stopped it last time, so that
// advance would do nothing with it. It errs towards false (advance then
// decides): a row replaced without setRow is a row decide reads again.
func (sc *scheduler) waiting(i int) bool {
	if sc.waitOn == nil || sc.waitOn[i] == 0 {
		return false
	}
	if q := sc.top[i]; q != nil && q.Status != store.StepPending {
		sc.waitOn[i] = 0
		return false
	}
	j := sc.waitOn[i] - 1
	if p := sc.top[j]; p != nil && p.Status.Terminal() || sc.keep != nil && sc.keep.gone[j] {
		sc.waitOn[i] = 0
		return false
	}
	return true
}

// noteWait records, after advance left the step at graph position i
// without a beginning, which of its needs is unfinished (none: it waits
// for something else, such as a free slot, and is not passed over).
func (sc *scheduler) noteWait(i int) {
	if sc.l.g.Steps[i].Join == "first" {
		return // it begins when any need completes: look at it each time
	}
	if sc.top == nil {
		sc.top = make([]*store.Step, len(sc.l.g.Steps))
	}
	if q := sc.top[i]; q != nil && q.Status != store.StepPending {
		return
	}
	for _, j := range sc.l.g.NeedPositions(i) {
		if sc.keep != nil && sc.keep.gone[j] {
			continue // released: it ended long ago
		}
		if p := sc.top[j]; p == nil || !p.Status.Terminal() {
			if sc.rows[sc.l.g.Steps[j].Name] != p {
				return // top is behind rows: let advance look each time
			}
			if sc.waitOn == nil {
				sc.waitOn = make([]int32, len(sc.l.g.Steps))
			}
			sc.waitOn[i] = j + 1
			return
		}
	}
}

// unit is one executable step key: a step, a foreach item, or an until
// iteration of either.
type unit struct {
	s    *graph.Step
	key  string
	idx  int // foreach index, -1 when none
	iter int // until iteration, -1 when none
	item any
}

// act is the activation of control expressions of a unit (nil: step level).
func (sc *scheduler) act(u *unit) *expr.Activation {
	a := &expr.Activation{Input: sc.inputs, InputFunc: sc.input, Steps: sc.results, Run: sc.info, Cache: sc.conv}
	if u == nil {
		return a
	}
	if u.idx >= 0 {
		a.Item, a.Index, a.InForeach = u.item, u.idx, true
	}
	if u.iter > 0 {
		// Inside iteration n of an until loop, steps.SELF is iteration n-1.
		a.Iteration = u.iter
		if prev := sc.rows[store.StepKey(u.s.Name, u.idx, u.iter-1)]; prev != nil && prev.Status == store.StepCompleted {
			a.Steps = maps.Clone(sc.results)
			a.Steps[u.s.Name] = expr.StepResult{Status: string(prev.Status), Attempts: prev.Attempts, Output: decodeJSON(prev.Output)}
		}
	}
	return a
}

// input returns the run's inputs, decoded from the run and with their
// defaults: r.inputs when the runner holds them, else decoded anew (an
// evaluation asks only when r.conv does not hold the conversion it needs).
func (sc *scheduler) input() map[string]any {
	if sc.inputs != nil {
		return sc.inputs
	}
	in := decodeMap(sc.run.Inputs)
	if in == nil {
		in = map[string]any{}
	}
	fillDefaults(sc.l.g, in)
	return in
}

// dataAct is act plus the secrets, for data templates.
func (sc *scheduler) dataAct(u *unit) *expr.Activation {
	a := sc.act(u)
	a.Secrets = sc.secrets
	if u != nil && isComp(u.key) {
		a.Error = sc.sagaError()
	}
	return a
}

// settleDecodes counts the outputs settle decoded from their JSON, for
// the tests.
var settleDecodes atomic.Int64

// settle makes a finished step visible to CEL as steps.NAME.
func (sc *scheduler) settle(s *graph.Step, row *store.Step) {
	res := expr.StepResult{Status: string(row.Status), Attempts: row.Attempts}
	v, fresh := sc.fresh[s.Name]
	if fresh {
		delete(sc.fresh, s.Name)
	}
	switch {
	case sc.unread(s.Name) || bytes.Equal(row.Output, store.ItemOutputs):
		// Decoded only when something will read it: the output of a
		// foreach of a million items would take far more memory as
		// values than as its JSON.
	case fresh && row.Status == store.StepCompleted:
		res.Output = v // what decoding row.Output gives, kept by unitDoneClean
	default:
		settleDecodes.Add(1)
		res.Output = decodeJSON(row.Output)
	}
	if row.Status == store.StepFailed {
		res.Error = decodeMap(row.Error)
	}
	if _, had := sc.results[s.Name]; !had && sc.keep != nil {
		if i, ok := sc.l.g.StepIndex(s.Name); ok {
			sc.keep.queue = append(sc.keep.queue, int32(i))
		}
	}
	sc.results[s.Name] = res
}

// decide advances every step as far as it goes without waiting, until
// nothing changes; then ends the run when every step has settled.
func (sc *scheduler) decide(ctx context.Context) {
	sc.blocked = false
	if sc.sagaRunning() {
		sc.advanceSaga(ctx)
		return
	}
	steps := sc.l.g.Steps
	// Skip the settled prefix: advance has nothing left to do for a step
	// that ended and was settled, so a decision costs the steps still open,
	// not the length of the graph.
	for sc.settled < len(steps) {
		s := steps[sc.settled]
		if sc.over(s.Name) {
			sc.settled++
			continue
		}
		if row := sc.rows[s.Name]; row == nil || !row.Status.Terminal() {
			break
		}
		if _, ok := sc.results[s.Name]; !ok {
			break
		}
		sc.settled++
	}
	defer sc.compact()
	for changed := true; changed && !sc.ended; {
		changed = false
		for i := sc.settled; i < len(steps); i++ {
			if sc.waiting(i) {
				continue
			}
			s := steps[i]
			if sc.advance(ctx, s) {
				changed = true
			} else {
				sc.noteWait(i)
			}
			if sc.ended {
				return
			}
			if sc.sagaBegun {
				sc.advanceSaga(ctx) // the run failed: compensate
				return
			}
			if len(sc.tx.t.Steps) >= maxTxSteps {
				sc.more = true // commit what is decided, then go on
				return
			}
		}
	}
	if sc.ended {
		return // failed (or ended otherwise) before decide: never complete it
	}
	for _, s := range steps[sc.settled:] {
		if sc.over(s.Name) {
			continue
		}
		if row := sc.rows[s.Name]; row == nil || !row.Status.Terminal() {
			return
		}
	}
	sc.completeRun(ctx)
}

// advance moves one step forward: gates it when it has not begun, then
// drives its foreach, until or single unit, and settles it when it ends.
func (sc *scheduler) advance(ctx context.Context, s *graph.Step) bool {
	if sc.over(s.Name) {
		return false // ended, and nothing reads it any more
	}
	row := sc.rows[s.Name]
	if row != nil && row.Status.Terminal() {
		if _, ok := sc.results[s.Name]; !ok {
			sc.stepEnded(s) // ended outside advance (an action's result)
			return true
		}
		return false
	}
	if row == nil || row.Status == store.StepPending {
		if sc.ev.draining {
			sc.blocked = true // draining: no step begins
			return false
		}
		ready, skip, err := sc.gate(ctx, s)
		if !ready {
			return false
		}
		u := unit{s: s, key: s.Name, idx: -1, iter: -1}
		if err != nil {
			sc.unitFailed(u, err, false)
			sc.stepEnded(s)
			return true
		}
		if skip != "" {
			nr := sc.row(u)
			nr.Status, nr.FinishedAt, nr.Detail = store.StepSkipped, sc.now, skip
			sc.put(nr, nil)
			sc.tx.event("step_skipped", s.Name, map[string]any{"reason": skip})
			sc.stepEnded(s)
			return true
		}
	}
	var changed bool
	if s.Foreach != nil {
		changed = sc.advanceForeach(ctx, s)
	} else {
		changed = sc.advanceNode(ctx, unit{s: s, key: s.Name, idx: -1, iter: -1})
	}
	if row := sc.rows[s.Name]; row != nil && row.Status.Terminal() {
		if _, ok := sc.results[s.Name]; !ok {
			sc.stepEnded(s)
		}
		changed = true
	}
	return changed
}

// gate decides whether a step that has not begun can begin: all its needs
// settled (ready), and if so whether it is skipped (the reason) or its
// when expression failed (err).
func (sc *scheduler) gate(ctx context.Context, s *graph.Step) (ready bool, skip string, err *stepError) {
	sc.gateChecks++
	if s.Join != "first" {
		for _, n := range s.Needs {
			if row := sc.rows[n]; row == nil || !row.Status.Terminal() {
				return false, "", nil
			}
		}
	}
	// The edge from a switch counts as completed when the step is in the
	// branch taken and as skipped otherwise, the edge from a step with
	// catch blocks as catchEdge says; the join rule then decides.
	edge := func(n string) store.StepStatus {
		row := sc.rows[n]
		if row == nil {
			return store.StepPending // join = "first": not begun yet
		}
		st := row.Status
		ns := sc.l.step(n)
		if len(ns.Catch) > 0 && st.Terminal() {
			return sc.catchEdge(n, s.Name, st)
		}
		if st != store.StepCompleted || ns.Action.Kind != graph.KindSwitch {
			return st
		}
		for _, t := range sc.state(n).Chosen {
			if t == s.Name {
				return st
			}
		}
		for _, sw := range sc.l.g.SwitchesTargeting(s.Name) {
			if sw == n {
				return store.StepSkipped
			}
		}
		return st
	}
	if s.Join == "first" && !raceReady(s.Needs, edge) {
		return false, "", nil
	}
	own := func(n string) store.StepStatus {
		if row := sc.rows[n]; row != nil {
			return row.Status
		}
		return store.StepPending
	}
	if skip := joinSkip(s.Join, s.Needs, edge, own, func(n string) string { return sc.catchSkipWhy(n, s.Name) }); skip != "" {
		return true, skip, nil
	}
	if s.Join == "first" {
		sc.cancelLosers(s)
	}
	if s.When != nil {
		v, eerr := sc.l.prog.Eval(ctx, s.When, sc.act(nil))
		if eerr != nil {
			return true, "", &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate when: %v", eerr)}
		}
		if b, ok := v.(bool); ok && !b {
			return true, "when is false", nil
		}
	}
	return true, "", nil
}

// stepEnded settles a step that just reached a terminal status and fails
// the run when the step failed and does not continue on error.
func (sc *scheduler) stepEnded(s *graph.Step) {
	row := sc.rows[s.Name]
	if row.Status == store.StepFailed && len(s.Catch) > 0 && sc.tryCatch(s, row) {
		sc.settle(s, sc.rows[s.Name])
		return
	}
	sc.settle(s, row)
	if row.Status != store.StepFailed {
		return
	}
	se := &stepError{}
	_ = json.Unmarshal(row.Error, se)
	if se.Kind == "" {
		se.Kind = "internal"
	}
	if s.OnError == "continue" && s.Action.Kind != graph.KindFail {
		return
	}
	sc.failRun(se, s.Name)
}

// advanceNode drives a unit or, for a step with until, its loop.
func (sc *scheduler) advanceNode(ctx context.Context, u unit) bool {
	if u.s.Until != nil {
		return sc.advanceUntil(ctx, u)
	}
	return sc.advanceUnit(ctx, u)
}

// advanceUntil drives the loop whose controller row is c.key: iterations
// c.key#0, #1, ... until the condition, evaluated with steps.SELF.output =
// the latest iteration's output, is true.
func (sc *scheduler) advanceUntil(ctx context.Context, c unit) bool {
	changed := false
	row := sc.rows[c.key]
	if row == nil || row.Status == store.StepPending {
		row = sc.row(c)
		row.Status, row.StartedAt = store.StepRunning, sc.now
		sc.put(row, &rowState{})
		changed = true
	}
	for {
		row = sc.rows[c.key]
		if row.Status.Terminal() {
			return changed
		}
		st := sc.state(c.key)
		if row.Status == store.StepWaiting {
			if sc.now.Before(row.WakeAt) {
				return changed
			}
			row = sc.row(c)
			row.Status, row.WakeAt, row.Detail = store.StepRunning, zeroTime, ""
			nst := *st
			nst.Wait = ""
			sc.put(row, &nst)
			st = &nst
			changed = true
		}
		u := unit{s: c.s, key: store.StepKey(c.s.Name, c.idx, st.Iteration), idx: c.idx, iter: st.Iteration, item: c.item}
		if sc.advanceUnit(ctx, u) {
			changed = true
		}
		urow := sc.rows[u.key]
		if urow == nil || !urow.Status.Terminal() {
			return changed
		}
		row = sc.row(c)
		row.Attempts += urow.Attempts
		if urow.Status == store.StepFailed {
			row.Status, row.Error, row.Output, row.FinishedAt = store.StepFailed, urow.Error, urow.Output, sc.now
			sc.put(row, nil)
			sc.tx.event("step_failed", c.key, map[string]any{"iteration": st.Iteration})
			return true
		}
		done, err := sc.untilCond(ctx, c, urow)
		nst := *st
		switch {
		case err != nil:
			row.Status, row.Error, row.FinishedAt = store.StepFailed, mustJSON(err), sc.now
			sc.put(row, nil)
			sc.tx.event("step_failed", c.key, map[string]any{"error": err})
			return true
		case done:
			row.Status, row.Output, row.FinishedAt = store.StepCompleted, urow.Output, sc.now
			sc.put(row, nil)
			sc.tx.event("step_completed", c.key, map[string]any{"iterations": st.Iteration + 1})
			return true
		case st.Iteration+1 >= c.s.Until.MaxIterations:
			e := &stepError{Kind: "until_exhausted", Message: fmt.Sprintf("the until condition was still false after %d iterations; raise max_iterations or fix the condition", st.Iteration+1)}
			// The step keeps the last iteration's output, as a failed
			// iteration's does: on_error = "continue" can report it.
			row.Status, row.Error, row.Output, row.FinishedAt = store.StepFailed, mustJSON(e), urow.Output, sc.now
			sc.put(row, nil)
			sc.tx.event("step_failed", c.key, map[string]any{"error": e})
			return true
		}
		nst.Iteration++
		// Only the iteration that just ended is read again (steps.SELF of
		// the next one): drop the one before it.
		sc.forget(store.StepKey(c.s.Name, c.idx, st.Iteration-1))
		if c.s.Until.IntervalMS > 0 {
			row.Status = store.StepWaiting
			row.WakeAt = sc.now.Add(msDuration(c.s.Until.IntervalMS))
			row.Detail = fmt.Sprintf("until: iteration %d", nst.Iteration+1)
			nst.Wait = waitInterval
			sc.put(row, &nst)
			return true
		}
		sc.put(row, &nst)
		changed = true
		if len(sc.tx.t.Steps) >= maxTxSteps {
			return true // the next decide runs the next iteration
		}
	}
}

// untilCond evaluates a loop's condition with steps.SELF showing the
// iteration that just completed.
func (sc *scheduler) untilCond(ctx context.Context, c unit, urow *store.Step) (bool, *stepError) {
	name := c.s.Name
	prev, had := sc.results[name]
	sc.results[name] = expr.StepResult{Status: string(store.StepCompleted), Attempts: urow.Attempts, Output: decodeJSON(urow.Output)}
	a := sc.act(&c)
	a.Iteration = urow.Iteration
	v, err := sc.l.prog.Eval(ctx, c.s.Until.Cond, a)
	if had {
		sc.results[name] = prev
	} else {
		delete(sc.results, name)
	}
	if err != nil {
		return false, &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate until: %v", err)}
	}
	b, _ := v.(bool)
	return b, nil
}

// skippedRead returns a step that was skipped and whose output the
// expression text reads ("" when none): a null where a value was expected
// is then the skip's doing, and the error says so.
func (sc *scheduler) skippedRead(cel string) string {
	for name, row := range sc.rows {
		if row != nil && row.Status == store.StepSkipped && row.Key == name && strings.Contains(cel, "steps."+name+".output") {
			return name
		}
	}
	return ""
}

// maxTxSteps bounds the step writes of one transition. Steps without side
// effects (set, switch, skips) finish in the transition that starts them,
// so a long chain of them would otherwise be decided, held and committed
// as one transition of every step. Past the bound decide stops between two
// steps and the runner commits and decides again at once: each commit is
// still a state the run is rebuilt from (a step either ended in it or has
// not begun), and no step costs more than one commit.
const maxTxSteps = 256
