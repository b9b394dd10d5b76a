package interp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// farFuture is the available_at of a run parked on a signal or a child
// with no timeout: a wake-up (SignalSend, a child's end) brings it forward.
const farFuture = 100 * 365 * 24 * time.Hour

// runner works on one claimed run in one goroutine: it rebuilds the run's
// state from the store, asks its scheduler to decide, commits, launches
// actions and waits for them, until the run ends, parks, is stopped or
// loses its lease. Only the runner goroutine touches its fields, except
// the supervisor's atomic flags and channels, which the pool, the
// heartbeat and the engine use to reach it.
//
// Its fields are grouped by concern, each group a type of its own in a
// file of its name (the groups are embedded, so the runner's methods read
// r.rows, r.tx, r.flights):
//
//   - runEnv (runenv.go): what the run works with and does not change once
//     the run is rebuilt: the graph, the run's row and lease, its inputs,
//     secrets and redactor.
//   - runState (runstate.go): the run's state rebuilt from the store as
//     plain data: step rows and their decoded State, attempt numbers, retry
//     budgets, signals, child runs, foreach cursors, the attempts in
//     flight, what memory keeps.
//   - decisions (decisions.go): what the current decision pass has decided
//     and not yet committed: the transition being built, the instant it is
//     decided at, the launches and stops, whether the run ended.
//   - supervisor (supervisor.go): the engine, the flights (goroutines) of
//     the actions in flight, their wait group and channels, the flags
//     other goroutines set.
//
// sched, the scheduler (scheduler_pass.go), holds every decision rule; it
// points at the first three groups and reads no clock, starts no
// goroutine and calls no store. The runner's own methods are the
// supervisor's work: the main loop, the rebuild (rebuild.go), commits
// (flush), flights, timers, carrying out holds (holdAt) and leases.
type runner struct {
	runEnv
	runState
	decisions
	supervisor
	sched scheduler
}

func (e *Engine) newRunner(run store.Run, owner string) *runner {
	r := &runner{
		runEnv: runEnv{run: run, lease: run.Lease, owner: owner},
		runState: runState{
			rows: map[string]*store.Step{}, states: map[string]*rowState{},
			lastAtt: map[string]int{}, failures: map[string]int{},
			results: map[string]expr.StepResult{}, noted: map[string]bool{},
			children: map[string]store.Run{}, inFlight: map[string]*launch{},
		},
		decisions: decisions{tx: newTxb(run.ID, run.Lease), usedAtts: run.AttemptsUsed},
		supervisor: supervisor{e: e, flights: map[string]*flight{}, doneCh: make(chan flightResult, 16), nudgeCh: make(chan struct{}, 1),
			work: make(chan *flight), quit: make(chan struct{})},
	}
	r.sched = scheduler{runEnv: &r.runEnv, runState: &r.runState, decisions: &r.decisions, out: engineOutside{e}}
	return r
}

// errStopped says the runner stopped without finishing its run (lease
// lost); the run is where the last commit left it.
var errStopped = errors.New("runner stopped")

// main works on the run until it ends, parks or stops, and returns the run
// as last committed. A lost lease returns errStopped wrapped around
// store.ErrLeaseLost.
func (r *runner) main(ctx context.Context) (store.Run, error) {
	ctx = context.WithoutCancel(ctx) // store work must finish; stopping is by flags
	defer r.waitFlights()
	if blocked, err := r.bindVersion(ctx); blocked || err != nil {
		return r.run, err
	}
	if err := r.rebuild(ctx); err != nil {
		return r.run, err
	}
	if stop, err := r.acquireSlot(ctx); stop || err != nil {
		return r.run, err
	}
	r.tx.runUpdate().Status = ptr(store.RunRunning)
	r.tx.runUpdate().WaitReason = ptr("")
	r.tx.event("claimed", "", map[string]any{"owner": r.owner, "epoch": r.lease.Epoch})
	for {
		now := r.e.clk.Now()
		if r.lost.Load() {
			r.abandonAll()
			return r.run, fmt.Errorf("run %s: %w: %w", r.run.ID, errStopped, store.ErrLeaseLost)
		}
		// The requests are read once: the whole pass decides on them.
		ev := passEvent{now: now, cancel: r.cancelReq.Load(), stop: r.halt.Load(), draining: r.drain.Load(), hold: r.e.opts.HoldTimer != nil}
		if !r.sched.control(ev) {
			if r.recheck.Swap(false) {
				if err := r.refreshExternal(ctx); err != nil {
					return r.run, err
				}
			}
			r.sched.decidePass(ctx)
		}
		if err := r.flush(ctx); err != nil {
			return r.run, err
		}
		r.cancelChildren(ctx)
		if r.ended {
			r.finish(ctx)
			return r.run, nil
		}
		r.start(ctx)
		if !r.holdUntil.IsZero() {
			if err := r.holdAt(ctx, r.holdUntil); err != nil {
				return r.run, err
			}
			if r.ended {
				r.finish(ctx)
				return r.run, nil
			}
		}
		if r.more {
			r.more = false
			continue
		}
		if err := r.wait(ctx); err != nil {
			return r.run, err
		}
	}
}

