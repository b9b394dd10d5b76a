package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
)

var zeroTime time.Time

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// stepError is the error of a step key or an attempt, as stored and as CEL
// sees it (error in retry.when, steps.NAME.error).
type stepError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Type is the problem type (RFC 9457): the URI a fail step gave, else
	// the kind's (problemType). Title, Detail and Instance are set only
	// by a fail step; Status by an http error or a fail step.
	Type     string `json:"type,omitempty"`
	Title    string `json:"title,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Status   *int   `json:"status,omitempty"`
	// Output is what the failed attempt produced (exec: exit_code, stdout,
	// stderr, json; http: the response). It is not part of the error: it
	// is stored as the attempt's output and, when the step fails, as the
	// step's output (language.md §11).
	Output     any `json:"-"`
	ChildError any `json:"child_error,omitempty"`
	// RetryWhenError is why retry.when could not be evaluated on this
	// error, so the step was not retried (semantics.md §6 rule 2): shown
	// on the step by show, not only in the logs.
	RetryWhenError string `json:"retry_when_error,omitempty"`
	// Caught says a catch of the step took this error (the step is
	// failed, the run goes on along the catch's next).
	Caught bool `json:"caught,omitempty"`
}

func (e *stepError) asMap() map[string]any {
	m, _ := normalizeJSON(e).(map[string]any)
	return m
}

// advanceUnit moves one executable step key forward.
func (sc *scheduler) advanceUnit(ctx context.Context, u unit) bool {
	if sc.ended {
		return false // the run ended in this transition: start nothing
	}
	row := sc.rows[u.key]
	switch {
	case row == nil || row.Status == store.StepPending:
		return sc.startUnit(ctx, u)
	case row.Status == store.StepWaiting:
		return sc.pollUnit(ctx, u, row)
	}
	return false // running (in flight) or ended
}

// startUnit begins a unit's action. Actions without side effects complete
// (or start waiting) in this same transition; exec and http launch an
// attempt.
func (sc *scheduler) startUnit(ctx context.Context, u unit) bool {
	if sc.ev.draining {
		sc.blocked = true // draining: no new step key of any kind starts
		return false
	}
	a := &u.s.Action
	switch a.Kind {
	case graph.KindExec, graph.KindHTTP:
		return sc.launch(ctx, u)
	case graph.KindWorkflow:
		return sc.startChild(ctx, u)
	}
	if !sc.useAttempt(u) {
		return true
	}
	switch a.Kind {
	case graph.KindNone:
		sc.unitDone(u, nil, 1)
	case graph.KindSet:
		out := make(map[string]any, len(a.Set.Values))
		for _, nv := range a.Set.Values {
			name, v := nv.Name, nv.Value
			x, err := sc.evalValue(ctx, v, sc.dataAct(&u))
			if err != nil {
				sc.unitFailed(u, &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate set value %q: %v", name, err)}, false)
				return true
			}
			out[name] = x
		}
		if se := sc.setOutputError(out); se != nil {
			sc.unitFailed(u, se, false)
			return true
		}
		sc.unitDone(u, out, 1)
	case graph.KindSwitch:
		return sc.startSwitch(ctx, u)
	case graph.KindFail:
		sc.unitFailed(u, sc.raise(ctx, u, a.Fail), false)
	case graph.KindSleep:
		return sc.startSleep(ctx, u)
	case graph.KindWait:
		return sc.startWait(u)
	default:
		sc.unitFailed(u, &stepError{Kind: "internal", Message: fmt.Sprintf("unknown action kind %q; this graph needs a newer flowrun", a.Kind)}, false)
	}
	return true
}

// pollUnit checks whether what a waiting unit waits for has come.
func (sc *scheduler) pollUnit(ctx context.Context, u unit, row *store.Step) bool {
	st := sc.state(u.key)
	switch st.Wait {
	case waitRetry, waitBreaker:
		if sc.now.Before(row.WakeAt) {
			return false
		}
		if u.s.Action.Kind == graph.KindWorkflow {
			return sc.startChild(ctx, u) // a retry is a new child run
		}
		return sc.launch(ctx, u)
	case waitSleep:
		if sc.now.Before(row.WakeAt) {
			return false
		}
		sc.unitDone(u, map[string]any{"woke_at": sc.now.UTC().Format(time.RFC3339Nano)}, 1)
		return true
	case waitSignal:
		// A wait with a timeout takes only a signal stored by then: the
		// outcome does not depend on when a process next looks at the run.
		if payload, ok := sc.consume(u.key, st.Signal, row.WakeAt); ok {
			sc.signalDone(u, st.Signal, payload)
			return true
		}
		if !row.WakeAt.IsZero() && !sc.now.Before(row.WakeAt) {
			sc.unitFailed(u, &stepError{Kind: "timeout", Message: fmt.Sprintf("no signal %q arrived before the wait timed out", st.Signal)}, false)
			return true
		}
	case waitChild:
		c, ok := sc.children[st.Child]
		if !ok || !c.Status.Terminal() {
			if row.WakeAt.IsZero() || sc.now.Before(row.WakeAt) {
				return false
			}
			// The step's timeout passed: the child is canceled once this
			// failure is committed (semantics.md §7).
			sc.afterEnd = append(sc.afterEnd, st.Child)
			sc.unitFailed(u, &stepError{Kind: "timeout", Message: fmt.Sprintf("child run %s of workflow %q did not finish within the step's timeout of %s and was canceled; raise the step's timeout if it needs longer", st.Child, u.s.Action.Workflow.Name, msDuration(u.s.TimeoutMS))}, true)
			return true
		}
		if c.Status == store.RunCompleted {
			sc.unitDone(u, decodeJSON(c.Outputs), 1)
			return true
		}
		ce := decodeMap(c.Error)
		msg, _ := ce["message"].(string)
		sc.unitFailed(u, &stepError{Kind: "child", Message: fmt.Sprintf("child run %s of workflow %q %s: %s", c.ID, c.Workflow, c.Status, msg), ChildError: ce}, true)
		return true
	}
	return false
}

// unitDone writes a unit completed with its output.
func (sc *scheduler) unitDone(u unit, out any, attempts int) {
	v, b := sc.red.cleanJSON(out)
	sc.unitDoneClean(u, v, b, attempts)
}

// unitDoneClean is unitDone of an output already cleaned (v) and encoded
// (b) by redactor.cleanJSON. A step's own key keeps v for settle, which
// would otherwise decode b to the same value.
func (sc *scheduler) unitDoneClean(u unit, v any, b json.RawMessage, attempts int) {
	row := sc.row(u)
	if row.StartedAt.IsZero() {
		row.StartedAt = sc.now
	}
	if u.key == u.s.Name {
		if sc.fresh == nil {
			sc.fresh = map[string]any{}
		}
		sc.fresh[u.key] = v
	}
	row.Status, row.Output, row.Error, row.FinishedAt = store.StepCompleted, b, nil, sc.now
	row.WakeAt, row.Detail = zeroTime, ""
	if row.Attempts < attempts {
		row.Attempts = attempts
	}
	sc.put(row, nil)
	sc.tx.event("step_completed", u.key, map[string]any{"attempts": row.Attempts})
}

// neverRetried are the error kinds no retry policy retries (semantics.md
// §6 rule 1), whichever way the error came: the same attempt would give
// the same error (an http body over limits.output_bytes), or the run is
// ending. An attempt's end, a mock's included, checks its kind here.
var neverRetried = map[string]bool{"signal": true, "expression": true, "secret": true, "until_exhausted": true,
	"fail": true, "deadline": true, "canceled": true, "attempt_cap": true, "output_limit": true, "interrupted": true,
	"concurrency": true}

// unitFailed ends a unit as failed, or schedules its next attempt when
// retryable (and the error's kind is not one never retried) and its retry
// policy allows.
func (sc *scheduler) unitFailed(u unit, se *stepError, retryable bool) {
	retryable = retryable && !neverRetried[se.Kind]
	se.Message = sc.red.text(se.Message)
	if se.Type == "" {
		se.Type = problemType(se.Kind)
	}
	if se.Output != nil {
		se.Output = sc.red.clean(se.Output)
	}
	if se.Kind == "timeout" {
		sc.alert("timed_out", u.key, se.Message)
	}
	var past *stepError // the next attempt would begin after the deadline
	if retryable {
		var again bool
		if again, past = sc.scheduleRetry(u, se); again {
			return
		}
	}
	row := sc.row(u)
	if row.StartedAt.IsZero() {
		row.StartedAt = sc.now
	}
	if row.Attempts == 0 {
		row.Attempts = 1
	}
	row.Status, row.Error, row.FinishedAt, row.WakeAt, row.Detail = store.StepFailed, mustJSON(se), sc.now, zeroTime, ""
	row.Output = nil
	if se.Output != nil {
		row.Output = mustJSON(se.Output) // the last attempt's output
	}
	sc.put(row, nil)
	ev := map[string]any{"kind": se.Kind, "message": se.Message, "type": se.Type, "attempts": row.Attempts}
	se.problemFields(ev)
	sc.tx.event("step_failed", u.key, ev)
	if past != nil {
		sc.failRun(past, u.key)
	}
}

// scheduleRetry puts a unit into backoff when its policy gives it another
// attempt: attempts left, retry.when true, and the next attempt would begin
// before the run's deadline. The drawn delay and jitter are recorded in the
// step's State and the retry_scheduled event, so they are never redrawn.
// When the retry would begin at or after the deadline it schedules nothing
// and returns the deadline error the run must fail with (semantics.md §6
// rule 4); the caller fails the step first, then the run.
func (sc *scheduler) scheduleRetry(u unit, se *stepError) (bool, *stepError) {
	rp := u.s.Retry
	n, next := sc.failures[u.key], sc.lastAtt[u.key]+1
	if u.s.Action.Kind == graph.KindWorkflow {
		// A workflow step keeps no attempt rows: its row counts the child
		// runs it started, each of which failed.
		n = sc.row(u).Attempts
		next = n + 1
	}
	if rp == nil || n >= rp.Attempts {
		return false, nil
	}
	if rp.When != nil {
		a := sc.act(&u)
		a.Error = se.asMap()
		v, err := sc.l.prog.Eval(context.Background(), rp.When, a)
		if err != nil {
			sc.tx.event("retry_when_failed", u.key, map[string]any{"message": err.Error()})
			se.RetryWhenError = sc.red.text(err.Error())
			return false, nil
		}
		if b, ok := v.(bool); !ok || !b {
			return false, nil
		}
	}
	jitter := sc.out.jitter(rp.JitterMS + 1)
	delay, wake, ok := retryWake(rp, n, jitter, sc.now, sc.run.DeadlineAt)
	if !ok {
		return false, &stepError{Kind: "deadline", Message: fmt.Sprintf("step %s failed (%s) and its next attempt would begin after the run's deadline (%s)", u.key, se.Message, sc.run.DeadlineAt.UTC().Format(time.RFC3339))}
	}
	row := sc.row(u)
	row.Status, row.Error, row.WakeAt = store.StepWaiting, mustJSON(se), wake
	row.Detail = fmt.Sprintf("retry %d/%d", n+1, rp.Attempts)
	sc.put(row, &rowState{Wait: waitRetry, Attempt: next, DelayMS: delay, JitterMS: jitter, Base: sc.state(u.key).Base})
	sc.tx.event("retry_scheduled", u.key, map[string]any{
		"attempt": next, "delay_ms": delay, "jitter_ms": jitter,
		"wake_at": wake.UTC().Format(time.RFC3339Nano), "kind": se.Kind, "message": se.Message,
	})
	return true, nil
}

// launch commits a running attempt of an exec or http unit (double-ended
// write: the action starts only after this transition commits).
func (sc *scheduler) launch(ctx context.Context, u unit) bool {
	if sc.ev.draining || len(sc.inFlight) >= max(sc.l.g.Limits.Parallel, 1) {
		sc.blocked = true
		return false
	}
	st := sc.state(u.key)
	if st.Interrupts >= maxInterrupts {
		sc.unitFailed(u, &stepError{Kind: "interrupted", Message: fmt.Sprintf("step %s was interrupted %d times in a row: the worker running it stopped (killed, out of memory, or its lease lost) before each attempt finished; fix what stops it and retry the run", u.key, st.Interrupts)}, false)
		return true
	}
	pass, refused := sc.breakerGate(ctx, u)
	if !pass && refused == nil {
		return true // parked on its breaker, no attempt used
	}
	if !sc.capLeft(u) {
		return true
	}
	if refused != nil {
		sc.refuseAttempt(u, refused)
		return true
	}
	f, se := sc.prepare(ctx, u)
	if se != nil {
		sc.unitFailed(u, se, false)
		return true
	}
	n := sc.lastAtt[u.key] + 1
	sc.lastAtt[u.key] = n
	sc.useAttempt(u)
	f.attempt = n
	row := sc.row(u)
	if row.StartedAt.IsZero() {
		row.StartedAt = sc.now
	}
	row.Status, row.Attempts, row.WakeAt, row.Detail = store.StepRunning, n, zeroTime, ""
	sc.put(row, &rowState{Base: st.Base, Interrupts: st.Interrupts})
	sc.tx.attempt(store.AttemptWrite{StepKey: u.key, Attempt: n, Status: store.AttemptRunning, Owner: sc.owner, StartedAt: sc.now, IdempotencyKey: f.idem})
	sc.tx.event("step_started", u.key, map[string]any{"attempt": n})
	sc.inFlight[u.key] = f
	sc.launches = append(sc.launches, f)
	return true
}

// maxInterrupts is how many attempts of one step key in a row may be
// interrupted by the death of their worker (found running when the run is
// claimed again) before the step fails with kind "interrupted" instead of
// running again (semantics.md §12): a step that kills its worker (out of
// memory, a crash it causes) would otherwise be run again for ever. It is
// far above what kills at random instants do to one step (the crash
// proofs kill an apply up to 20 times, several times in a row at the same
// point of a run): a kill must not change a run's outcome.
const maxInterrupts = 10

// capLeft reports whether the run may start one more attempt under
// limits.attempts; when it may not, it fails the run with kind
// attempt_cap, naming u's step.
func (sc *scheduler) capLeft(u unit) bool {
	if isComp(u.key) {
		// The cap bounds the run's own steps; the compensations that undo
		// them run even when it ended the run (semantics.md §14).
		return true
	}
	if lim := sc.l.g.Limits.Attempts; lim > 0 && sc.usedAtts >= lim {
		sc.failRun(&stepError{Kind: "attempt_cap", Message: fmt.Sprintf("the run used all %d step attempts it may use; raise limits.attempts if it needs more", lim)}, u.s.Name)
		return false
	}
	return true
}

// useAttempt takes one attempt of the run's budget (limits.attempts) for
// u, whatever its action: every start of a step key, foreach item, until
// iteration, retry and child run counts (semantics.md §14). When none is
// left it fails the run (capLeft) and reports false.
func (sc *scheduler) useAttempt(u unit) bool {
	if !sc.capLeft(u) {
		return false
	}
	sc.usedAtts++
	sc.attsDirty = true
	return true
}

// giveBackAttempt returns to the run's budget the attempt of an
// interrupted action: a kill or a stop never uses up limits.attempts.
func (sc *scheduler) giveBackAttempt() {
	if sc.usedAtts > 0 {
		sc.usedAtts--
		sc.attsDirty = true
	}
}

// absorb folds an ended action, at now, into the state: the attempt is
// written completed or failed, with the unit's next state, in the next
// transition.
func (sc *scheduler) absorb(now time.Time, res attemptEnd) {
	sc.now = now
	f := res.l
	// The rest of the attempt's live output is stored with its end (or,
	// for an attempt abandoned meanwhile, with the next commit).
	sc.tx.t.Output = append(sc.tx.t.Output, res.output...)
	if sc.inFlight[f.u.key] != f {
		return // abandoned: already written canceled or interrupted
	}
	delete(sc.inFlight, f.u.key)
	sc.breakerOutcome(f, res.err)
	aw := store.AttemptWrite{StepKey: f.u.key, Attempt: f.attempt, Owner: sc.owner, StartedAt: f.started, FinishedAt: sc.now, IdempotencyKey: f.idem}
	if res.err == nil {
		out, b := sc.red.cleanJSON(res.out)
		aw.Status, aw.Output = store.AttemptCompleted, b
		sc.tx.attempt(aw)
		sc.unitDoneClean(f.u, out, b, f.attempt)
		return
	}
	se := res.err
	se.Message = sc.red.text(se.Message)
	if se.Output != nil {
		se.Output = sc.red.clean(se.Output)
		aw.Output = mustJSON(se.Output)
	}
	aw.Status, aw.Error = store.AttemptFailed, mustJSON(se)
	sc.tx.attempt(aw)
	sc.failures[f.u.key]++
	sc.unitFailed(f.u, se, true)
}

// consume takes the oldest pending signal with the name for the step key,
// in the transition that completes the step; with by set, only one
// stored at or before by (a wait's timeout).
func (sc *scheduler) consume(key, name string, by time.Time) (any, bool) {
	for i, s := range sc.signals {
		if s.Name != name {
			continue
		}
		if !by.IsZero() && s.CreatedAt.After(by) {
			continue // stored after by: not for this wait
		}
		sc.signals = append(sc.signals[:i:i], sc.signals[i+1:]...)
		sc.tx.t.ConsumeSignals = append(sc.tx.t.ConsumeSignals, store.SignalConsume{SignalID: s.ID, StepKey: key})
		sc.tx.event("signal_consumed", key, map[string]any{"signal": name, "signal_id": s.ID})
		return decodeJSON(s.Payload), true
	}
	return nil, false
}

// signalDone completes a wait step with the data of the signal it
// consumed, checked once more against the type the step declares: a
// signal is checked when it is sent, against the graph the run had then,
// and a run migrated since to a version whose wait declares another type
// must not take data of the old type as the new one (semantics.md §6,
// kind signal). Data of another type fails the step, loudly, never
// silently.
func (sc *scheduler) signalDone(u unit, name string, payload any) {
	if w := u.s.Action.Wait; w != nil && w.Type != nil {
		if err := graph.CheckValue(w.Type, payload, "data"); err != nil {
			sc.unitFailed(u, &stepError{Kind: "signal", Message: fmt.Sprintf(
				"signal %q does not have the type step %q declares (%s): %s; it was sent before the run moved to version %s, whose wait declares that type. Retry the step (flowrun retry RUN --from %s) and send the signal again with data of that type",
				name, u.s.Name, w.Type, err.Error(), sc.l.g.Version, u.s.Name)}, false)
			return
		}
	}
	sc.unitDone(u, payload, 1)
}

// startSwitch picks the first case whose when is true, else the default.
// The output is the branch name: "case0", "case1", ..., "default", or
// "none"; the branch's targets are recorded in State.
func (sc *scheduler) startSwitch(ctx context.Context, u unit) bool {
	sw := u.s.Action.Switch
	chosen, branch := sw.Default, "default"
	if len(sw.Default) == 0 {
		branch = "none"
	}
	for i, c := range sw.Cases {
		v, err := sc.l.prog.Eval(ctx, c.When, sc.act(&u))
		if err != nil {
			sc.unitFailed(u, &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate switch case %d: %v", i+1, err)}, false)
			return true
		}
		if b, _ := v.(bool); b {
			chosen, branch = c.Next, fmt.Sprintf("case%d", i)
			break
		}
	}
	if chosen == nil {
		chosen = []string{}
	}
	sc.unitDone(u, branch, 1)
	sc.put(sc.rows[u.key], &rowState{Chosen: chosen})
	return true
}

// startSleep records the wake time once; the unit completes when it comes.
func (sc *scheduler) startSleep(ctx context.Context, u unit) bool {
	sl := u.s.Action.Sleep
	wake := sc.now.Add(msDuration(sl.DurationMS))
	if sl.Until != nil {
		s, err := sc.evalString(ctx, sl.Until, sc.dataAct(&u))
		if err == nil {
			wake, err = time.Parse(time.RFC3339, s)
		}
		if err != nil {
			sc.unitFailed(u, &stepError{Kind: "expression", Message: fmt.Sprintf("sleep until needs an RFC 3339 time such as 2030-01-02T15:04:05Z: %v", err)}, false)
			return true
		}
	}
	if !wake.After(sc.now) {
		sc.unitDone(u, map[string]any{"woke_at": sc.now.UTC().Format(time.RFC3339Nano)}, 1)
		return true
	}
	row := sc.row(u)
	row.Status, row.StartedAt, row.Attempts, row.WakeAt = store.StepWaiting, sc.now, 1, wake
	row.Detail = "sleep until " + wake.UTC().Format(time.RFC3339)
	sc.put(row, &rowState{Wait: waitSleep})
	sc.tx.event("step_started", u.key, map[string]any{"wait": "timer", "wake_at": wake.UTC().Format(time.RFC3339Nano)})
	return true
}

// startWait consumes a pending signal at once, or waits for one.
func (sc *scheduler) startWait(u unit) bool {
	w := u.s.Action.Wait
	if out, _, ok := sc.mockUnit(u, 1); ok {
		sc.unitDone(u, out, 1)
		return true
	}
	if payload, ok := sc.consume(u.key, w.Signal, time.Time{}); ok {
		sc.signalDone(u, w.Signal, payload)
		return true
	}
	row := sc.row(u)
	row.Status, row.StartedAt, row.Attempts = store.StepWaiting, sc.now, 1
	if w.TimeoutMS > 0 {
		row.WakeAt = sc.now.Add(msDuration(w.TimeoutMS))
	}
	row.Detail = "signal " + w.Signal
	sc.put(row, &rowState{Wait: waitSignal, Signal: w.Signal})
	sc.tx.event("step_started", u.key, map[string]any{"wait": "signal", "signal": w.Signal})
	return true
}

// startChild inserts the child run in the same transition that sets the
// step waiting on it.
func (sc *scheduler) startChild(ctx context.Context, u unit) bool {
	if !sc.useAttempt(u) {
		return true
	}
	wa := u.s.Action.Workflow
	if out, se, ok := sc.mockUnit(u, sc.row(u).Attempts+1); ok {
		if se != nil {
			sc.row(u).Attempts++
			sc.unitFailed(u, se, false)
		} else {
			sc.unitDone(u, out, sc.row(u).Attempts+1)
		}
		return true
	}
	fail := func(msg string) bool {
		sc.unitFailed(u, &stepError{Kind: "child", Message: msg}, false)
		return true
	}
	v, cl, err := sc.out.childGraph(ctx, wa.Name, wa.Version)
	if err != nil {
		return fail(err.Error())
	}
	in := map[string]any{}
	if wa.Input != nil {
		x, err := sc.evalValue(ctx, wa.Input, sc.act(&u))
		if err != nil {
			return fail(fmt.Sprintf("evaluate the child's input (secrets cannot be passed to a child; declare them in the child workflow): %v", err))
		}
		m, ok := sc.red.clean(x).(map[string]any) // stored with the child: redacted
		if !ok && x != nil {
			return fail("the child's input must be an object")
		}
		in = m
	}
	inputs, err := checkInputs(cl.g, in)
	if err != nil {
		return fail(err.Error())
	}
	key := sc.run.ID + "/" + u.key
	attempt := sc.row(u).Attempts + 1 // a retry starts a new child run
	if attempt > 1 {
		key += "#attempt" + strconv.Itoa(attempt)
	}
	p := sc.out.childRun(cl, v, inputs, key)
	p.ParentRunID, p.ParentStepKey = sc.run.ID, u.key
	p.Trace = storeTrace(telemetry.ChildTrace(runTrace(sc.run), p.ID)) // the child joins its parent's trace
	p.WorkDir = sc.run.WorkDir                                         // a child's graph was stored with its parent's files
	p.RootRunID = sc.run.RootRunID
	if p.RootRunID == "" {
		p.RootRunID = sc.run.ID
	}
	if !sc.run.DeadlineAt.IsZero() && (p.DeadlineAt.IsZero() || sc.run.DeadlineAt.Before(p.DeadlineAt)) {
		p.DeadlineAt = sc.run.DeadlineAt
	}
	sc.tx.t.Children = append(sc.tx.t.Children, p)
	sc.children[p.ID] = store.Run{ID: p.ID, Workflow: v.Workflow, Status: store.RunPending}
	row := sc.row(u)
	row.Status, row.Attempts, row.Error, row.WakeAt = store.StepWaiting, attempt, nil, zeroTime
	if row.StartedAt.IsZero() {
		row.StartedAt = sc.now
	}
	if u.s.TimeoutMS > 0 {
		row.WakeAt = sc.now.Add(msDuration(u.s.TimeoutMS))
	}
	row.Detail = "child run " + p.ID
	sc.put(row, &rowState{Wait: waitChild, Child: p.ID})
	sc.tx.event("child_started", u.key, map[string]any{"child_run_id": p.ID, "workflow": v.Workflow, "version": v.Version})
	return true
}

// evalValue evaluates a data value; literals are decoded without CEL.
func (sc *scheduler) evalValue(ctx context.Context, v *graph.Value, a *expr.Activation) (any, error) {
	if v == nil {
		return nil, nil
	}
	if v.Lit != nil && v.Template == nil && v.List == nil && v.Object == nil {
		var x any
		if err := graph.UnmarshalJSON(v.Lit, &x); err != nil {
			return nil, fmt.Errorf("literal is not JSON: %w", err)
		}
		return x, nil
	}
	x, err := sc.l.prog.EvalValue(ctx, v, a)
	if err != nil {
		return nil, err
	}
	return normalizeJSON(x), nil
}

// evalText evaluates an optional text value of an action ("" when v is
// nil); an evaluation error is the step's error of kind expression, naming
// what was evaluated.
func (sc *scheduler) evalText(ctx context.Context, v *graph.Value, a *expr.Activation, what string) (string, *stepError) {
	if v == nil {
		return "", nil
	}
	s, err := sc.evalString(ctx, v, a)
	if err != nil {
		return "", &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate %s: %v", what, err)}
	}
	return s, nil
}

// evalString evaluates a data value that must be a string.
func (sc *scheduler) evalString(ctx context.Context, v *graph.Value, a *expr.Activation) (string, error) {
	x, err := sc.evalValue(ctx, v, a)
	if err != nil {
		return "", err
	}
	switch s := x.(type) {
	case string:
		return s, nil
	case nil:
		return "", nil
	}
	return string(mustJSON(x)), nil
}
