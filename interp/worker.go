package interp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowrun/flowrun/store"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Concurrency is how many runs the worker works on at once (default 16).
	Concurrency int
	// Version is the flowrun build the worker registers with
	// (store.WorkerInfo.Version).
	Version string
}

// Worker is a long-lived claim loop over every run of the store: it claims
// up to its free slots, runs them, and sleeps until the next run is due or
// the poll interval passes; work enqueued by this process starts at once.
type Worker struct {
	e    *Engine
	p    *pool
	mu   sync.Mutex
	run  bool
	stop chan struct{} // closed by Stop: claim no more, drain
	halt chan struct{} // closed when the grace period is over
	done chan struct{}
	// err is the last store error of the failing period the loop is in,
	// nil once the store answers again: what Stop returns.
	err  error
	dead error // the store error that ended the loop

	// listen backs off a store that fails to listen: the idle loop polls
	// without asking it again until the gate opens. Owned by the loop.
	listen listenGate

	version string // registered in the store's registry of workers
}

// NewWorker returns a worker on e.
func NewWorker(e *Engine, o WorkerOptions) *Worker {
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	w := &Worker{e: e, stop: make(chan struct{}), halt: make(chan struct{}), done: make(chan struct{}), version: o.Version}
	w.p = newPool(e, "", o.Concurrency)
	return w
}

// Start starts the claim loop in the background. Canceling ctx stops the
// worker at once (runs in flight are interrupted and parked, invariant 9);
// Stop drains it gracefully.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run {
		return errors.New("start worker: the worker is already started; create a new one")
	}
	w.run = true
	// The engine's group commit claims runs for the worker's free slots.
	w.e.mu.Lock()
	w.p.batch = true
	w.p.batchCtx = context.WithoutCancel(ctx)
	w.e.mu.Unlock()
	go w.loop(ctx)
	return nil
}

// Stop drains the worker: it stops claiming, lets the actions in flight
// finish (starting no new ones) until ctx is done, then stops them and
// releases their runs, and returns when the loop has ended. It returns
// the store error of the failing period the worker was still in when it
// stopped (its runs could not all be released then), nil when the store
// answered: a store fault the worker recovered from is not its outcome.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	started := w.run
	w.mu.Unlock()
	if !started {
		w.e.removePool(w.p)
		return nil
	}
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		close(w.halt)
		<-w.done
	}
	return w.err
}

// Done is closed when the claim loop has ended: after Stop, when the
// context given to Start is canceled, or when the loop died because the
// store kept failing (see Err).
func (w *Worker) Done() <-chan struct{} { return w.done }

// Err returns the store error that ended the claim loop, or nil while it
// runs and when it ended because it was stopped. A loop dies when no claim
// has succeeded for a whole lease period (Options.LeaseFor) while claims or
// commits kept failing, or at once when the database schema is newer than
// this binary: its runs are interrupted and released first, so another
// worker resumes them.
func (w *Worker) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dead
}

func (w *Worker) loop(ctx context.Context) {
	defer close(w.done)
	defer w.e.removePool(w.p)
	sctx := context.WithoutCancel(ctx)
	hstop := make(chan struct{})
	var hb sync.WaitGroup
	hb.Add(1)
	go func() {
		defer hb.Done()
		w.p.heartbeat(sctx, hstop)
	}()
	hb.Add(1)
	go func() {
		defer hb.Done()
		w.p.watchCancels(sctx, hstop)
	}()
	hb.Add(1)
	go func() {
		defer hb.Done()
		w.register(sctx, hstop)
	}()
	defer func() {
		close(hstop)
		hb.Wait()
	}()
	defer w.p.startAlerts(ctx)()
	draining := false
	var failingSince time.Time // the first of the store errors since the last good claim
	var lastClaim time.Time
	var nextFire time.Time // when FireDue next reads the due schedules (cron.go)
	// When the schema is next read: a newer flowrun that migrated the
	// database while this worker runs stops it (checkSchema).
	nextSchema := w.e.clk.Now().Add(w.e.opts.Heartbeat)
	for {
		select {
		case <-ctx.Done():
			w.p.haltAll()
			return
		case <-w.halt:
			w.p.haltAll()
			return
		case <-w.stop:
			if !draining {
				draining = true
				w.p.drainAll()
			}
		default:
		}
		if draining {
			if w.p.count() == 0 {
				return
			}
			select {
			case <-w.p.done:
			case <-w.halt:
			case <-ctx.Done():
			}
			continue
		}
		// With few slots free, wait (up to a poll interval) for more runners
		// to end before claiming, so that one claim commit takes several
		// runs rather than one per run.
		now := w.e.clk.Now()
		if free := w.p.slots - w.p.count(); free >= claimBatch(w.p.slots) || free > 0 && !now.Before(lastClaim.Add(w.e.opts.Poll)) {
			lastClaim = now
			_, err := w.p.claim(sctx)
			if err == nil && !failingSince.IsZero() {
				err = w.recovered(sctx, &failingSince)
			}
			if err != nil && w.failed(err, &failingSince) {
				return
			}
		}
		if now := w.e.clk.Now(); !now.Before(nextSchema) {
			nextSchema = now.Add(w.e.opts.Heartbeat)
			if err := w.checkSchema(sctx); err != nil {
				w.die(err)
				return
			}
		}
		if now := w.e.clk.Now(); !now.Before(nextFire) {
			nextFire = now.Add(w.e.opts.Poll)
			// A store failure here also fails the claim, which counts it.
			_, _ = w.e.FireDue(sctx)
		}
		wait := w.e.opts.Poll
		idle := false
		switch free := w.p.slots - w.p.count(); {
		case free == 0:
			wait = -1 // full: wait for a runner to end
		case free < claimBatch(w.p.slots):
			wait = lastClaim.Add(w.e.opts.Poll).Sub(w.e.clk.Now())
		default:
			idle = true
			if next, ok, err := w.e.st.RunNextAvailable(sctx, ""); err == nil && ok {
				if d := next.Sub(w.e.clk.Now()); d > 0 && d < wait {
					wait = d
				}
			}
		}
		if d := nextFire.Sub(w.e.clk.Now()); wait < 0 || d < wait {
			wait = max(d, 0)
		}
		var pd *poolDone
		if idle {
			pd = w.idle(ctx, wait)
		} else {
			pd = w.p.sleep(ctx, wait, w.stop)
		}
		if pd != nil && pd.err != nil && !errors.Is(pd.err, errStopped) && w.failed(pd.err, &failingSince) {
			return
		}
	}
}

