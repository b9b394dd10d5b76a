package interp

import (
	"context"
	"time"
)

// Holding a run through its timer (Options.HoldTimer): the scheduler
// decides it (holdWake, as part of its pass), the supervisor carries it
// out (holdAt).

// holdWake decides, for a run the pass left with nothing to execute now,
// whether the supervisor waits for the run's next timer in place (holding
// its lease) instead of parking it, and returns the instant to wait for.
// It holds only when the pass's event offers it (passEvent.hold: the
// engine has a HoldTimer hook), and only a top-level run that no child
// run of its own or outside event can move (no step waits on a signal or
// a child, no child run in the state is unfinished), that only a timer
// moves on (a sleep, a retry backoff, an until interval, a breaker
// cooldown, brought forward to the deadline) at an instant after the
// pass's, and that is not being drained, halted or canceled. Drain, halt
// and cancel are those of the pass's event (and the cancel the store
// recorded): a request that arrives during the pass is answered by the
// next one (control and decide read the same event). It is a pure
// function of the pass's event and the state.
func (sc *scheduler) holdWake() (time.Time, bool) {
	ev := sc.ev
	if !ev.hold || sc.blocked || sc.run.ParentRunID != "" ||
		ev.draining || ev.stop || ev.cancel || sc.run.CancelRequested {
		return time.Time{}, false
	}
	if _, external := sc.wake(); external {
		return time.Time{}, false
	}
	for _, c := range sc.children {
		if !c.Status.Terminal() {
			return time.Time{}, false
		}
	}
	avail, reason, waiting := sc.parkWake(sc.l.compensations().list, sc.breakerName, sc.now, sc.run.DeadlineAt)
	if !waiting || !timerWait(reason) || !avail.After(sc.now) {
		return time.Time{}, false
	}
	return avail, true
}

// holdAt carries out a hold the pass decided (decisions.holdUntil), once
// the pass's transition is committed: it asks Options.HoldTimer, and when
// the hook refuses has the scheduler park the run as the pass would have,
// in a commit of its own. While it asks and while the runner holds, the
// run is the whole of its tree (solo): the pool's claim loop neither
// claims nor looks for the tree's next timer, so the lease the runner
// holds (extended by the heartbeat, and fencing every commit) is not taken
// over by its own engine when the clock jumps past its expiry.
func (r *runner) holdAt(ctx context.Context, wake time.Time) error {
	r.solo.Store(true)
	if r.e.opts.HoldTimer(wake) {
		return nil
	}
	r.solo.Store(false)
	r.sched.park()
	return r.flush(ctx)
}
