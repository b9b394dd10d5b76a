package interp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/internal/deepstack"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
)

// pool claims runs and runs one runner goroutine per claimed run, with a
// heartbeat that extends their leases. Drive and Worker are both a pool:
// Drive restricted to one run tree, a Worker to any run.
type pool struct {
	e       *Engine
	owner   store.Owner
	root    string
	slots   int
	wake    chan struct{}
	beatNow chan struct{}
	done    chan poolDone

	mu     sync.Mutex
	active map[string]*runner
	wg     sync.WaitGroup
	// reserved counts the slots of claims in progress: a claim reserves
	// its free slots first, so two claims (the claim loop's and a group
	// commit's) never take more runs than the pool has slots. freed is
	// signaled when a reservation is given back.
	reserved int
	freed    *sync.Cond
	// batch makes the engine's group commit claim runs for the pool's free
	// slots (a worker's pool); batchCtx is then the context of the runners
	// it starts. draining and halted say that Worker.Stop or haltAll began:
	// no more claims, and runs claimed meanwhile start drained or halted.
	batch    bool
	batchCtx context.Context
	draining bool
	halted   bool

	lastReclaim time.Time
	// orphans are runs whose runner stopped on a store error while the
	// pool still holds their lease: reclaimOrphans takes them back (a
	// claim of its own lease) once the store answers again.
	orphans map[string]bool
}

type poolDone struct {
	r   *runner
	run store.Run
	err error
}

func newPool(e *Engine, root string, slots int) *pool {
	p := &pool{e: e, root: root, slots: max(slots, 1), wake: make(chan struct{}, 1),
		beatNow: make(chan struct{}, 1), active: map[string]*runner{}}
	// Runners that end in a group commit are replaced in that commit, so
	// up to twice the slots may be sending their end at once.
	p.done = make(chan poolDone, 2*p.slots)
	p.freed = sync.NewCond(&p.mu)
	e.addPool(p)
	return p
}

// claim leases up to the free slots and starts a runner for each run.
func (p *pool) claim(ctx context.Context) (int, error) {
	if p.solo() {
		return 0, nil // the runners hold the whole of their trees (hold.go)
	}
	p.reclaimDead(ctx)
	free := p.reserve(0)
	if free <= 0 {
		return 0, nil
	}
	runs, err := p.e.st.RunClaim(ctx, store.RunClaimParams{Owner: p.owner.String(), Now: p.e.clk.Now(),
		LeaseFor: p.e.opts.LeaseFor, Limit: free, RootRunID: p.root})
	p.start(ctx, runs, free)
	if err != nil {
		return 0, fmt.Errorf("claim runs: %w", err)
	}
	return len(runs), nil
}

// reclaimOrphans takes back the runs this pool stopped working on after a
// store error (orphans), with a claim of its own lease (RunClaimParams.Own):
// the store answers again, and waiting out the pool's own lease would
// only delay them. Each is rebuilt from the store like any claimed run.
// A run another worker took meanwhile is not claimed (its lease is no
// longer this pool's). It returns the number of runs taken back.
func (p *pool) reclaimOrphans(ctx context.Context) (int, error) {
	p.mu.Lock()
	ids := make([]string, 0, len(p.orphans))
	for id := range p.orphans {
		ids = append(ids, id)
	}
	p.orphans = nil
	p.mu.Unlock()
	slices.Sort(ids)
	n := 0
	for i, id := range ids {
		free := p.reserve(0)
		if free <= 0 {
			p.keepOrphans(ids[i:])
			return n, nil
		}
		runs, err := p.e.st.RunClaim(ctx, store.RunClaimParams{Owner: p.owner.String(), Now: p.e.clk.Now(),
			LeaseFor: p.e.opts.LeaseFor, Limit: 1, RunID: id, Own: true})
		p.start(ctx, runs, free)
		if err != nil {
			p.keepOrphans(ids[i:])
			return n, fmt.Errorf("take back run %s: %w", id, err)
		}
		n += len(runs)
	}
	return n, nil
}

// keepOrphans puts runs back among the orphans, to take back later.
func (p *pool) keepOrphans(ids []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.orphans == nil {
		p.orphans = map[string]bool{}
	}
	for _, id := range ids {
		p.orphans[id] = true
	}
}

// leaseLost tells the Observer that runner r was fenced off its run: the
// steps it abandoned and, read from the store, who holds the run now.
func (p *pool) leaseLost(ctx context.Context, r *runner) {
	taken := ""
	if cur, err := p.e.st.RunGetHead(context.WithoutCancel(ctx), r.run.ID); err == nil {
		taken = cur.Lease.Owner
	}
	steps := slices.Clone(r.abandoned)
	slices.Sort(steps)
	p.e.opts.Observer.LeaseLost(telemetry.LeaseLoss{Run: telRun(r.run), Steps: steps, TakenBy: taken})
}