// idle waits up to d, with slots free, for work to claim. It returns early
// when this process enqueues work (the pool's wake), a runner ends (its
// poolDone, for the caller), the worker stops, or another process made a
// run claimable: every quarter of the poll interval it reads when the next
// run is claimable (RunNextAvailable, a read that takes no write lock) and
// returns when one is due, so work enqueued by another process starts
// within about Poll/4 (50 ms by default) without a claim transaction each
// time. On a store with notifications (Postgres LISTEN/NOTIFY, SQLite's
// log watched with inotify) a notification also ends a nap at once, so
// such work starts within milliseconds; it is checked the same way. A
// busy store notifies on most commits (SQLite on every commit of every
// process), so after a notification that brought nothing due the next
// nap ignores notifications for notifyGap: an idle worker then reads at
// most a few hundred times a second however busy the other processes are.
func (w *Worker) idle(ctx context.Context, d time.Duration) *poolDone {
	clk := w.e.clk
	end := clk.Now().Add(d)
	check := max(w.e.opts.Poll/4, time.Millisecond)
	ww, _ := w.e.st.(store.WorkWaiter)
	quiet := false // the last check followed a notification and found nothing
	for {
		left := end.Sub(clk.Now())
		if left <= 0 {
			return nil
		}
		var pd *poolDone
		var ended, notified bool
		if quiet {
			pd, ended, _ = w.nap(ctx, min(left, w.notifyGap()), nil)
			quiet = false
		} else if ww != nil && !w.listen.open(clk.Now()) {
			pd, ended, _ = w.nap(ctx, min(left, check), nil)
		} else {
			pd, ended, notified = w.nap(ctx, min(left, check), ww)
		}
		if ended {
			return pd
		}
		next, ok, err := w.e.st.RunNextAvailable(context.WithoutCancel(ctx), "")
		if err != nil || ok && !next.After(clk.Now()) {
			return nil // work is due (or the store failed: the claim meets it)
		}
		quiet = notified
	}
}

// notifyGap is how long an idle worker ignores notifications after one
// that brought nothing due: Poll/64 (about 3 ms by default), at least 1 ms.
func (w *Worker) notifyGap() time.Duration { return max(w.e.opts.Poll/64, time.Millisecond) }

// nap sleeps d on the engine clock or until a notification of ww (if any)
// arrives (notified). It reports ended when the wait must end at once: a
// runner ended (pd), the pool was woken, the worker stops or ctx ends.
func (w *Worker) nap(ctx context.Context, d time.Duration, ww store.WorkWaiter) (pd *poolDone, ended, notified bool) {
	t := w.e.clk.NewTimer(d)
	defer t.Stop()
	var note <-chan error
	if ww != nil {
		var stop func()
		note, stop = listen(ctx, ww)
		defer func() {
			stop()
			if note != nil { // not read: the wait may have failed at the last moment
				w.listen.lapsed(note, w.e.clk.Now(), w.e.opts.Poll)
			}
		}()
	}
	for {
		select {
		case x := <-w.p.done:
			return &x, true, false
		case <-w.p.wake:
			return nil, true, false
		case <-w.stop:
			return nil, true, false
		case <-ctx.Done():
			return nil, true, false
		case <-t.C():
			return nil, false, false
		case err := <-note:
			note = nil
			if err == nil {
				w.listen.ok()
				return nil, false, true // notified: check what is due
			}
			// The store could not listen: wait out the nap, and do not
			// ask it again before the gate opens.
			w.listen.failed(w.e.clk.Now(), w.e.opts.Poll)
		}
	}
}