// adopt carries out what the scheduler decided about actions: it stops
// the flights of the attempts it stopped and makes flights of its
// launches (their live output writers included), to start once their
// running writes commit (hold, start).
func (r *runner) adopt(ctx context.Context) {
	for _, l := range r.stops {
		if f := r.flights[l.u.key]; f != nil && f.launch == l {
			f.cancel()
			delete(r.flights, l.u.key)
		}
	}
	r.stops = nil
	for _, l := range r.launches {
		f := newFlight(l, r.run)
		if l.exec != nil {
			f.live = newLiveOutput(ctx, r.e.st, r.e.clk, l.exec.red, l.limit, r.run.ID, l.u.key, l.attempt)
		}
		r.flights[l.u.key] = f
		r.pending = append(r.pending, f)
	}
	r.launches = nil
	if r.gateChecks != 0 {
		r.e.gates.Add(r.gateChecks)
		r.gateChecks = 0
	}
}

// flush commits what tx holds (nothing when it is empty), after adopting
// what the scheduler decided about actions.
func (r *runner) flush(ctx context.Context) error {
	r.adopt(ctx)
	if r.attsDirty {
		r.tx.runUpdate().AttemptsUsed = ptr(r.usedAtts)
		r.attsDirty = false
	}
	if r.tx.empty() {
		return nil
	}
	t := r.tx.take(r.now)
	r.red.transition(&t)
	gates := r.hold()
	err := r.e.com.commit(ctx, t)
	for _, g := range gates {
		g <- err == nil
	}
	if err != nil {
		r.pending = nil
		r.abandonAll()
		if isLeaseLost(err) {
			r.lost.Store(true)
			return fmt.Errorf("run %s: %w: %w", r.run.ID, errStopped, err)
		}
		return err
	}
	r.applyRun(t)
	if len(t.Children) > 0 {
		// The tree has a new run for the claim loop, which may be
		// asleep until this runner ends (an action of it in flight).
		r.solo.Store(false)
		r.e.wakePools()
	}
	r.observe(&t)
	if len(t.Alerts) > 0 {
		r.e.wakeAlerts()
	}
	return nil
}

// applyRun mirrors a committed run update into r.run.
func (r *runner) applyRun(t store.Transition) {
	u := t.Run
	if u == nil {
		return
	}
	if u.Status != nil {
		r.run.Status = *u.Status
	}
	if u.Outputs != nil {
		r.run.Outputs = u.Outputs
	}
	if u.Error != nil {
		r.run.Error = u.Error
	}
	if u.AvailableAt != nil {
		r.run.AvailableAt = *u.AvailableAt
	}
	if u.FinishedAt != nil {
		r.run.FinishedAt = *u.FinishedAt
	}
	if u.AttemptsUsed != nil {
		r.run.AttemptsUsed = *u.AttemptsUsed
	}
	if u.WaitReason != nil {
		r.run.WaitReason = *u.WaitReason
	}
	if u.ClearCancel {
		r.run.CancelRequested = false
	}
	if u.Release {
		r.run.Lease = store.Lease{}
	}
	if r.run.StartedAt.IsZero() {
		r.run.StartedAt = t.Now
	}
}

// finish runs the work that follows a committed end: waking this process's
// claim loops (a parent to resume, a parked run to re-claim) and cancelling
// the children of a run that failed.
func (r *runner) finish(ctx context.Context) {
	if r.run.ParentRunID != "" && r.run.Status.Terminal() {
		r.e.poke(r.run.ParentRunID)
	}
	r.e.wakePools()
}

