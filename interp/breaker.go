package interp

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// waitBreaker is the wait kind of a step key parked on an open breaker.
const waitBreaker = "breaker"

// breakerKinds are the error kinds a breaker counts (semantics.md §13):
// failures of the service behind it, not of the workflow.
var breakerKinds = map[string]bool{"exec": true, "http": true, "timeout": true}

// breakerOf returns the breaker a step names, or nil.
func (r *runner) breakerOf(s *graph.Step) *graph.Breaker {
	if s.Breaker == "" {
		return nil
	}
	for i := range r.l.g.Breakers {
		if r.l.g.Breakers[i].Name == s.Breaker {
			return &r.l.g.Breakers[i]
		}
	}
	return nil
}

// breakerGate asks the store whether a unit may start an attempt under its
// step's breaker. It returns true when the attempt may start (the breaker
// is closed, or this unit holds the half-open trial). Otherwise, with the
// breaker's on_open = "fail", it returns false and the error the attempt
// fails with (kind breaker_open); by default the unit is parked on the
// breaker without using an attempt, due when the cooldown ends (or, while
// another run holds the trial, after another cooldown at most), and gate
// returns false and nil. A store error lets the attempt through: the
// commit that follows meets the same store and reports it.
func (r *runner) breakerGate(ctx context.Context, u unit) (bool, *stepError) {
	br := r.breakerOf(u.s)
	if br == nil {
		return true, nil
	}
	b, ok, err := r.e.st.BreakerAcquire(ctx, store.BreakerAcquireParams{Name: br.Name, RunID: r.run.ID, StepKey: u.key,
		Now: r.now, TrialFor: r.trialFor(u.s)})
	if err != nil || ok {
		return true, nil
	}
	wake := b.OpenUntil
	detail := fmt.Sprintf("breaker %s is open", br.Name)
	if b.State == store.BreakerHalfOpen {
		wake = r.now.Add(max(msDuration(br.CooldownMS), time.Second))
		if !b.TrialUntil.IsZero() && b.TrialUntil.Before(wake) {
			wake = b.TrialUntil
		}
		detail = fmt.Sprintf("breaker %s is half-open and another attempt is its trial", br.Name)
	}
	if !wake.After(r.now) {
		wake = r.now.Add(time.Second)
	}
	if br.OnOpen == "fail" {
		return false, &stepError{Kind: "breaker_open", Message: fmt.Sprintf("%s until %s, and it has on_open = \"fail\"",
			detail, wake.UTC().Format(time.RFC3339))}
	}
	st := *r.state(u.key)
	st.Wait = waitBreaker
	row := r.row(u)
	row.Status, row.WakeAt, row.Detail = store.StepWaiting, wake, detail
	r.put(row, &st)
	return false, nil
}

// refuseAttempt records an attempt that its open breaker refused (on_open =
// "fail"): it counts as an attempt of the step and of the run, is written
// failed with kind breaker_open without running anything, and the step's
// retry policy decides what follows. It is not a failure of the service,
// so the breaker does not count it.
func (r *runner) refuseAttempt(u unit, se *stepError) {
	n := r.lastAtt[u.key] + 1
	r.lastAtt[u.key] = n
	r.usedAtts++
	r.attsDirty = true
	row := r.row(u)
	if row.StartedAt.IsZero() {
		row.StartedAt = r.now
	}
	row.Attempts = n
	r.put(row, &rowState{Base: r.state(u.key).Base})
	r.tx.attempt(store.AttemptWrite{StepKey: u.key, Attempt: n, Status: store.AttemptFailed, Owner: r.owner,
		StartedAt: r.now, FinishedAt: r.now, Error: mustJSON(se)})
	r.failures[u.key]++
	r.unitFailed(u, se, true)
}

// trialFor bounds how long a trial attempt may hold a half-open breaker
// without reporting: its timeout plus a lease period (its worker died).
func (r *runner) trialFor(s *graph.Step) time.Duration {
	ms := s.TimeoutMS
	if ms <= 0 {
		ms = graph.DefaultTimeoutMS
	}
	return msDuration(ms) + r.e.opts.LeaseFor
}

// breakerOutcome adds what an ended attempt says about its breaker to the
// transition that records the attempt: a success closes it, a failure of a
// counted kind counts (and may open it), anything else only gives back a
// trial the attempt held.
func (r *runner) breakerOutcome(f *flight, se *stepError) {
	br := r.breakerOf(f.u.s)
	if br == nil {
		return
	}
	w := store.BreakerWrite{Name: br.Name, StepKey: f.u.key, Threshold: br.Failures, Cooldown: msDuration(br.CooldownMS)}
	switch {
	case se == nil:
		w.Outcome = store.BreakerSuccess
	case breakerKinds[se.Kind]:
		w.Outcome = store.BreakerFailure
	default:
		w.Outcome = store.BreakerRelease
	}
	r.tx.t.Breakers = append(r.tx.t.Breakers, w)
}

// breakerRelease gives back the trial an abandoned attempt may hold.
func (r *runner) breakerRelease(f *flight) {
	if br := r.breakerOf(f.u.s); br != nil {
		r.tx.t.Breakers = append(r.tx.t.Breakers, store.BreakerWrite{Name: br.Name, Outcome: store.BreakerRelease, StepKey: f.u.key})
	}
}

// BreakerList returns the shared state of every breaker the store knows.
func (e *Engine) BreakerList(ctx context.Context) ([]store.Breaker, error) {
	bs, err := e.st.BreakerList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list breakers: %w", err)
	}
	return bs, nil
}
