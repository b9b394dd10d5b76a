package interp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

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

// forget drops a finished step key that no later decision reads (an until
// iteration older than the latest one) from the runner's maps, so memory
// does not grow with the run's history. Its rows stay in the store.
func (sc *scheduler) forget(key string) {
	if row := sc.rows[key]; row == nil || !row.Status.Terminal() {
		return
	}
	sc.unsetRow(key)
	delete(sc.states, key)
	delete(sc.lastAtt, key)
	delete(sc.failures, key)
	delete(sc.noted, key)
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
	if u != nil {
		a.Run.Attempt = sc.lastAtt[u.key] + 1
	}
	return a
}

// settle makes a finished step visible to CEL as steps.NAME.
func (sc *scheduler) settle(s *graph.Step, row *store.Step) {
	res := expr.StepResult{Status: string(row.Status), Attempts: row.Attempts}
	if !sc.unread(s.Name) && !bytes.Equal(row.Output, store.ItemOutputs) {
		// Decoded only when something will read it: the output of a
		// foreach of a million items would take far more memory as
		// values than as its JSON.
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

// maxTxSteps bounds the step writes of one transition. Steps without side
// effects (set, switch, skips) finish in the transition that starts them,
// so a long chain of them would otherwise be decided, held and committed
// as one transition of every step. Past the bound decide stops between two
// steps and the runner commits and decides again at once: each commit is
// still a state the run is rebuilt from (a step either ended in it or has
// not begun), and no step costs more than one commit.
const maxTxSteps = 256

// keep tracks which finished steps later decisions still read, so that
// the runner holds the rows and results of the steps still open or still
// read, not of the whole run: a long run's memory follows what is live.
// A finished step is read by the steps that need it (their gate and their
// expressions: a compiled graph lists every step an expression reads among
// the reader's Needs) and by the workflow outputs. Once every step that
// needs it has settled and no output reads it, its row, result and state
// are dropped from the runner's maps, with the rows of its foreach items
// and until iterations; only its terminal status is kept. Its rows stay in
// the store, and a rebuild drops them again the same way.
type keep struct {
	readers []int32 // per step (graph order): unsettled readers; +1 when an output reads it
	gone    []bool  // per step: dropped from the maps (it ended)
	queue   []int32 // steps settled since the last compact
}

// unread reports whether nothing reads step name's result any more: no
// step that has not settled needs it and no workflow output reads it
// (the keep's count; false while there is no keep).
func (sc *scheduler) unread(name string) bool {
	if sc.keep == nil {
		return false
	}
	i, ok := sc.l.g.StepIndex(name)
	return ok && sc.keep.readers[i] <= 0
}

// readAtAll reports whether any step or workflow output of the graph
// reads step name's result, settled or not (unread is the count of those
// still to come). It does not change while the runner lives: a runner
// loads one graph.
func (sc *scheduler) readAtAll(name string) bool {
	for _, s := range sc.l.g.Steps {
		if slices.Contains(s.Needs, name) {
			return true
		}
	}
	return slices.Contains(sc.l.prog.OutputReads(), name)
}

// over reports whether step name ended and was dropped from the maps.
func (sc *scheduler) over(name string) bool {
	if sc.keep == nil {
		return false
	}
	i, ok := sc.l.g.StepIndex(name)
	return ok && sc.keep.gone[i]
}

// newKeep counts the readers of every step of the graph.
func (sc *scheduler) newKeep() *keep {
	n := len(sc.l.g.Steps)
	k := &keep{readers: make([]int32, n), gone: make([]bool, n)}
	read := func(name string) {
		if i, ok := sc.l.g.StepIndex(name); ok {
			k.readers[i]++
		}
	}
	for _, s := range sc.l.g.Steps {
		for _, need := range s.Needs {
			read(need)
		}
	}
	for _, name := range sc.l.prog.OutputReads() {
		read(name)
	}
	// Every step already settled (a rebuild settles what the store holds)
	// releases its needs at the first compact.
	for name := range sc.results {
		if i, ok := sc.l.g.StepIndex(name); ok {
			k.queue = append(k.queue, int32(i))
		}
	}
	return k
}

// compact drops the finished steps that no later decision reads (see keep).
func (sc *scheduler) compact() {
	if sc.keep == nil {
		sc.keep = sc.newKeep()
	}
	k := sc.keep
	q := k.queue
	k.queue = nil
	steps := sc.l.g.Steps
	for _, i := range q {
		for _, need := range steps[i].Needs {
			if j, ok := sc.l.g.StepIndex(need); ok {
				k.readers[j]--
				sc.release(j)
			}
		}
		sc.release(int(i))
	}
}

// release drops step i (in graph order) when it ended, was settled, and
// nothing reads it any more.
func (sc *scheduler) release(i int) {
	k := sc.keep
	if k.gone[i] || k.readers[i] > 0 {
		return
	}
	s := sc.l.g.Steps[i]
	row := sc.rows[s.Name]
	if row == nil || !row.Status.Terminal() {
		return
	}
	if _, ok := sc.results[s.Name]; !ok {
		return
	}
	if s.Foreach != nil || s.Until != nil {
		// Its items' and iterations' rows were read only while it ran.
		for key, sub := range sc.rows {
			if sub.Step == s.Name && key != s.Name && sub.Status.Terminal() {
				sc.drop(key)
			}
		}
	}
	sc.drop(s.Name)
	delete(sc.results, s.Name)
	if sc.conv != nil {
		sc.conv.ForgetStep(s.Name)
	}
	k.gone[i] = true
}

// drop removes a step key from the runner's maps (its rows stay in the
// store).
func (sc *scheduler) drop(key string) {
	sc.unsetRow(key)
	delete(sc.states, key)
	delete(sc.lastAtt, key)
	delete(sc.failures, key)
	delete(sc.noted, key)
}

// decide advances every step as far as it goes without waiting, until
// nothing changes; then ends the run when every step has settled.
func (sc *scheduler) decide(ctx context.Context) {
	sc.blocked = false
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
		if sc.draining {
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
	for _, n := range s.Needs {
		if row := sc.rows[n]; row == nil || !row.Status.Terminal() {
			return false, "", nil
		}
	}
	// The edge from a switch counts as completed when the step is in the
	// branch taken and as skipped otherwise; the join rule then decides.
	edge := func(n string) store.StepStatus {
		st := sc.rows[n].Status
		if st != store.StepCompleted || sc.l.step(n).Action.Kind != graph.KindSwitch {
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
	if skip := joinSkip(s.Join, s.Needs, edge, func(n string) store.StepStatus { return sc.rows[n].Status }); skip != "" {
		return true, skip, nil
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

// advanceForeach drives a foreach step: the items are evaluated once and
// recorded; items run as units (or until loops) name[i], at most
// Foreach.Concurrency at once; the step completes with the list of item
// outputs once every item ended.
func (sc *scheduler) advanceForeach(ctx context.Context, s *graph.Step) bool {
	base := unit{s: s, key: s.Name, idx: -1, iter: -1}
	row := sc.rows[s.Name]
	if row == nil || row.Status == store.StepPending {
		st, n, err := sc.evalItems(ctx, s)
		if err != nil {
			sc.unitFailed(base, &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate foreach items: %v", err)}, false)
			return true
		}
		row = sc.row(base)
		row.Status, row.StartedAt = store.StepRunning, sc.now
		if n == 0 {
			row.Status, row.Output, row.FinishedAt = store.StepCompleted, json.RawMessage("[]"), sc.now
			sc.put(row, nil)
			sc.tx.event("step_completed", s.Name, map[string]any{"items": 0})
			return true
		}
		sc.put(row, st)
		st.Items = nil // the row's State holds them: itemsOf reads them there
		sc.tx.event("step_started", s.Name, map[string]any{"items": n})
	}
	c, err := sc.cursor(s)
	if err != nil {
		sc.unitFailed(base, &stepError{Kind: "internal", Message: fmt.Sprintf("reading the recorded foreach items: %v", err)}, false)
		return true
	}
	items := c.items
	conc := max(s.Foreach.Concurrency, 1)
	active := 0
	for i := c.done; i < c.next; i++ {
		if ir := sc.rows[store.StepKey(s.Name, i, -1)]; ir != nil && ir.Status != store.StepPending && !ir.Status.Terminal() {
			active++
		}
	}
	changed, allDone := false, true
	for i := c.done; i < items.len(); i++ {
		if changed && len(sc.tx.t.Steps) >= maxTxSteps {
			sc.fold(s, c)
			return true // the next decide goes on with the items left
		}
		key := store.StepKey(s.Name, i, -1)
		ir := sc.rows[key]
		if ir == nil || !ir.Status.Terminal() {
			was := ir != nil && ir.Status != store.StepPending
			if !was && active >= conc {
				allDone = false
				if i >= c.next {
					break // no item after it has begun either
				}
				continue
			}
			if sc.advanceNode(ctx, unit{s: s, key: key, idx: i, iter: -1, item: items.at(i)}) {
				changed = true
			}
			ir = sc.rows[key]
			if ir == nil {
				// It could not begin (a drain, the run's parallel limit, the
				// attempt cap): no item after it begins now either.
				allDone = false
				break
			}
			if i >= c.next {
				c.next = i + 1
			}
			is := ir.Status != store.StepPending && !ir.Status.Terminal()
			if was && !is {
				active--
			} else if !was && is {
				active++
			}
			if !ir.Status.Terminal() {
				allDone = false
				continue
			}
		}
		if sc.noted[key] {
			continue
		}
		sc.noted[key] = true
		if ir.Status != store.StepFailed {
			continue
		}
		switch s.Foreach.OnFailure {
		case "continue":
		case "dead_letter":
			sc.deadLetter(s.Name, key, i, items.at(i), ir.Error)
		default:
			ie := &stepError{}
			_ = json.Unmarshal(ir.Error, ie)
			ie.Message = fmt.Sprintf("item %d failed: %s", i, ie.Message)
			sc.cancelStepKeys(s.Name)
			sc.unitFailed(base, ie, false)
			delete(sc.fe, s.Name)
			return true
		}
	}
	sc.fold(s, c)
	if !allDone || sc.ended || c.done < items.len() {
		return changed
	}
	row = sc.row(base)
	row.Attempts = c.attempts
	out := store.ItemOutputs
	if c.read {
		addOut(c, "]")
		out = json.RawMessage(c.out)
	}
	row.Status, row.Output, row.FinishedAt = store.StepCompleted, out, sc.now
	delete(sc.fe, s.Name)
	sc.put(row, nil)
	sc.tx.event("step_completed", s.Name, map[string]any{"items": items.len()})
	return true
}

// feCursor is the runner's place in a foreach step's items, so that a
// decision costs the items in flight, not the items done (memory and time
// of a long foreach do not grow with the items that ended). It is not
// stored: a runner makes it again from the rows it loaded.
//
// Items begin in index order, so the items that never began are a suffix
// [next, n) without rows. The items [0, done) ended, were handled (a
// failure noted, a dead letter queued) and are folded: their outputs are
// in out and their attempts in attempts, and their rows were dropped from
// the runner's maps (they stay in the store).
//
// Only a foreach whose output an expression of the run reads (read) builds
// its output as it folds: the step needs it as a value once it ends.
// Otherwise the item rows are the output: the step's row is written with
// store.ItemOutputs and the store assembles the list when the row is read
// (show, a later rebuild), so the foreach holds nothing that grows with
// the items done.
type feCursor struct {
	items      *feItems
	done, next int
	attempts   int
	read       bool
	out        []byte // read: "[" and the folded items' outputs, comma-separated (see grow)
}

// cursor returns the cursor of foreach step s, making it from the items
// its row recorded and the rows the runner holds the first time.
func (sc *scheduler) cursor(s *graph.Step) (*feCursor, error) {
	if c := sc.fe[s.Name]; c != nil {
		return c, nil
	}
	items, err := itemsOf(sc.rows[s.Name].State, sc.run.Inputs)
	if err != nil {
		return nil, err
	}
	c := &feCursor{items: items, next: items.len(), read: sc.readAtAll(s.Name)}
	for c.next > 0 && sc.rows[store.StepKey(s.Name, c.next-1, -1)] == nil {
		c.next--
	}
	if c.read {
		addOut(c, "[")
	}
	if sc.fe == nil {
		sc.fe = map[string]*feCursor{}
	}
	sc.fe[s.Name] = c
	return c, nil
}

// evalItems evaluates the items of foreach step s once, redacted, and
// returns the State that records them and their number. Items that are
// exactly a run input's list holding no secret are recorded as the
// input's name: the run's stored inputs hold them already, and the list is
// never decoded whole (a decoded million-item list takes tens of bytes an
// item, and the inputs do not change). Any other items are recorded as
// their JSON.
func (sc *scheduler) evalItems(ctx context.Context, s *graph.Step) (*rowState, int, error) {
	if name, ok := inputRef(s.Foreach.Items.CEL); ok {
		if raw, ok := jsonField(sc.run.Inputs, name); ok && !sc.red.holdsBytes(raw) {
			if it, err := indexItems(raw); err == nil {
				return &rowState{ItemsInput: name}, it.len(), nil
			}
		}
	}
	v, err := sc.l.prog.Eval(ctx, s.Foreach.Items, sc.act(nil))
	if err != nil {
		return nil, 0, err
	}
	// Items are stored (and seen by the item's action) redacted.
	c := sc.red.clean(v)
	items, ok := c.([]any)
	if !ok && c == nil {
		if n := sc.skippedRead(s.Foreach.Items.CEL); n != "" {
			return nil, 0, &expr.SkippedReadError{Step: n}
		}
	}
	if !ok {
		return nil, 0, fmt.Errorf("items gave %s, not a list", describe(c))
	}
	return &rowState{Items: recordedItems(mustJSON(items))}, len(items), nil
}

// grow makes room in the step's output for k more bytes. The output is
// the one part of a foreach's memory that grows with its items. Grown by
// doubling alone, it would end holding up to twice its length; here it
// grows to the length that the items folded so far project for all of
// them and a sixteenth more, yet by no more than doubling (a projection
// from a few large first outputs may be far too high) and by at least a
// quarter: it ends about as long as the output.
func (c *feCursor) grow(k int) {
	need := len(c.out) + k
	if need <= cap(c.out) {
		return
	}
	want := need
	if c.done > 0 {
		want += len(c.out) / c.done * (c.items.len() - c.done)
	}
	want += want / 16
	want = min(want, 2*cap(c.out))
	want = max(want, need, cap(c.out)+cap(c.out)/4, 64)
	out := make([]byte, len(c.out), want)
	copy(out, c.out)
	c.out = out
}

// addOut appends b to the cursor's output.
func addOut[T ~string | ~[]byte](c *feCursor, b T) {
	c.grow(len(b))
	c.out = append(c.out, b...)
}

// fold moves the cursor's done past the leading items that ended and
// were handled, appending their outputs (null for an item that did not
// complete) and dropping their rows from the runner's maps.
func (sc *scheduler) fold(s *graph.Step, c *feCursor) {
	for c.done < c.next {
		key := store.StepKey(s.Name, c.done, -1)
		ir := sc.rows[key]
		if ir == nil || !ir.Status.Terminal() || !sc.noted[key] {
			return
		}
		if c.read {
			if c.done > 0 {
				addOut(c, ",")
			}
			// store.ItemOutputs assembles the same list (sqlrow.StepCols).
			if ir.Status == store.StepCompleted && len(ir.Output) > 0 {
				addOut(c, ir.Output)
			} else {
				addOut(c, "null")
			}
		}
		c.attempts += ir.Attempts
		if s.Until != nil {
			// The loop's last iterations are all it still held.
			it := sc.state(key).Iteration
			sc.drop(store.StepKey(s.Name, c.done, it))
			sc.drop(store.StepKey(s.Name, c.done, it-1))
		}
		sc.drop(key)
		c.done++
	}
}

// cancelStepKeys stops every unfinished key of a step (foreach items,
// iterations) other than the step's own row: their actions are killed and
// they are written canceled.
func (sc *scheduler) cancelStepKeys(name string) {
	for key, f := range sc.inFlight {
		if f.u.s.Name == name {
			sc.abandon(key, f, store.AttemptCanceled, store.StepCanceled)
		}
	}
	for _, row := range sc.rows {
		if row.Step == name && row.Key != name && !row.Status.Terminal() && row.Status != store.StepPending {
			c := *row
			c.Status, c.FinishedAt, c.WakeAt = store.StepCanceled, sc.now, zeroTime
			sc.put(&c, nil)
		}
	}
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