// cancelChildren cancels the child runs that a committed transition gave
// up on: those of a run that ended, and those whose workflow step timed
// out. A crash before this is repaired when the run is claimed again
// (rebuild) or, for an ended run, not at all: its children finish on their
// own and their parent ignores them.
//
// A child with compensations to run on a cancel (or a saga under way) is
// left to a runner, as a cancel by request leaves it (Engine.cancelKeep):
// this pool claims it, since it is of the same tree, and ends it after
// them.
func (r *runner) cancelChildren(ctx context.Context) {
	for _, id := range r.afterEnd {
		kid, err := r.e.st.RunGet(ctx, id)
		if err != nil {
			continue // a crash here is repaired likewise (above)
		}
		keep, err := r.e.cancelKeep(ctx, kid)
		if err != nil {
			continue
		}
		if _, err := r.e.st.RunCancel(ctx, store.RunCancelParams{RunID: id, Now: r.e.clk.Now(), Keep: keep}); err == nil {
			r.e.beatPools()
		}
	}
	r.afterEnd = nil
}

// start launches the actions whose running attempts were just committed.
func (r *runner) start(ctx context.Context) {
	for _, f := range r.pending {
		r.goFlight(f)
	}
	r.pending = nil
}

// hold launches the exec actions among the pending flights before the commit of
// their running attempts, each with a gate that flush opens (true) or
// closes (false) when that commit returns: a program is created while the
// commit is made, and runs only once it is durable (startGated): the fork
// and the loading of the program overlap the commit (0.3 ms of each step
// of the exec benchmark on a 2-CPU machine).
func (r *runner) hold() []chan bool {
	var gates []chan bool
	rest := r.pending[:0]
	for _, f := range r.pending {
		if f.exec == nil {
			rest = append(rest, f)
			continue
		}
		f.gate = make(chan bool, 1)
		gates = append(gates, f.gate)
		r.goFlight(f)
	}
	r.pending = rest
	return gates
}

// wait blocks until an action ends, the runner is nudged, or the next wake
// time comes, then folds every action result that is ready into state.
func (r *runner) wait(ctx context.Context) error {
	next, external := r.sched.wake()
	isRecheck := false
	if external && len(r.flights) > 0 {
		if rc := r.now.Add(r.e.opts.Heartbeat); next.IsZero() || rc.Before(next) {
			next, isRecheck = rc, true
		}
	}
	res, got, fired := r.await(r.e.clk, next)
	switch {
	case got:
		now := r.e.clk.Now()
		r.absorb(now, res)
		for {
			res, ok := r.ready()
			if !ok {
				break
			}
			r.absorb(now, res)
		}
	case fired:
		if isRecheck {
			r.recheck.Store(true)
		}
	}
	return nil
}

// absorb feeds an action's result, at now, to the scheduler; the flight
// is over (a result of a flight stopped meanwhile is ignored there).
func (r *runner) absorb(now time.Time, res flightResult) {
	if r.flights[res.f.u.key] == res.f {
		delete(r.flights, res.f.u.key)
	}
	r.sched.absorb(now, attemptEnd{l: res.f.launch, out: res.out, err: res.err, output: res.output})
}