// reserve reserves the free slots of the pool for a claim and returns how
// many; the claim gives them back with start. ending counts the runners
// that leave the pool when the claim commits (their transitions in the
// same commit release their runs).
func (p *pool) reserve(ending int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.draining || p.halted {
		return 0
	}
	free := p.slots - len(p.active) - p.reserved + ending
	if free <= 0 {
		return 0
	}
	p.reserved += free
	return free
}

// startRuns starts the runs a group commit claimed for n reserved slots.
func (p *pool) startRuns(runs []store.Run, n int) {
	p.start(p.batchCtx, runs, n)
}

// start gives back n reserved slots and starts a runner for each run
// claimed with them.
func (p *pool) start(ctx context.Context, runs []store.Run, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved -= n
	p.freed.Broadcast()
	if len(runs) > 0 {
		obs := p.e.opts.Observer
		obs.Claimed(len(runs))
		for _, run := range runs {
			if run.Lease.Epoch == 1 {
				obs.RunStarted(telRun(run))
			}
		}
	}
	for _, run := range runs {
		r := p.e.newRunner(run, p.owner.String())
		if p.draining {
			r.drain.Store(true)
		}
		if p.halted {
			r.halt.Store(true)
		}
		p.active[run.ID] = r
		p.e.register(r)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			// A run's store calls go deep (SQLite's parser and pager).
			deepstack.Grow()
			final, err := r.main(ctx)
			p.e.unregister(r)
			p.mu.Lock()
			if p.active[r.run.ID] == r {
				delete(p.active, r.run.ID)
			}
			if err != nil && !errors.Is(err, errStopped) && p.batch {
				if p.orphans == nil {
					p.orphans = map[string]bool{}
				}
				p.orphans[r.run.ID] = true
			}
			p.mu.Unlock()
			if errors.Is(err, store.ErrLeaseLost) {
				p.leaseLost(ctx, r)
			}
			p.done <- poolDone{r: r, run: final, err: err}
		}()
	}
}

// batchPools returns the pools whose free slots the group commit fills.
func (e *Engine) batchPools() []*pool {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ps []*pool
	for p := range e.pools {
		if p.batch {
			ps = append(ps, p)
		}
	}
	return ps
}

// reclaimEvery is how often a pool looks for leases held by dead processes
// of its host: a worker that died while others of the host run has its
// runs resumed within about this long, not at its leases' expiry.
const reclaimEvery = time.Second

// reclaimDead frees, at most once per reclaimEvery, the leases held by
// processes of this host that no longer exist, so their runs are resumed
// at once instead of at lease expiry. The check is one indexed read of the
// distinct lease owners and a kill(pid, 0) for each of this host's.
func (p *pool) reclaimDead(ctx context.Context) {
	now := p.e.clk.Now()
	if !p.lastReclaim.IsZero() && now.Sub(p.lastReclaim) < reclaimEvery {
		return
	}
	p.lastReclaim = now
	owners, err := p.e.st.RunLeaseOwners(ctx, now)
	if err != nil {
		return
	}
	var dead []string
	for _, o := range owners {
		host, pid, ok := parseOwner(o)
		if ok && host == p.owner.Host && pid != p.owner.PID && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			dead = append(dead, o)
		}
	}
	if len(dead) > 0 {
		_, _ = p.e.st.LeaseExpire(ctx, store.LeaseExpireParams{Owners: dead, Now: now})
	}
}

// parseOwner splits "host/pid/worker".
func parseOwner(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", 0, false
	}
	rest := s[:i]
	j := strings.LastIndexByte(rest, '/')
	if j < 0 {
		return "", 0, false
	}
	pid, err := strconv.Atoi(rest[j+1:])
	return rest[:j], pid, err == nil
}

