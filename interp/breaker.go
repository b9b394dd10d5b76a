package interp

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
)

// waitBreaker is the wait kind of a step key parked on an open breaker.
const waitBreaker = "breaker"

// breakerKinds are the error kinds a breaker counts (semantics.md §13):
// failures of the service behind it, not of the workflow.
var breakerKinds = map[string]bool{"exec": true, "http": true, "timeout": true}

// breakerOf returns the breaker a step names, or nil.
func (r *runner) breakerOf(s *lang.Step) *lang.Breaker {
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
// is closed, or this unit holds the half-open trial). Otherwise the unit
// is parked on the breaker without using an attempt, due when the cooldown
// ends (or, while another run holds the trial, after another cooldown at
// most), and gate returns false. A store error lets the attempt through:
// the commit that follows meets the same store and reports it.
func (r *runner) breakerGate(ctx context.Context, u unit) bool {
	br := r.breakerOf(u.s)
	if br == nil {
		return true
	}
	b, ok, err := r.e.st.BreakerAcquire(ctx, store.BreakerAcquireParams{Name: br.Name, RunID: r.run.ID, StepKey: u.key,
		Now: r.now, TrialFor: r.trialFor(u.s)})
	if err != nil || ok {
		return true
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
	st := *r.state(u.key)
	st.Wait = waitBreaker
	row := r.row(u)
	row.Status, row.WakeAt, row.Detail = store.StepWaiting, wake, detail
	r.put(row, &st)
	return false
}

// trialFor bounds how long a trial attempt may hold a half-open breaker
// without reporting: its timeout plus a lease period (its worker died).
func (r *runner) trialFor(s *lang.Step) time.Duration {
	ms := s.TimeoutMS
	if ms <= 0 {
		ms = lang.DefaultTimeoutMS
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