// rebuild loads the graph and the run's state from the store (invariant
// 1), and closes the attempts left running by a previous owner as
// interrupted (invariant 5).
func (r *runner) rebuild(ctx context.Context) error {
	l, heads, err := r.loadGraph(ctx)
	if heads != nil {
		defer heads.wait() // never leave the read behind, whatever happens
	}
	if err != nil {
		return err
	}
	r.l = l
	// The inputs are not held decoded: an expression that reads them
	// decodes them once per type it reads them as (scheduler.input, the cache
	// keeps the conversion), and a run whose expressions do not read a
	// large input (a foreach over it takes its items from the stored JSON,
	// foreach.go) never decodes it.
	r.inputs = nil
	r.conv = expr.NewConvCache() // the run's inputs do not change from here on
	r.secrets = secretValues(r.e.opts.Getenv, l.g.Secrets)
	r.red = newRedactor(r.secrets)
	started := r.run.StartedAt
	if started.IsZero() {
		started = r.e.clk.Now()
	}
	r.info = expr.RunInfo{ID: r.run.ID, Workflow: r.run.Workflow, Version: r.run.Version, Key: r.run.Key,
		Attempt: runAttempt(r.run), StartedAt: started.UTC().Format(time.RFC3339)}
	steps, k, err := r.loadRows(ctx, heads)
	if err != nil {
		return err
	}
	if k != nil {
		r.keep = k // set before settling, which queues each settled step
	}
	for i := range steps {
		s := steps[i]
		r.sched.restore(&s)
		if s.Status == store.StepFailed {
			if st := r.state(s.Key); st.Wait == waitChild && st.Child != "" && decodeMap(s.Error)["kind"] == "timeout" {
				// A workflow step that timed out: make sure its child was
				// canceled (the process may have died before it did so).
				if c, err := r.e.st.RunGet(ctx, st.Child); err == nil && !c.Status.Terminal() {
					r.afterEnd = append(r.afterEnd, st.Child)
				}
			}
		}
	}
	r.sched.forgetStale()
	atts, err := r.openAttempts(ctx)
	if err != nil {
		return err
	}
	if len(atts) > 0 {
		for _, a := range atts {
			if a.Status == store.AttemptRunning && r.rows[a.StepKey] != nil && ownerGone(a.Owner, r.e.opts.Owner.Host) {
				// Its process died on this host: stop what is left of its
				// action before the step runs again.
				killOrphans(r.run.ID, a.StepKey, a.Attempt, a.Owner)
			}
		}
		if r.sched.reclaim(r.e.clk.Now(), atts) {
			defer r.e.opts.Observer.Reclaimed(r.run.Workflow)
		}
	}
	if err := r.refreshExternal(ctx); err != nil {
		return err
	}
	return nil
}

// attemptQueryLimit is the number of unfinished step keys up to which the
// rebuild reads their attempts key by key; above it, one query reads all.
const attemptQueryLimit = 16

// openAttempts returns the attempts a rebuild needs: those of the step
// keys that have not finished (their attempt numbers, retry budgets and
// running attempts). A finished key never runs again (a redrive resets its
// row first), so the history of a long run is not read.
func (r *runner) openAttempts(ctx context.Context) ([]store.Attempt, error) {
	var open []string
	for key, row := range r.rows {
		if !row.Status.Terminal() {
			open = append(open, key)
		}
	}
	if len(open) == 0 {
		return nil, nil
	}
	if len(open) > attemptQueryLimit {
		atts, err := r.e.st.AttemptList(ctx, r.run.ID, "")
		if err != nil {
			return nil, fmt.Errorf("run %s: load attempts: %w", r.run.ID, err)
		}
		return atts, nil
	}
	slices.Sort(open)
	var atts []store.Attempt
	for _, key := range open {
		as, err := r.e.st.AttemptList(ctx, r.run.ID, key)
		if err != nil {
			return nil, fmt.Errorf("run %s: load attempts of step %s: %w", r.run.ID, key, err)
		}
		atts = append(atts, as...)
	}
	return atts, nil
}

// refreshExternal reloads what other processes change: pending signals and
// the state of child runs this run waits for.
func (r *runner) refreshExternal(ctx context.Context) error {
	needSignals := false
	for _, row := range r.rows {
		if row.Status != store.StepWaiting && row.Status != store.StepPending {
			continue
		}
		st := r.state(row.Key)
		if st.Wait == waitChild && st.Child != "" {
			c, err := r.e.st.RunGet(ctx, st.Child)
			if err != nil {
				return fmt.Errorf("run %s: load child run %s: %w", r.run.ID, st.Child, err)
			}
			r.children[c.ID] = c
		}
	}
	for _, s := range r.l.g.Steps {
		if s.Action.Kind == graph.KindWait {
			if row := r.rows[s.Name]; row == nil || !row.Status.Terminal() {
				needSignals = true
			}
		}
	}
	if needSignals {
		sigs, err := r.e.st.SignalList(ctx, r.run.ID, true)
		if err != nil {
			return fmt.Errorf("run %s: load signals: %w", r.run.ID, err)
		}
		r.signals = sigs
	}
	return nil
}

func attemptWrite(a *store.Attempt) store.AttemptWrite {
	return store.AttemptWrite{StepKey: a.StepKey, Attempt: a.Attempt, Status: a.Status, Owner: a.Owner,
		StartedAt: a.StartedAt, FinishedAt: a.FinishedAt, Output: a.Output, Error: a.Error, IdempotencyKey: a.IdempotencyKey}
}
