package interp

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/flowrun/flowrun/store"
)

// scheduler holds the decision logic of a run: given the run's state
// (runState), what the run works with (runEnv, read only), and the pass's
// event (passEvent: an instant, the requests, whether the supervisor can
// hold the run), it decides as data (decisions): the transition being
// built, the attempts to launch once it commits, the child runs to start
// (in the transition) and to cancel after it, the actions in flight to
// stop, whether the run ended, parked, or is held until its next timer.
// Every method runs on the runner's goroutine and returns when it
// has decided: a scheduler starts no goroutine, reads no clock, touches no
// channel or atomic flag and calls no store. What it must ask outside the
// run (a child workflow's graph, a breaker, a test's mock, a jitter draw)
// goes through out; CEL evaluation is pure computation under its cost
// limits.
//
// The runner (runner.go) is its supervisor: it rebuilds the state from
// the store, turns events (an attempt's end, a signal or a child's end, a
// timer, a cancel, a stop) into calls of the scheduler, commits what it
// decided, and turns its launches into flights.
type scheduler struct {
	*runEnv
	*runState
	*decisions
	// ev is the event of the current pass (control sets it): its instant
	// and the requests the supervisor read once at its start. While
	// ev.draining no step key of any kind begins.
	ev  passEvent
	out outside
}

// outside is what a decision pass asks beyond the run's state: the graph
// of a workflow step's child, the insert of a child run (its id and
// creation time), a breaker's shared state, Options.Mock, a jitter draw,
// and the engine options an action's parameters depend on. The engine
// answers it (engineOutside); the scheduler's tests answer it with a fake.
type outside interface {
	// childGraph resolves a workflow action's version pin to the stored
	// version it runs and its loaded graph.
	childGraph(ctx context.Context, workflow, pin string) (store.Version, *loaded, error)
	// childRun returns the insert of a new run of v with the inputs and
	// key (a fresh id, created now).
	childRun(l *loaded, v store.Version, inputs map[string]any, key string) store.RunInsertParams
	// breakerAcquire asks a breaker whether an attempt may start.
	breakerAcquire(ctx context.Context, p store.BreakerAcquireParams) (store.Breaker, bool, error)
	// mock consults Options.Mock (ok false: not mocked).
	mock(c MockCall) (out any, se *stepError, ok bool)
	// mocked probes Options.Mock (MockCall.Probe): whether the step's
	// action is mocked, and whether a test runs at all (Mock is set).
	mocked(workflow, step string) (mocked, testing bool)
	// jitter draws a number in [0, n) from the injected source (0 when
	// n <= 0).
	jitter(n int64) int64
	// environ is the worker's environment (Options.Environ).
	environ() []string
	// execUser is Options.ExecUser.
	execUser() *ExecUser
	// getenv is Options.Getenv.
	getenv(name string) string
	// leaseFor is Options.LeaseFor.
	leaseFor() time.Duration
	// traceparent is the W3C trace context of attempt n of a step key of
	// run, or "" when the engine passes none.
	traceparent(run store.Run, key string, n int) string
}

// launch is an attempt of an exec or http action that a decision pass
// started: its unit and number, and its parameters evaluated before its
// running write commits, so the action touches no state of the run. The
// supervisor turns it into a flight once the pass is over.
type launch struct {
	u       unit
	attempt int
	idem    string
	started time.Time
	timeout time.Duration
	limit   int64
	exec    *execCall
	http    *httpCall
}

// attemptEnd is the end of an attempt in flight, as the supervisor feeds
// it back: its output or its error, and its live output not yet stored.
type attemptEnd struct {
	l      *launch
	out    any
	err    *stepError
	output []store.OutputChunkWrite
}

