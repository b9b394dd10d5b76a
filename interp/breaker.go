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
func (sc *scheduler) breakerOf(s *graph.Step) *graph.Breaker {
	if s.Breaker == "" {
		return nil
	}
	for i := range sc.l.g.Breakers {
		if sc.l.g.Breakers[i].Name == s.Breaker {
			return &sc.l.g.Breakers[i]
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
func (sc *scheduler) breakerGate(ctx context.Context, u unit) (bool, *stepError) {
	br := sc.breakerOf(u.s)
	if br == nil {
		return true, nil
	}
	b, ok, err := sc.out.breakerAcquire(ctx, store.BreakerAcquireParams{Name: br.Name, RunID: sc.run.ID, StepKey: u.key,
		Now: sc.now, TrialFor: sc.trialFor(u.s)})
	if err != nil || ok {
		return true, nil
	}
	wake, detail := sc.breakerRefusal(br, b)
	if br.OnOpen == "fail" {
		return false, &stepError{Kind: "breaker_open", Message: fmt.Sprintf("%s until %s, and it has on_open = \"fail\"",
			detail, wake.UTC().Format(time.RFC3339))}
	}
	st := *sc.state(u.key)
	st.Wait = waitBreaker
	row := sc.row(u)
	row.Status, row.WakeAt, row.Detail = store.StepWaiting, wake, detail
	sc.put(row, &st)
	return false, nil
}

// breakerRefusal says why breaker br, as b is now, let no attempt through,
// and until when: the end of its cooldown, or while another attempt holds
// the half-open trial, the next time to ask again.
func (sc *scheduler) breakerRefusal(br *graph.Breaker, b store.Breaker) (time.Time, string) {
	wake := b.OpenUntil
	detail := fmt.Sprintf("breaker %s is open", br.Name)
	if b.State == store.BreakerHalfOpen {
		wake = sc.now.Add(max(msDuration(br.CooldownMS), time.Second))
		if !b.TrialUntil.IsZero() && b.TrialUntil.Before(wake) {
			wake = b.TrialUntil
		}
		// The trial lapses with its holder's lease (store.AcquireBreaker):
		// ask again once that may have happened.
		if lapse := sc.now.Add(max(sc.out.leaseFor(), time.Second)); lapse.Before(wake) {
			wake = lapse
		}
		detail = fmt.Sprintf("breaker %s is half-open and another attempt is its trial", br.Name)
	}
	if !wake.After(sc.now) {
		wake = sc.now.Add(time.Second)
	}
	return wake, detail
}

// refuseAttempt records an attempt that its open breaker refused (on_open =
// "fail"): it counts as an attempt of the step and of the run, is written
// failed with kind breaker_open without running anything, and the step's
// retry policy decides what follows. It is not a failure of the service,
// so the breaker does not count it.
func (sc *scheduler) refuseAttempt(u unit, se *stepError) {
	n := sc.lastAtt[u.key] + 1
	sc.lastAtt[u.key] = n
	sc.usedAtts++
	sc.attsDirty = true
	row := sc.row(u)
	if row.StartedAt.IsZero() {
		row.StartedAt = sc.now
	}
	row.Attempts = n
	sc.put(row, &rowState{Base: sc.state(u.key).Base})
	sc.tx.attempt(store.AttemptWrite{StepKey: u.key, Attempt: n, Status: store.AttemptFailed, Owner: sc.owner,
		StartedAt: sc.now, FinishedAt: sc.now, Error: mustJSON(se)})
	sc.failures[u.key]++
	sc.unitFailed(u, se, true)
}

// trialFor bounds how long a trial attempt may hold a half-open breaker
// without reporting: its timeout plus a lease period (its worker died).
func (sc *scheduler) trialFor(s *graph.Step) time.Duration {
	ms := s.TimeoutMS
	if ms <= 0 {
		ms = graph.DefaultTimeoutMS
	}
	return msDuration(ms) + sc.out.leaseFor()
}

// breakerOutcome adds what an ended attempt says about its breaker to the
// transition that records the attempt: a success closes it, a failure of a
// counted kind counts (and may open it), anything else only gives back a
// trial the attempt held.
func (sc *scheduler) breakerOutcome(f *launch, se *stepError) {
	br := sc.breakerOf(f.u.s)
	if br == nil {
		return
	}
	sc.tx.t.Breakers = append(sc.tx.t.Breakers, breakerWriteOf(br, f.u.key, se))
}

// breakerWriteOf is what an ended attempt of key (failed with se, or nil)
// tells breaker br.
func breakerWriteOf(br *graph.Breaker, key string, se *stepError) store.BreakerWrite {
	w := store.BreakerWrite{Name: br.Name, StepKey: key, Threshold: br.Failures, Cooldown: msDuration(br.CooldownMS)}
	switch {
	case se == nil:
		w.Outcome = store.BreakerSuccess
	case breakerKinds[se.Kind]:
		w.Outcome = store.BreakerFailure
	default:
		w.Outcome = store.BreakerRelease
	}
	return w
}

// breakerRelease gives back the trial an abandoned attempt may hold.
func (sc *scheduler) breakerRelease(f *launch) {
	if br := sc.breakerOf(f.u.s); br != nil {
		sc.tx.t.Breakers = append(sc.tx.t.Breakers, store.BreakerWrite{Name: br.Name, Outcome: store.BreakerRelease, StepKey: f.u.key})
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
