package interp

import (
	"context"
	"time"
)

// holdTimer decides, for a run with nothing to execute now, whether its
// runner waits for the run's next timer in place (holding its lease)
// instead of parking it (Options.HoldTimer). It holds only a top-level run
// that no child run of its own or outside event can move (no step waits on
// a signal or a child, no child run is unfinished), that only a timer
// moves on (a sleep, a retry backoff, an until interval, a breaker
// cooldown, brought forward to the deadline), and that is not being
// drained, halted or canceled. It returns the instant to wait for.
func (r *runner) holdTimer() (time.Time, bool) {
	if r.e.opts.HoldTimer == nil || r.blocked || r.run.ParentRunID != "" ||
		r.drain.Load() || r.halt.Load() || r.cancelReq.Load() || r.run.CancelRequested {
		return time.Time{}, false
	}
	if _, external := r.sched.wake(); external {
		return time.Time{}, false
	}
	for _, c := range r.children {
		if !c.Status.Terminal() {
			return time.Time{}, false
		}
	}
	avail, reason, waiting := r.parkWake(r.l.g.Steps, func(step string) string { return r.l.step(step).Breaker }, r.now, r.run.DeadlineAt)
	if !waiting || !timerWait(reason) || !avail.After(r.now) {
		return time.Time{}, false
	}
	return avail, true
}

// holdAt is the second half of a hold that holdTimer allowed, once the
// decision pass before it is committed: it asks Options.HoldTimer, and
// when the hook refuses parks the run as it would have been, in a commit
// of its own. While it asks and while the runner holds, the run is the
// whole of its tree (solo): the pool's claim loop neither claims nor looks
// for the tree's next timer, so the lease the runner holds (extended by
// the heartbeat, and fencing every commit) is not taken over by its own
// engine when the clock jumps past its expiry.
func (r *runner) holdAt(ctx context.Context, wake time.Time) error {
	r.solo.Store(true)
	if r.e.opts.HoldTimer(wake) {
		return nil
	}
	r.solo.Store(false)
	r.sched.park()
	return r.flush(ctx)
}
