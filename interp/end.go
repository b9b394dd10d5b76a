package interp

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// runError is the error of a run: {"kind","message","step"}.
type runError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Step    string `json:"step"` // "" when no step's failure ended the run
}

// completeRun evaluates the workflow outputs and ends the run completed,
// in the transition of its last step.
func (r *runner) completeRun(ctx context.Context) {
	if r.ended {
		return // a run that already ended in this transition keeps its status
	}
	out := make(map[string]any, len(r.l.g.Outputs))
	for _, o := range r.l.g.Outputs {
		v, err := r.evalValue(ctx, o.Value, r.dataAct(nil))
		if err != nil {
			r.failRun(&stepError{Kind: "expression", Message: fmt.Sprintf("evaluate output %q: %v", o.Name, err)}, "")
			return
		}
		if graph.ValueTooDeep(v, graph.MaxValueDepth) {
			r.failRun(&stepError{Kind: "output_limit", Message: fmt.Sprintf(
				"output %q nests deeper than %d levels of lists and objects, the most a stored value may; flatten it", o.Name, graph.MaxValueDepth)}, "")
			return
		}
		out[o.Name] = v
	}
	u := r.tx.runUpdate()
	u.Status = ptr(store.RunCompleted)
	u.Outputs = r.red.json(out)
	r.endRun(u)
	r.tx.event("run_completed", "", nil)
}

// failRun ends the run failed: the actions in flight are stopped and every
// unfinished step key is written canceled (invariant 8); children still
// running are canceled after the commit.
func (r *runner) failRun(se *stepError, step string) {
	if r.ended {
		return
	}
	r.stopAll(store.AttemptCanceled, store.StepCanceled)
	re := runError{Kind: se.Kind, Message: r.red.text(se.Message), Step: step}
	u := r.tx.runUpdate()
	u.Status = ptr(store.RunFailed)
	u.Error = mustJSON(re)
	r.endRun(u)
	r.tx.event("run_failed", step, re)
	r.alertRunEnd(se, step)
}

// cancelRun carries out a cancel request: actions are killed, unfinished
// steps and the run end canceled, children are canceled.
func (r *runner) cancelRun() {
	if r.ended {
		return
	}
	r.stopAll(store.AttemptCanceled, store.StepCanceled)
	u := r.tx.runUpdate()
	u.Status = ptr(store.RunCanceled)
	u.Error = mustJSON(runError{Kind: "canceled", Message: "canceled by request"})
	u.ClearCancel = true
	r.endRun(u)
	r.tx.event("run_canceled", "", nil)
}

// endRun fills the run update of a terminal status.
func (r *runner) endRun(u *store.RunUpdate) {
	u.FinishedAt = ptr(r.now)
	u.Release = true
	u.WaitReason = ptr("")
	if r.run.ParentRunID != "" {
		r.tx.t.Wake = append(r.tx.t.Wake, r.run.ParentRunID)
	}
	r.ended = true
}

// interruptRun stops the runner at once (invariant 9): actions are killed,
// their attempts recorded interrupted and their steps pending again, and
// the run is released due now.
func (r *runner) interruptRun() {
	r.stopAll(store.AttemptInterrupted, store.StepPending)
	u := r.tx.runUpdate()
	u.Status = ptr(store.RunPending)
	u.AvailableAt = ptr(r.now)
	u.WaitReason = ptr("")
	u.Release = true
	r.tx.event("run_parked", "", map[string]any{"reason": "stopped"})
	r.ended = true
}

// park releases a run that has nothing to execute now (invariant 7).
func (r *runner) park() {
	u := r.tx.runUpdate()
	var avail time.Time
	reason := ""
	if r.blocked {
		// Ready work that was not started (the worker is draining).
		u.Status, avail = ptr(store.RunPending), r.now
	} else {
		var waiting bool
		avail, reason, waiting = r.parkWake(r.l.g.Steps, func(step string) string { return r.l.step(step).Breaker }, r.now, r.run.DeadlineAt)
		if !waiting {
			r.failRun(&stepError{Kind: "internal", Message: "no step of the run can make progress; this is a bug in flowrun"}, "")
			return
		}
		u.Status = ptr(store.RunWaiting)
	}
	u.AvailableAt = ptr(avail)
	u.WaitReason = ptr(reason)
	u.Release = true
	r.tx.event("run_parked", "", map[string]any{"reason": reason, "available_at": avail.UTC().Format(time.RFC3339Nano)})
	r.ended = true
}

// stopAll ends every action in flight with attempt status as and step
// status ss, and every other unfinished step key with ss when ss is
// canceled. Child runs waited on are canceled after the commit.
func (r *runner) stopAll(as store.AttemptStatus, ss store.StepStatus) {
	for key, f := range r.flights {
		r.abandon(key, f, as, ss)
	}
	if ss != store.StepCanceled {
		return
	}
	for _, row := range r.rows {
		if row.Status.Terminal() || row.Status == store.StepPending {
			continue
		}
		st := r.state(row.Key)
		if row.Status == store.StepWaiting && st.Wait == waitChild {
			if c, ok := r.children[st.Child]; !ok || !c.Status.Terminal() {
				r.afterEnd = append(r.afterEnd, st.Child)
			}
		}
		c := *row
		c.Status, c.FinishedAt, c.WakeAt = store.StepCanceled, r.now, zeroTime
		r.put(&c, nil)
		r.tx.event("step_canceled", c.Key, nil)
	}
}

// abandon stops one action in flight. With as set, its attempt is written
// with that status and its step key with ss; its result, when it comes, is
// ignored. With as empty nothing is written (the lease is lost).
func (r *runner) abandon(key string, f *flight, as store.AttemptStatus, ss store.StepStatus) {
	f.cancel()
	delete(r.flights, key)
	if as == "" {
		return
	}
	r.breakerRelease(f)
	msg := map[store.AttemptStatus]string{
		store.AttemptCanceled:    "the attempt was stopped because the run or step ended",
		store.AttemptInterrupted: "the attempt was stopped because its worker stopped; the step runs again",
	}[as]
	r.tx.attempt(store.AttemptWrite{StepKey: key, Attempt: f.attempt, Status: as, Owner: r.owner, StartedAt: f.started,
		FinishedAt: r.now, IdempotencyKey: f.idem, Error: mustJSON(&stepError{Kind: string(as), Message: msg})})
	if row := r.rows[key]; row != nil {
		c := *row
		c.Status = ss
		if ss == store.StepCanceled {
			c.FinishedAt = r.now
		}
		r.put(&c, nil)
	}
	if as == store.AttemptInterrupted {
		r.tx.event("interrupted", key, map[string]any{"attempt": f.attempt})
		r.giveBackAttempt() // a stop never uses up limits.attempts
	}
}

// abandonAll stops every action in flight without writing anything.
func (r *runner) abandonAll() {
	for key, f := range r.flights {
		r.abandon(key, f, "", "")
	}
}
