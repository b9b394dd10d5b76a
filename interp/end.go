package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// runError is the error of a run: {"kind","message","step"} and the
// problem fields of the error that ended it (RFC 9457: type always,
// status, title, detail and instance when it has them).
type runError struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	Step     string `json:"step"` // "" when no step's failure ended the run
	Type     string `json:"type,omitempty"`
	Status   *int   `json:"status,omitempty"`
	Title    string `json:"title,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Compensations are the compensations the run ran before it ended,
	// in order, and how each ended (compensate.go).
	Compensations []compResult `json:"compensations,omitempty"`
}

// completeRun evaluates the workflow outputs and ends the run completed,
// in the transition of its last step.
func (sc *scheduler) completeRun(ctx context.Context) {
	if sc.ended {
		return // a run that already ended in this transition keeps its status
	}
	out := make(map[string]any, len(sc.l.g.Outputs))
	for _, o := range sc.l.g.Outputs {
		v, err := sc.evalValue(ctx, o.Value, sc.dataAct(nil))
		if err != nil {
			sc.failRun(&stepError{Kind: "expression", Message: fmt.Sprintf("evaluate output %q: %v", o.Name, err)}, "")
			return
		}
		if graph.ValueTooDeep(v, graph.MaxValueDepth) {
			sc.failRun(&stepError{Kind: "output_limit", Message: fmt.Sprintf(
				"output %q nests deeper than %d levels of lists and objects, the most a stored value may; flatten it", o.Name, graph.MaxValueDepth)}, "")
			return
		}
		out[o.Name] = v
	}
	u := sc.tx.runUpdate()
	u.Status = ptr(store.RunCompleted)
	u.Outputs = sc.red.json(out)
	sc.endRun(u)
	sc.tx.event("run_completed", "", nil)
}

// failRun ends the run failed: the actions in flight are stopped and every
// unfinished step key is written canceled (invariant 8); children still
// running are canceled after the commit.
func (sc *scheduler) failRun(se *stepError, step string) {
	if sc.ended {
		return
	}
	typ := se.Type
	if typ == "" {
		typ = problemType(se.Kind)
	}
	re := runError{Kind: se.Kind, Message: sc.red.text(se.Message), Step: step, Type: typ, Status: se.Status,
		Title: se.Title, Detail: se.Detail, Instance: se.Instance}
	if sc.sagaRunning() {
		// The saga itself cannot go on (a retry past the deadline): the
		// run ends with the error that started it, which its run_failed
		// event and failed alert name, as endSaga's do; a deadline that
		// cut it short is still a timed_out alert.
		if se.Kind == "deadline" {
			sc.alert("timed_out", "", se.Message)
		}
		cut := se.Message
		re = runError{}
		_ = json.Unmarshal(sc.sagaOf().Error, &re)
		re.Compensations = sc.sagaResults()
		step = re.Step
		se = &stepError{Kind: re.Kind, Message: re.Message}
		// The saga ended, cut short: its row says why (not canceled, as
		// the unfinished rows stopAll ends are).
		row := sc.row(unit{s: sc.l.step(compKey), key: compKey, idx: -1, iter: -1})
		row.Status, row.FinishedAt = store.StepFailed, sc.now
		row.Error = mustJSON(&stepError{Kind: "compensation", Type: problemType("compensation"),
			Message: "the saga was cut short: " + sc.red.text(cut)})
		sc.put(row, nil)
	} else if sc.startSaga(re, false) {
		return
	}
	sc.stopAll(store.AttemptCanceled, store.StepCanceled)
	u := sc.tx.runUpdate()
	u.Status = ptr(store.RunFailed)
	u.Error = mustJSON(re)
	sc.endRun(u)
	sc.tx.event("run_failed", step, re)
	sc.alertRunEnd(se, step)
}

// cancelRun carries out a cancel request: actions are killed, unfinished
// steps and the run end canceled, children are canceled. When completed
// steps compensate on a cancel, it begins their compensations instead and
// reports true (compensate.go).
func (sc *scheduler) cancelRun() bool {
	if sc.ended {
		return false
	}
	canceled := runError{Kind: "canceled", Message: "canceled by request", Type: problemType("canceled")}
	if sc.startSaga(canceled, true) {
		return true
	}
	sc.stopAll(store.AttemptCanceled, store.StepCanceled)
	u := sc.tx.runUpdate()
	u.Status = ptr(store.RunCanceled)
	u.Error = mustJSON(runError{Kind: "canceled", Message: "canceled by request", Type: problemType("canceled")})
	u.ClearCancel = true
	sc.endRun(u)
	sc.tx.event("run_canceled", "", nil)
	return false
}

// endRun fills the run update of a terminal status.
func (sc *scheduler) endRun(u *store.RunUpdate) {
	u.FinishedAt = ptr(sc.now)
	u.Release = true
	u.WaitReason = ptr("")
	if sc.run.ParentRunID != "" {
		sc.tx.t.Wake = append(sc.tx.t.Wake, sc.run.ParentRunID)
	}
	sc.ended = true
}

// interruptRun stops the runner at once (invariant 9): actions are killed,
// their attempts recorded interrupted and their steps pending again, and
// the run is released due now.
func (sc *scheduler) interruptRun() {
	sc.stopAll(store.AttemptInterrupted, store.StepPending)
	u := sc.tx.runUpdate()
	u.Status = ptr(store.RunPending)
	u.AvailableAt = ptr(sc.now)
	u.WaitReason = ptr("")
	u.Release = true
	sc.tx.event("run_parked", "", map[string]any{"reason": "stopped"})
	sc.ended = true
}

// park releases a run that has nothing to execute now (invariant 7).
func (sc *scheduler) park() {
	u := sc.tx.runUpdate()
	var avail time.Time
	reason := ""
	if sc.blocked {
		// Ready work that was not started (the worker is draining).
		u.Status, avail = ptr(store.RunPending), sc.now
	} else {
		var waiting bool
		avail, reason, waiting = sc.parkWake(sc.l.compensations().list, sc.breakerName, sc.now, sc.run.DeadlineAt)
		if !waiting {
			sc.failRun(&stepError{Kind: "internal", Message: "no step of the run can make progress; this is a bug in flowrun"}, "")
			return
		}
		u.Status = ptr(store.RunWaiting)
	}
	u.AvailableAt = ptr(avail)
	u.WaitReason = ptr(reason)
	u.Release = true
	sc.tx.event("run_parked", "", map[string]any{"reason": reason, "available_at": avail.UTC().Format(time.RFC3339Nano)})
	sc.ended = true
}

// breakerName names the breaker of the step called step ("" when none).
func (sc *scheduler) breakerName(step string) string { return sc.l.step(step).Breaker }

// stopAll ends every action in flight with attempt status as and step
// status ss, and every other unfinished step key with ss when ss is
// canceled. Child runs waited on are canceled after the commit.
func (sc *scheduler) stopAll(as store.AttemptStatus, ss store.StepStatus) {
	for key, f := range sc.inFlight {
		sc.abandon(key, f, as, ss)
	}
	if ss != store.StepCanceled {
		return
	}
	for _, row := range sc.rows {
		if row.Status.Terminal() || row.Status == store.StepPending {
			continue
		}
		st := sc.state(row.Key)
		if row.Status == store.StepWaiting && st.Wait == waitChild {
			if c, ok := sc.children[st.Child]; !ok || !c.Status.Terminal() {
				sc.afterEnd = append(sc.afterEnd, st.Child)
			}
		}
		c := *row
		c.Status, c.FinishedAt, c.WakeAt = store.StepCanceled, sc.now, zeroTime
		sc.put(&c, nil)
		sc.tx.event("step_canceled", c.Key, nil)
	}
}

// abandon stops one action in flight: the supervisor stops it once the
// pass is over (stops), its attempt is written with status as and its
// step key with ss, and its result, when it comes, is ignored.
func (sc *scheduler) abandon(key string, f *launch, as store.AttemptStatus, ss store.StepStatus) {
	delete(sc.inFlight, key)
	sc.stops = append(sc.stops, f)
	sc.breakerRelease(f)
	msg := map[store.AttemptStatus]string{
		store.AttemptCanceled:    "the attempt was stopped because the run or step ended",
		store.AttemptInterrupted: "the attempt was stopped because its worker stopped; the step runs again",
	}[as]
	sc.tx.attempt(store.AttemptWrite{StepKey: key, Attempt: f.attempt, Status: as, Owner: sc.owner, StartedAt: f.started,
		FinishedAt: sc.now, IdempotencyKey: f.idem, Error: mustJSON(&stepError{Kind: string(as), Message: msg})})
	if row := sc.rows[key]; row != nil {
		c := *row
		c.Status = ss
		if ss == store.StepCanceled {
			c.FinishedAt = sc.now
		}
		sc.put(&c, nil)
	}
	if as == store.AttemptInterrupted {
		sc.tx.event("interrupted", key, map[string]any{"attempt": f.attempt})
		sc.giveBackAttempt() // a stop never uses up limits.attempts
	}
}

// abandonAll stops every action in flight without writing anything (the
// lease is lost, or a commit failed): their results, when they come, are
// ignored.
func (r *runner) abandonAll() {
	for key, f := range r.flights {
		r.abandoned = append(r.abandoned, key)
		f.cancel()
		delete(r.flights, key)
		delete(r.inFlight, key)
	}
	r.stops = nil
}