// passEvent is what a decision pass is asked at: the instant, the
// requests the supervisor received (a cancel, a stop, a drain), and
// whether it can hold the run through a timer. A pass with no cancel or
// stop decides what the state allows now (an attempt's end, a signal, a
// child's end or a timer already folded into the state).
//
// The supervisor reads its requests once, at the start of the pass, and
// the whole pass decides on that snapshot: a request that arrives during
// a pass (a drain, a cancel, a stop) is answered by the next pass, which
// the request's nudge starts once this one is committed (and, when it
// decided a hold, once Options.HoldTimer has answered). So a drain
// requested mid-pass lets that pass finish what it decided (the step keys
// it began, their launches) and begins no step key from the next pass on
// (TestDrainMidPassTakesEffectNextPass).
type passEvent struct {
	now      time.Time
	cancel   bool // cancel requested
	stop     bool // stop now: interrupt the flights and park
	draining bool // begin no step key; park once the flights end
	// hold: the supervisor can wait for the run's next timer in place
	// (Options.HoldTimer is set), so an idle pass may decide to hold
	// (holdWake) instead of parking.
	hold bool
}

// A decision pass at ev.now is control(ev) and, when control had none of
// the event's requests to answer, decidePass: the runner's loop calls them
// in that order, and reads what other processes changed between the two.

// control takes the instant of a pass and answers what comes before any
// step: a run already ended in the transition keeps its end; a cancel
// cancels it; a stop interrupts it; a passed deadline fails it. It
// reports false when none applies: the supervisor then brings in what
// other processes changed (signals, child runs) and calls decidePass.
func (sc *scheduler) control(ev passEvent) bool {
	sc.now, sc.ev, sc.holdUntil = ev.now, ev, time.Time{}
	switch {
	case sc.ended:
		// An action's result ended the run (a retry past the deadline):
		// commit that end as it is; nothing may overwrite it.
	case (ev.cancel || sc.run.CancelRequested) && !sc.sagaRunning():
		// A cancel during the compensations is not taken: once begun they
		// run to their end (semantics.md §14).
		if sc.cancelRun() {
			return false // the cancel began the compensations: decide runs them
		}
	case ev.stop:
		sc.interruptRun()
	case !sc.run.DeadlineAt.IsZero() && !sc.now.Before(sc.run.DeadlineAt) && !sc.sagaRunning():
		sc.failRun(&stepError{Kind: "deadline", Message: fmt.Sprintf("the run passed its deadline (%s)", sc.run.DeadlineAt.Format(time.RFC3339))}, sc.firstInFlight())
	default:
		return false
	}
	return true
}

// decidePass advances every step as far as it goes at the pass's instant
// (decide). When that leaves the run idle (not ended, nothing in flight,
// nothing to launch, nothing more to decide now), it decides what the run
// does until something is due: the supervisor holds it until its next
// timer (holdUntil, when holdWake allows it) or it parks (park).
func (sc *scheduler) decidePass(ctx context.Context) {
	sc.decide(ctx)
	if sc.ended || sc.more || len(sc.inFlight) > 0 || len(sc.launches) > 0 {
		return
	}
	if at, ok := sc.holdWake(); ok {
		sc.holdUntil = at
		return
	}
	sc.park()
}

// wake is the timer the scheduler wants: when the run must be looked at
// again (the earliest wake time of a waiting step key, or the run's
// deadline; zero: none), and whether something waits on a signal or a
// child, which other processes bring (the supervisor looks for them in
// the store then).
func (sc *scheduler) wake() (time.Time, bool) {
	return sc.nextWake(sc.run.DeadlineAt)
}

// firstInFlight returns the first step key (in graph order, then by key)
// with an action in flight, or "" when none: the step a deadline names.
func (sc *scheduler) firstInFlight() string {
	for _, s := range sc.l.g.Steps {
		var keys []string
		for key, l := range sc.inFlight {
			if l.u.s == s {
				keys = append(keys, key)
			}
		}
		if len(keys) > 0 {
			slices.Sort(keys)
			return keys[0]
		}
	}
	return ""
}

// engineOutside answers a scheduler's questions with the engine: its
// store (versions, breakers), its clock and id source (a child run's
// insert), its options and its random source.
type engineOutside struct{ e *Engine }

func (o engineOutside) childGraph(ctx context.Context, workflow, pin string) (store.Version, *loaded, error) {
	v, err := o.e.resolvePin(ctx, workflow, pin)
	if err != nil {
		return v, nil, err
	}
	l, err := o.e.load(ctx, v.Workflow, v.Hash)
	return v, l, err
}

