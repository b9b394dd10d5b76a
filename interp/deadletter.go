package interp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// deadLetter sets a failed foreach item aside (semantics.md §5): the item,
// its index and error are stored as a dead letter, the dead_lettered event
// and alert are recorded, all in the transition that settles the item.
func (sc *scheduler) deadLetter(step, key string, index int, item any, errJSON []byte) {
	sc.tx.t.DeadLetters = append(sc.tx.t.DeadLetters, store.DeadLetterWrite{Step: step, StepKey: key, Index: index,
		Item: mustJSON(item), Error: errJSON})
	sc.tx.event("dead_lettered", key, map[string]any{"index": index, "item": item, "error": decodeJSON(errJSON)})
	msg, _ := decodeMap(errJSON)["message"].(string)
	sc.alert("dead_lettered", key, fmt.Sprintf("item %d of step %s was dead-lettered: %s", index, step, msg))
}

// DeadLetterList lists the open dead letters (all, with closed ones, when
// all is set), oldest first.
func (e *Engine) DeadLetterList(ctx context.Context, all bool) ([]store.DeadLetter, error) {
	ds, err := e.st.DeadLetterList(ctx, store.DeadLetterListParams{All: all})
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	return ds, nil
}

// DeadLetterDrop closes an open dead letter without executing it, and
// records dead_letter_dropped in its run. An unknown id wraps
// store.ErrNotFound, a closed letter store.ErrConflict.
func (e *Engine) DeadLetterDrop(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := e.openLetter(ctx, id)
	if err != nil {
		return d, err
	}
	d, err = e.st.DeadLetterUpdate(ctx, store.DeadLetterUpdateParams{ID: id, Status: store.DeadLetterDropped, Now: e.clk.Now(),
		Events: []store.EventWrite{{Kind: "dead_letter_dropped", StepKey: d.StepKey, Data: mustJSON(map[string]any{"dead_letter": id})}}})
	if err != nil {
		return d, fmt.Errorf("drop dead letter %d: %w", id, err)
	}
	return d, nil
}

// ErrRetryFailed is wrapped by DeadLetterRetry when the item failed again;
// the letter stays open with the new error.
var ErrRetryFailed = errors.New("the letter stays open")

// DeadLetterRetry executes a dead-lettered item again, on its run's bound
// graph, with the recorded item, the run's inputs and upstream outputs, and
// the same idempotency key (semantics.md §16), under the step's retry
// policy with a fresh budget: up to retry.attempts attempts, while
// retry.when holds, waiting the policy's backoff (multiplier, max_delay,
// jitter) on the engine clock between them. On success the letter is
// closed and dead_letter_retried, with the output, is recorded in its run;
// the run's status and outputs do not change. When every attempt failed
// the letter stays open with the last error, dead_letter_retry_failed is
// recorded, and the error wraps ErrRetryFailed. Canceling ctx stops the
// wait for the next attempt (and the attempt in flight), which counts as
// a failure. Only exec and http items can be retried (the other actions
// have no side effect to repeat).
//
// One letter is retried by one process at a time: the retry claims the
// letter first and renews the claim while it runs, as a worker renews a
// run's lease. A letter another process is retrying is refused with a
// *store.LetterHeldError (nothing runs); a killed retry's claim lapses
// after the engine's LeaseFor.
func (e *Engine) DeadLetterRetry(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := e.openLetter(ctx, id)
	if err != nil {
		return d, err
	}
	o := e.opts.Owner
	o.Worker = fmt.Sprintf("dlq%d", e.letterRetries.Add(1))
	owner := o.String()
	if d, err = e.claimLetter(ctx, id, owner); err != nil {
		return d, err
	}
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	stopHold := e.holdLetter(ctx, id, owner, lost)
	defer stopHold()
	d, err = e.retryLetter(ctx, d, owner)
	if d.ClaimOwner == owner {
		// It ended before any attempt (the item cannot be retried): give
		// the claim back now rather than at its lapse.
		_, _ = e.st.DeadLetterUpdate(context.WithoutCancel(ctx), store.DeadLetterUpdateParams{ID: id, Owner: owner, Status: store.DeadLetterOpen, Now: e.clk.Now()})
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) && err != nil {
		return d, fmt.Errorf("retry dead letter %d: %w", id, cause)
	}
	return d, err
}