// heartbeat extends the leases of the pool's runners every Heartbeat (or
// at once on beatNow), and tells runners whose lease was lost or whose run
// has a cancel request. It returns when stop is closed.
func (p *pool) heartbeat(ctx context.Context, stop <-chan struct{}) {
	deepstack.Grow() // a goroutine of its own that writes the store
	for {
		t := p.e.clk.NewTimer(p.e.opts.Heartbeat)
		select {
		case <-t.C():
		case <-p.beatNow:
			t.Stop()
		case <-stop:
			t.Stop()
			return
		}
		p.mu.Lock()
		leases := make(map[string]int64, len(p.active))
		rs := make(map[string]*runner, len(p.active))
		for id, r := range p.active {
			leases[id] = r.lease.Epoch
			rs[id] = r
		}
		p.mu.Unlock()
		if len(leases) == 0 {
			continue
		}
		hbs, err := p.e.st.RunHeartbeat(ctx, store.RunHeartbeatParams{Owner: p.owner.String(), Leases: leases,
			Now: p.e.clk.Now(), LeaseFor: p.e.opts.LeaseFor})
		if err != nil {
			continue // the next beat retries; a lease that expires meanwhile is fenced at commit
		}
		for _, hb := range hbs {
			r := rs[hb.RunID]
			if r == nil {
				continue
			}
			if hb.Lost {
				r.lost.Store(true)
				r.nudge()
			}
			if hb.CancelRequested {
				r.cancelReq.Store(true)
				r.nudge()
			}
		}
	}
}

// listen calls ww.WaitForWork in a goroutine: note receives its result,
// and stop ends the wait (if it goes on) and returns once the goroutine
// has returned, whether or not note was read.
func listen(ctx context.Context, ww store.WorkWaiter) (note <-chan error, stop func()) {
	wctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1) // never blocks the goroutine
	done := make(chan struct{})
	go func() {
		defer close(done)
		deepstack.Grow() // the wait reads the store
		ch <- ww.WaitForWork(wctx)
	}()
	return ch, func() {
		cancel()
		<-done
	}
}

// watchCancels brings a cancel request made by another process to the
// pool's runners within a poll interval (Options.Poll) rather than at the
// next heartbeat: every poll interval, and on a store with notifications
// also as soon as one arrives, it reads which of the runs it works on have
// a cancel request pending. (A cancel from this process reaches them at
// once through beatPools.) It returns when stop is closed.
func (p *pool) watchCancels(ctx context.Context, stop <-chan struct{}) {
	deepstack.Grow() // a goroutine of its own that reads the store
	cp, ok := p.e.st.(store.CancelPoller)
	if !ok {
		return // the heartbeat alone reports cancel requests
	}
	ww, _ := p.e.st.(store.WorkWaiter)
	notified := false
	var gate listenGate
	for {
		if !p.awaitCancelCheck(ctx, ww, p.count() > 0, &notified, &gate, stop) {
			return
		}
		p.mu.Lock()
		rs := make(map[string]*runner, len(p.active))
		ids := make([]string, 0, len(p.active))
		for id, r := range p.active {
			if !r.cancelReq.Load() {
				rs[id] = r
				ids = append(ids, id)
			}
		}
		p.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		got, err := cp.RunCancelRequested(ctx, ids)
		if err != nil {
			continue // the next check (or heartbeat) retries
		}
		for _, id := range got {
			if r := rs[id]; r != nil {
				r.cancelReq.Store(true)
				r.nudge()
			}
		}
	}
}

// awaitCancelCheck waits a poll interval on the engine clock or, when the
// pool has runs to watch and the store notifies, until a notification
// comes first. It reports false when stop is closed.
//
// gate backs off a store that fails to listen (listenGate): while it is
// shut, the check waits out the poll interval without asking the store.
// notified says that the last check followed a notification; it is set
// when this one does. Notifications come with most commits of a busy
// store, so a check that followed one is followed by a pause of an eighth
// of the poll interval before the next wait.
func (p *pool) awaitCancelCheck(ctx context.Context, ww store.WorkWaiter, busy bool, notified *bool, gate *listenGate, stop <-chan struct{}) bool {
	if *notified {
		*notified = false
		gap := p.e.clk.NewTimer(p.e.opts.Poll / 8)
		select {
		case <-gap.C():
		case <-stop:
			gap.Stop()
			return false
		}
	}
	t := p.e.clk.NewTimer(p.e.opts.Poll)
	defer t.Stop()
	if ww == nil || !busy || !gate.open(p.e.clk.Now()) {
		select {
		case <-t.C():
			return true
		case <-stop:
			return false
		}
	}
	note, stopListen := listen(ctx, ww)
	defer func() {
		stopListen()
		if note != nil { // not read: the wait may have failed at the last moment
			gate.lapsed(note, p.e.clk.Now(), p.e.opts.Poll)
		}
	}()
	select {
	case <-t.C():
		return true
	case <-stop:
		return false
	case err := <-note:
		note = nil
		if err == nil {
			gate.ok()
			*notified = true
			return true
		}
		// The store could not listen: poll, and do not ask it again
		// before the gate opens.
		gate.failed(p.e.clk.Now(), p.e.opts.Poll)
	}
	// The store cannot tell of commits now: wait out the poll interval.
	select {
	case <-t.C():
		return true
	case <-stop:
		return false
	}
}