func (o engineOutside) childRun(l *loaded, v store.Version, inputs map[string]any, key string) store.RunInsertParams {
	return o.e.insertParams(l, v, inputs, key)
}

func (o engineOutside) breakerAcquire(ctx context.Context, p store.BreakerAcquireParams) (store.Breaker, bool, error) {
	return o.e.st.BreakerAcquire(ctx, p)
}

func (o engineOutside) mock(c MockCall) (any, *stepError, bool) { return o.e.mock(c) }

func (o engineOutside) mocked(workflow, step string) (bool, bool) {
	if o.e.opts.Mock == nil {
		return false, false
	}
	_, ok := o.e.opts.Mock(MockCall{Workflow: workflow, Step: step, Probe: true})
	return ok, true
}

func (o engineOutside) jitter(n int64) int64 { return o.e.int63n(n) }

func (o engineOutside) getenv(name string) string { return o.e.opts.Getenv(name) }

func (o engineOutside) environ() []string { return o.e.opts.Environ() }

func (o engineOutside) execUser() *ExecUser { return o.e.opts.ExecUser }

func (o engineOutside) leaseFor() time.Duration { return o.e.opts.LeaseFor }

func (o engineOutside) traceparent(run store.Run, key string, n int) string {
	return o.e.traceparent(run, key, n)
}

// restore folds a step row that a rebuild read from the store into the
// state: the row is its key's, a finished step is settled (visible to
// CEL as steps.NAME), a finished foreach item is noted as handled.
func (sc *scheduler) restore(s *store.Step) {
	sc.setRow(s)
	if ls := sc.l.step(s.Key); ls != nil && s.Status.Terminal() {
		sc.settle(ls, s)
	}
	if s.Index >= 0 && s.Iteration < 0 && s.Status.Terminal() {
		sc.noted[s.Key] = true
	}
}

// forgetStale drops, once every row is restored, the until iterations
// that no later decision reads (runState.stale).
func (sc *scheduler) forgetStale() {
	for key, row := range sc.rows {
		if sc.stale(row) {
			sc.forget(key)
		}
	}
}

// reclaim folds the attempts of the unfinished step keys that a rebuild
// read into the state, at now: the attempt numbers, the retry budgets,
// and every attempt found running, whose worker is gone (invariant 5):
// it is closed as interrupted, its step key is pending again with one
// more interruption counted, and neither limits.attempts nor the retry
// budget pays for it. It reports whether it closed one. Killing what is
// left of such an attempt's process is the supervisor's (killOrphans).
func (sc *scheduler) reclaim(now time.Time, atts []store.Attempt) (reclaimed bool) {
	for _, a := range atts {
		if sc.rows[a.StepKey] == nil {
			continue // a forgotten until iteration: it never runs again
		}
		if a.Attempt > sc.lastAtt[a.StepKey] {
			sc.lastAtt[a.StepKey] = a.Attempt
		}
		switch a.Status {
		case store.AttemptFailed:
			if a.Attempt > sc.state(a.StepKey).Base {
				sc.failures[a.StepKey]++
			}
		case store.AttemptRunning:
			reclaimed = true
			a.Status = store.AttemptInterrupted
			a.FinishedAt = now
			a.Error = mustJSON(&stepError{Kind: "interrupted", Message: "the worker running this attempt (" + a.Owner + ") stopped before it finished; the step runs again"})
			sc.tx.attempt(attemptWrite(&a))
			sc.tx.event("interrupted", a.StepKey, map[string]any{"attempt": a.Attempt, "owner": a.Owner})
			sc.alert("interrupted", a.StepKey, fmt.Sprintf("the worker running step %s (%s) stopped before it finished; the step runs again", a.StepKey, a.Owner))
			// Neither limits.attempts nor the retry budget pays for a
			// kill; the run of interruptions is counted instead.
			sc.giveBackAttempt()
			if row := sc.rows[a.StepKey]; row != nil && row.Status == store.StepRunning {
				c := *row
				c.Status = store.StepPending
				st := *sc.state(a.StepKey)
				st.Interrupts++
				sc.put(&c, &st)
			}
		}
	}
	return reclaimed
}