// claimLetter claims (or renews the claim on) a letter for owner; a letter
// another process is retrying comes back as its *store.LetterHeldError.
func (e *Engine) claimLetter(ctx context.Context, id int64, owner string) (store.DeadLetter, error) {
	d, err := e.st.DeadLetterClaim(ctx, store.DeadLetterClaimParams{ID: id, Owner: owner, Now: e.clk.Now(), LeaseFor: e.opts.LeaseFor})
	var held *store.LetterHeldError
	if errors.As(err, &held) && ownerGone(held.Owner, e.opts.Owner.Host) {
		// Its retry was killed on this host: taken over at once, as a
		// dead process's runs are (reclaimDead).
		d, err = e.st.DeadLetterClaim(ctx, store.DeadLetterClaimParams{ID: id, Owner: owner, Now: e.clk.Now(), LeaseFor: e.opts.LeaseFor, Gone: held.Owner})
	}
	switch {
	case errors.As(err, &held):
		return d, held
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict):
		return e.openLetter(ctx, id) // closed meanwhile: say so as openLetter does
	case err != nil:
		return d, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	return d, nil
}

// holdLetter renews owner's claim on letter id every Heartbeat until the
// returned stop is called. A claim another process took over (this one
// stalled for a whole lease) cancels ctx through lost with the reason: the
// attempt in flight stops and the retry's end is refused by the store.
// A renewal the store failed is tried again at the next beat.
func (e *Engine) holdLetter(ctx context.Context, id int64, owner string, lost context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			t := e.clk.NewTimer(e.opts.Heartbeat)
			select {
			case <-done:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
			_, err := e.st.DeadLetterClaim(ctx, store.DeadLetterClaimParams{ID: id, Owner: owner, Now: e.clk.Now(), LeaseFor: e.opts.LeaseFor})
			var held *store.LetterHeldError
			if errors.As(err, &held) {
				lost(fmt.Errorf("another process (%s) took over dead letter %d: this one stalled for longer than its claim: %w", held.Owner, id, store.ErrLeaseLost))
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// retryLetter runs the retry of a claimed letter (DeadLetterRetry).
func (e *Engine) retryLetter(ctx context.Context, d store.DeadLetter, owner string) (store.DeadLetter, error) {
	id := d.ID
	run, err := e.st.RunGet(ctx, d.RunID)
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: load run %s: %w", id, d.RunID, err)
	}
	r, err := e.viewRunner(ctx, run)
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	s := r.l.step(d.Step)
	if s == nil {
		return d, fmt.Errorf("retry dead letter %d: the run's workflow has no step %q", id, d.Step)
	}
	if s.Action.Kind != graph.KindExec && s.Action.Kind != graph.KindHTTP {
		return d, fmt.Errorf("retry dead letter %d: step %q has a %s action; only exec and http items can be retried: %w", id, d.Step, s.Action.Kind, store.ErrConflict)
	}
	atts, err := e.st.AttemptList(ctx, run.ID, d.StepKey)
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	// An attempt still running in a run that ended was a dlq retry's whose
	// process was killed (this one holds the letter's claim now): it is
	// closed as interrupted with this retry's first attempt.
	var stale []store.AttemptWrite
	for _, a := range atts {
		r.lastAtt[d.StepKey] = max(r.lastAtt[d.StepKey], a.Attempt)
		if a.Status == store.AttemptRunning && run.Status.Terminal() {
			stale = append(stale, store.AttemptWrite{StepKey: d.StepKey, Attempt: a.Attempt, Status: store.AttemptInterrupted, FinishedAt: e.clk.Now()})
		}
	}
	u := unit{s: s, key: d.StepKey, idx: d.Index, iter: -1, item: decodeJSON(d.Item)}
	var se *stepError
	tries := 0
	notRun := "" // why the next try did not run (its breaker)
	for {
		r.now = e.clk.Now()
		l, perr := r.sched.prepare(ctx, u)
		if perr != nil {
			se = perr // the parameters do not evaluate: no attempt runs
			break
		}
		br := r.sched.breakerOf(s)
		var refused *stepError
		if br != nil {
			b, ok, berr := e.st.BreakerAcquire(ctx, store.BreakerAcquireParams{Name: br.Name, RunID: run.ID, StepKey: d.StepKey,
				Now: r.now, TrialFor: r.sched.trialFor(s)})
			if berr == nil && !ok {
				r.sched.now = r.now
				wake, detail := r.sched.breakerRefusal(br, b)
				until := wake.UTC().Format(time.RFC3339)
				if br.OnOpen != "fail" {
					// A step would park without using an attempt; a retry
					// has no run to park: nothing runs, and it says when
					// the breaker lets an attempt through.
					notRun = fmt.Sprintf("%s until %s, and a step waits for it without using an attempt; retry the letter after then (flowrun breakers shows the breaker)", detail, until)
					if tries == 0 {
						return d, fmt.Errorf("dead letter %d (%s) was not run: %s; %w", id, d.StepKey, notRun, ErrRetryFailed)
					}
					break
				}
				refused = &stepError{Kind: "breaker_open", Message: fmt.Sprintf("%s until %s, and it has on_open = \"fail\"", detail, until)}
			}
		}
		tries++
		r.lastAtt[d.StepKey]++
		l.attempt = r.lastAtt[d.StepKey]
		var res flightResult
		started := e.clk.Now()
		var bw *store.BreakerWrite
		if refused != nil {
			res.err = refused // used and failed, nothing ran, not counted
		} else {
			// The attempt is recorded running before the action starts,
			// so that a retry whose process is killed still used its
			// number: the next one numbers after it.
			running := store.AttemptWrite{StepKey: d.StepKey, Attempt: l.attempt, Status: store.AttemptRunning, Owner: e.opts.Owner.String(),
				StartedAt: started, IdempotencyKey: l.idem}
			_, _ = e.st.TransitionCommit(ctx, []store.Transition{{RunID: run.ID, Now: started, Attempts: append(stale, running)}})
			stale = nil
			f := newFlight(l, run)
			stop := context.AfterFunc(ctx, f.cancel)
			res = f.do(e)
			stop()
			f.cancel()
			if br != nil {
				w := breakerWriteOf(br, d.StepKey, res.err)
				bw = &w
			}
		}
		e.recordLetterAttempt(ctx, r, l, started, res, bw)
		if res.err == nil {
			out := r.red.clean(res.out)
			d, err = e.st.DeadLetterUpdate(context.WithoutCancel(ctx), store.DeadLetterUpdateParams{ID: id, Owner: owner, Status: store.DeadLetterRetried,
				Output: r.red.json(out), Now: e.clk.Now(), Events: []store.EventWrite{{Kind: "dead_letter_retried", StepKey: d.StepKey,
					Data: r.red.json(map[string]any{"dead_letter": id, "attempt": l.attempt, "attempts": tries, "output": out})}}})
			if err != nil {
				return d, fmt.Errorf("retry dead letter %d: %w", id, err)
			}
			return d, nil
		}
		se = res.err
		wait, again := r.sched.letterBackoff(ctx, u, se, tries)
		if !again || !e.sleepCtx(ctx, wait) {
			break
		}
	}
	se.Message = r.red.text(se.Message)
	se.Output = nil
	errJSON := mustJSON(se) // its message is redacted and it has no output
	d, err = e.st.DeadLetterUpdate(context.WithoutCancel(ctx), store.DeadLetterUpdateParams{ID: id, Owner: owner, Status: store.DeadLetterOpen, Error: errJSON,
		Now: e.clk.Now(), Events: []store.EventWrite{{Kind: "dead_letter_retry_failed", StepKey: d.StepKey,
			Data: mustJSON(map[string]any{"dead_letter": id, "error": se, "attempts": tries})}}})
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	if notRun != "" {
		return d, fmt.Errorf("dead letter %d (%s) failed again: %s; the next try was not run: %s; %w", id, d.StepKey, se.Message, notRun, ErrRetryFailed)
	}
	return d, fmt.Errorf("dead letter %d (%s) failed again: %s; %w", id, d.StepKey, se.Message, ErrRetryFailed)
}

// recordLetterAttempt stores a dead letter retry's attempt, ended, with
// the step key's other attempts, so that their numbers go on from it: the
// next try, a later dlq retry and a redrive of the run number after it
// (FLOWRUN_ATTEMPT is never given twice for one step key). The run has
// ended and nobody holds it, so the write needs no lease. It is a record:
// a store that refuses it does not undo what the attempt did, and the
// letter is updated all the same (its numbers then repeat one).
//
// bw is what the attempt tells its step's breaker (nil: it has none, or
// the breaker refused the attempt), applied in the same commit as a run's
// attempt applies it: a retry that succeeds closes the breaker, one that
// fails counts as a failure of the service.
func (e *Engine) recordLetterAttempt(ctx context.Context, r *runner, l *launch, started time.Time, res flightResult, bw *store.BreakerWrite) {
	a := store.AttemptWrite{StepKey: l.u.key, Attempt: l.attempt, Status: store.AttemptCompleted, Owner: e.opts.Owner.String(),
		StartedAt: started, FinishedAt: e.clk.Now(), IdempotencyKey: l.idem}
	if res.err != nil {
		a.Status = store.AttemptFailed
		se := *res.err
		se.Message = r.red.text(se.Message)
		se.Output = nil
		a.Error = mustJSON(&se)
		if res.err.Output != nil {
			a.Output = r.red.json(r.red.clean(res.err.Output))
		}
	} else {
		a.Output = r.red.json(r.red.clean(res.out))
	}
	t := store.Transition{RunID: r.run.ID, Now: a.FinishedAt, Attempts: []store.AttemptWrite{a}}
	if bw != nil {
		t.Breakers = []store.BreakerWrite{*bw}
	}
	_, _ = e.st.TransitionCommit(context.WithoutCancel(ctx), []store.Transition{t})
}

// letterBackoff applies the step's retry policy to the failed try (the
// tries-th) of a dead letter retry, as scheduleRetry does in a run: another
// try is due when attempts are left and retry.when holds, after the
// policy's backoff with jitter.
func (sc *scheduler) letterBackoff(ctx context.Context, u unit, se *stepError, tries int) (time.Duration, bool) {
	rp := u.s.Retry
	if rp == nil || tries >= rp.Attempts || ctx.Err() != nil || neverRetried[se.Kind] {
		return 0, false
	}
	if rp.When != nil {
		a := sc.act(&u)
		a.Error = se.asMap()
		v, err := sc.l.prog.Eval(ctx, rp.When, a)
		if b, ok := v.(bool); err != nil || !ok || !b {
			return 0, false
		}
	}
	delay := float64(rp.BackoffMS) * math.Pow(max(rp.Multiplier, 1), float64(tries-1))
	if rp.MaxDelayMS > 0 && delay > float64(rp.MaxDelayMS) {
		delay = float64(rp.MaxDelayMS)
	}
	return time.Duration(delay)*time.Millisecond + msDuration(sc.out.jitter(rp.JitterMS+1)), true
}

// sleepCtx waits d on the engine clock; it reports false when ctx ended
// first.
func (e *Engine) sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := e.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// openLetter returns an open dead letter, or an error wrapping
// store.ErrNotFound or store.ErrConflict that says what to do.
func (e *Engine) openLetter(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := e.st.DeadLetterGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return d, fmt.Errorf("no dead letter has id %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("dead letter %d: %w", id, err)
	}
	if d.Status != store.DeadLetterOpen {
		return d, fmt.Errorf("dead letter %d is already %s; only an open one can be retried or dropped: %w", id, d.Status, store.ErrConflict)
	}
	return d, nil
}