// count returns the runners of the pool, counting the slots reserved by
// claims in progress.
func (p *pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.active) + p.reserved
}

// solo reports whether every runner of the pool holds its run through its
// timers as the whole of its tree (runner.solo), with no claim in progress.
func (p *pool) solo() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reserved > 0 || len(p.active) == 0 {
		return false
	}
	for _, r := range p.active {
		if !r.solo.Load() {
			return false
		}
	}
	return true
}

// drainAll makes every runner, and those of claims in progress, start no
// new action and park when their actions end; the pool claims no more.
func (p *pool) drainAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draining = true
	for _, r := range p.active {
		r.drain.Store(true)
		r.nudge()
	}
}

// haltAll stops every runner now and waits for them (invariant 9). Claims
// in progress end first, so their runs are stopped too.
func (p *pool) haltAll() {
	p.mu.Lock()
	p.halted = true
	for p.reserved > 0 {
		p.freed.Wait()
	}
	for _, r := range p.active {
		r.halt.Store(true)
		r.nudge()
	}
	p.mu.Unlock()
	p.wg.Wait()
	for {
		select {
		case <-p.done:
		default:
			return
		}
	}
}

// sleep waits up to d (on the engine clock) for a wake-up, a runner to end
// or ctx; it returns the ended runner if that is what woke it.
func (p *pool) sleep(ctx context.Context, d time.Duration, stop <-chan struct{}) *poolDone {
	var tc <-chan time.Time
	if d >= 0 {
		t := p.e.clk.NewTimer(d)
		defer t.Stop()
		tc = t.C()
	}
	select {
	case pd := <-p.done:
		return &pd
	case <-p.wake:
	case <-tc:
	case <-ctx.Done():
	case <-stop:
	}
	return nil
}

// Drive works on a run and its descendant child runs in this process until
// the run ends, is blocked, or is parked waiting for the outside (a
// signal, a queue slot: no run of its tree waits on a timer), and returns
// the run as stored then, without its inputs (store.RunGetHead: the caller
// has them, and a large input read again would be the peak of the process
// that ran a long foreach over it). Timers are waited out (up to Options.ParkWait
// when that is set). The CLI exits 0/1 on a terminal run and 3 on a parked
// one (see StatusOf).
//
// When ctx is canceled Drive parks safely: actions in flight are killed and
// recorded interrupted, the runs are released due now, and Drive returns
// the run with an error wrapping ctx's error. A store failure is returned
// as an error after the other runners are stopped.
func (e *Engine) Drive(ctx context.Context, rootRunID string) (store.Run, error) {
	return e.DriveDrain(ctx, rootRunID, nil)
}

