package interp

import (
	"fmt"
	"math"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// decisions is what the scheduler's current decision pass has decided and
// not yet committed: the transition being built, the instant the pass
// decides at (read from the clock by the supervisor, never here), the
// attempts to launch once the transition commits and the actions to stop,
// the child runs to cancel after it, whether the run ended or the pass
// stopped with work left, and the instant the supervisor holds an idle
// run until.
type decisions struct {
	tx      *txb
	now     time.Time
	ended   bool // the run reached a terminal status in tx
	blocked bool // something was ready but could not start (slots, drain)
	// launches are the attempts to start once tx commits; stops the
	// attempts in flight whose actions must be stopped (their ends are
	// written in tx).
	launches []*launch
	stops    []*launch
	afterEnd []string // child runs to cancel once the transition is committed
	usedAtts int      // run.AttemptsUsed as decided
	// attsDirty: usedAtts changed since the last flush.
	attsDirty bool
	// more: decide stopped with work left because the transition reached
	// its size bound (schedule.go): commit it and decide again at once.
	more bool
	// holdUntil: the pass left the run idle and decided that the
	// supervisor holds it, leased, until this instant (its next timer)
	// instead of parking it (hold.go); zero: no hold. Each pass decides
	// it anew.
	holdUntil time.Time
	// gateChecks counts the gate checks of steps that had not begun since
	// the supervisor last added them to Engine.gates (tests read it).
	gateChecks int64
	// sagaBegun: the run's compensations began in tx (compensate.go);
	// decide stops advancing the steps and runs them.
	sagaBegun bool
}

// retryWake decides when the next attempt of a step that failed for the
// failed-th time under retry policy rp begins: the backoff, BackoffMS
// times Multiplier (at least 1) to the power failed-1, capped at
// MaxDelayMS when that is set, plus the jitter drawn (jitterMS), after
// now. It returns the backoff in milliseconds (as recorded in the step's
// State and the retry_scheduled event), the wake time, and false when the
// wake time is at or after the run's deadline (zero: none), so the retry
// must not be scheduled. It is pure: the jitter is drawn and the clock
// read by the caller.
func retryWake(rp *graph.Retry, failed int, jitterMS int64, now, deadline time.Time) (delayMS int64, wake time.Time, ok bool) {
	delay := float64(rp.BackoffMS) * math.Pow(max(rp.Multiplier, 1), float64(failed-1))
	if rp.MaxDelayMS > 0 && delay > float64(rp.MaxDelayMS) {
		delay = float64(rp.MaxDelayMS)
	}
	wake = now.Add(time.Duration(delay)*time.Millisecond + msDuration(jitterMS))
	if !deadline.IsZero() && !wake.Before(deadline) {
		return int64(delay), wake, false
	}
	return int64(delay), wake, true
}

// joinSkip applies a step's join rule to its needs, all of which have
// ended: it returns why the step is skipped, or "" when the join lets it
// run. edge gives the status of the edge from a need (a switch's edge
// counts as skipped when the step is not in the branch it took; a catch's
// edge as completed when the catch took the need's error and chose the
// step, as skipped otherwise, and a caught step's edge to its dependents
// as skipped), own the need's own status, and why, when it is not nil,
// says why a skipped edge skips the step ("": the usual words). With join
// "any" or "first" the step is skipped when no edge completed (a step with
// no needs runs); otherwise when an edge was skipped or canceled. It is
// pure: it reads only what it is passed.
func joinSkip(join string, needs []string, edge, own func(string) store.StepStatus, why func(string) string) string {
	if join == "any" || join == "first" {
		any := len(needs) == 0
		for _, n := range needs {
			if edge(n) == store.StepCompleted {
				any = true
			}
		}
		if !any {
			return fmt.Sprintf("none of its dependencies completed (join = %q)", join)
		}
		return ""
	}
	for _, n := range needs {
		switch st := edge(n); st {
		case store.StepSkipped, store.StepCanceled:
			if why != nil {
				if w := why(n); w != "" {
					return w
				}
			}
			if own(n) == store.StepCompleted {
				return fmt.Sprintf("switch %q took another branch", n)
			}
			return fmt.Sprintf("its dependency %q was %s", n, st)
		}
	}
	return ""
}