// listenGate spaces out the attempts to listen for commits (WaitForWork)
// of a store that fails them: after n failures in a row it stays shut for
// listenBackoff(poll, n), and the loop that owns it polls meanwhile. Each
// attempt may cost the server a new connection, and one that is full of
// them a backend each. The zero value is open.
type listenGate struct {
	fails int
	until time.Time
}

// open reports whether the store may be asked to listen at now.
func (g *listenGate) open(now time.Time) bool { return !now.Before(g.until) }

// failed records a failed attempt at now.
func (g *listenGate) failed(now time.Time, poll time.Duration) {
	g.fails++
	g.until = now.Add(listenBackoff(poll, g.fails))
}

// lapsed records the result, if any, of a wait that was stopped before
// it was read (note of listen, after its stop returned): a failure the
// store reported at the last moment counts, however the loop's select
// chose between it and the end of the interval.
func (g *listenGate) lapsed(note <-chan error, now time.Time, poll time.Duration) {
	select {
	case err := <-note:
		switch {
		case err == nil:
			g.ok()
		case !errors.Is(err, context.Canceled): // not the stop's own cancel
			g.failed(now, poll)
		}
	default:
	}
}

// ok records that the store listened: it reported a notification (or,
// on Postgres, that its listening connection opened), so the next
// failure starts the backoff afresh. A wait that merely lasted is no
// such news: its failure may not have reached the loop yet.
func (g *listenGate) ok() { g.fails = 0 }

// maxListenBackoff bounds listenBackoff.
const maxListenBackoff = 30 * time.Second

// listenBackoff is how long a loop polls without asking the store to
// listen after n failures in a row: half the poll interval, doubled
// with each further failure, up to maxListenBackoff.
func listenBackoff(poll time.Duration, n int) time.Duration {
	d := max(poll/2, time.Millisecond)
	for i := 1; i < n && d < maxListenBackoff; i++ {
		d *= 2
	}
	return min(d, maxListenBackoff)
}

// failed records a store error of the loop and reports whether the loop
// must die (see Err); it then interrupts and releases the runs in flight.
// The first error of a failing period is told to the Observer
// (StoreFailing), once.
func (w *Worker) failed(err error, since *time.Time) bool {
	w.err = err
	now := w.e.clk.Now()
	if since.IsZero() {
		*since = now
		w.e.opts.Observer.StoreFailing(err)
	}
	if !errors.Is(err, store.ErrSchemaTooNew) && now.Sub(*since) < w.e.opts.LeaseFor {
		return false
	}
	if errors.Is(err, store.ErrSchemaTooNew) {
		w.die(err)
		return true
	}
	w.p.haltAll()
	w.mu.Lock()
	w.dead = fmt.Errorf("the worker stopped: the store kept failing since %s: %w", since.UTC().Format(time.RFC3339), err)
	w.mu.Unlock()
	return true
}

// die ends the claim loop on a schema newer than this binary's
// (store.ErrSchemaTooNew): the runs in flight are interrupted and
// released, which a store that answers takes, for a worker of the newer
// flowrun to resume.
func (w *Worker) die(err error) {
	w.p.haltAll()
	w.mu.Lock()
	w.dead = fmt.Errorf("the worker stopped: %w", err)
	w.mu.Unlock()
}

// checkSchema reads the store's schema version once a heartbeat and
// returns store.ErrSchemaTooNew when a newer flowrun has migrated the
// database since this worker opened it, so that the worker stops (die)
// instead of writing rows the newer schema does not expect; an older
// flowrun's open refuses such a store the same way. Any other error of
// the read is left to the claims, which meet and count store faults.
func (w *Worker) checkSchema(ctx context.Context) error {
	if err := w.e.st.Ready(ctx); errors.Is(err, store.ErrSchemaTooNew) {
		return err
	}
	return nil
}

// recovered ends the failing period that began at since: the store
// answered a claim and a read. It tells the Observer, then takes back at once the
// runs whose runners stopped on the store's errors while this worker still
// holds their leases (pool.reclaimOrphans), rather than letting them wait
// out those leases. An error taking them back starts a new failing period.
func (w *Worker) recovered(ctx context.Context, since *time.Time) error {
	// A claim with no free slot does not reach the store: read it.
	if err := w.e.st.Ready(ctx); err != nil {
		return err
	}
	w.e.opts.Observer.StoreRecovered(w.e.clk.Now().Sub(*since))
	*since = time.Time{}
	w.err = nil
	_, err := w.p.reclaimOrphans(ctx)
	return err
}