// DriveDrain is Drive that also stops gracefully (durability.md,
// Shutdown): once drain is closed it claims no more runs and starts no new
// action, lets the actions in flight finish and records their results,
// parks the runs due now, and returns the run as stored then (without
// its inputs, as Drive). Canceling
// ctx while it drains (the grace period is over, or a second Ctrl-C) stops
// the actions still in flight, as for Drive.
func (e *Engine) DriveDrain(ctx context.Context, rootRunID string, drain <-chan struct{}) (store.Run, error) {
	p := newPool(e, rootRunID, e.opts.Concurrency)
	defer e.removePool(p)
	stop := make(chan struct{})
	var hb sync.WaitGroup
	hb.Add(1)
	go func() {
		defer hb.Done()
		p.heartbeat(context.WithoutCancel(ctx), stop)
	}()
	hb.Add(1)
	go func() {
		defer hb.Done()
		p.watchCancels(context.WithoutCancel(ctx), stop)
	}()
	defer func() {
		close(stop)
		hb.Wait()
	}()
	defer p.startAlerts(ctx)()
	sctx := context.WithoutCancel(ctx)
	get := func() (store.Run, error) {
		// Without its inputs: the caller has them, and a large input
		// read again at the end would be the peak of a long foreach.
		run, err := e.st.RunGetHead(sctx, rootRunID)
		if err != nil {
			return run, fmt.Errorf("drive run %s: %w", rootRunID, err)
		}
		return run, nil
	}
	fail := func(err error) (store.Run, error) {
		p.haltAll()
		run, gerr := get()
		if gerr != nil {
			return run, errors.Join(err, gerr)
		}
		return run, err
	}
	draining := false
	for {
		if ctx.Err() != nil {
			run, _ := fail(ctx.Err())
			return run, fmt.Errorf("drive run %s: stopped and parked: %w", rootRunID, ctx.Err())
		}
		if !draining && closed(drain) {
			draining = true
			p.drainAll()
		}
		if draining {
			if p.count() == 0 {
				if err := p.reapDone(); err != nil {
					return fail(err)
				}
				return get()
			}
			if pd := p.sleep(ctx, -1, nil); pd != nil && pd.err != nil && !errors.Is(pd.err, errStopped) {
				return fail(pd.err)
			}
			continue
		}
		n, err := p.claim(sctx)
		if err != nil {
			return fail(err)
		}
		if p.count() > 0 {
			// While some runs of the tree work here, another may be parked
			// on a timer (a parent's step timeout or sleep next to a child
			// that runs): wake for it too, not only when a runner ends.
			wait := time.Duration(-1)
			if p.solo() {
				// The run that holds through its timers is the whole tree:
				// only its end (or a child it starts) needs the loop.
			} else if next, ok, err := e.st.RunNextAvailable(sctx, rootRunID); err != nil {
				return fail(fmt.Errorf("drive run %s: %w", rootRunID, err))
			} else if ok {
				if wait = next.Sub(e.clk.Now()); wait <= 0 {
					wait = e.opts.Poll // due but not claimed (the pool is full): look again soon
				}
			}
			if pd := p.sleep(ctx, wait, drain); pd != nil {
				if pd.err != nil && !errors.Is(pd.err, errStopped) {
					return fail(pd.err)
				}
			}
			continue
		}
		// Nothing of the tree is running here: drain finished runners.
		if err := p.reapDone(); err != nil {
			return fail(err)
		}
		run, err := get()
		if err != nil {
			return run, err
		}
		if run.Status.Terminal() || run.Status == store.RunBlocked {
			return run, nil
		}
		next, ok, err := e.st.RunNextAvailable(sctx, rootRunID)
		if err != nil {
			return run, fmt.Errorf("drive run %s: %w", rootRunID, err)
		}
		now := e.clk.Now()
		if !ok {
			return run, nil
		}
		wait := next.Sub(now)
		if wait <= 0 {
			if n > 0 {
				continue
			}
			wait = e.opts.Poll // due but not claimable: leased by another process
		} else if e.opts.ParkWait < 0 || (e.opts.ParkWait > 0 && wait > e.opts.ParkWait) {
			return run, nil
		} else if timed, err := e.treeWaitsOnTimer(sctx, run); err != nil {
			return run, fmt.Errorf("drive run %s: %w", rootRunID, err)
		} else if !timed {
			return run, nil
		} else if run.Lease.Owner != "" && run.LeaseExpiresAt.After(now) {
			// Another process (a worker) works on the run: it may end or
			// park it long before its lease would lapse, which is what
			// next says. Look again every poll interval, not at the lease.
			wait = min(wait, e.opts.Poll)
		}
		if pd := p.sleep(ctx, wait, drain); pd != nil && pd.err != nil && !errors.Is(pd.err, errStopped) {
			return fail(pd.err)
		}
	}
}

// reapDone takes the ends of the runners that finished and have not been
// taken yet, and returns the first failure among them (a runner stopped on
// purpose is none).
func (p *pool) reapDone() error {
	var first error
	for {
		select {
		case pd := <-p.done:
			if first == nil && pd.err != nil && !errors.Is(pd.err, errStopped) {
				first = pd.err
			}
		default:
			return first
		}
	}
}

// closed reports whether c is closed (a nil c never is).
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// timerWait reports whether reason is that of a run parked on a timer
// (see park): time alone makes it due.
func timerWait(reason string) bool {
	return reason == "timer" || reason == "retry" || strings.HasPrefix(reason, "breaker:")
}

// treeWaitsOnTimer reports whether some unfinished run of root's tree
// (root itself, or a descendant) is parked on a timer, so that waiting in
// this process moves the tree on. A tree whose runs wait only for the
// outside (a signal, a queue slot, a version decision) or for each other
// does not.
func (e *Engine) treeWaitsOnTimer(ctx context.Context, root store.Run) (bool, error) {
	queue := []store.Run{root}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if r.Status.Terminal() {
			continue
		}
		if r.Status != store.RunWaiting || timerWait(r.WaitReason) {
			return true, nil
		}
		if r.WaitReason != "child" {
			continue
		}
		kids, err := e.st.RunChildren(ctx, r.ID)
		if err != nil {
			return false, err
		}
		queue = append(queue, kids...)
	}
	return false, nil
}
