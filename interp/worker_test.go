package interp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// claimFails is a store whose claims fail with err; calls, when set,
// counts them.
type claimFails struct {
	store.Store
	err   error
	calls *atomic.Int64
}

func (s claimFails) RunClaim(context.Context, store.RunClaimParams) ([]store.Run, error) {
	if s.calls != nil {
		s.calls.Add(1)
	}
	return nil, s.err
}

// TestWorkerDiesOnStoreErrors: a worker whose claims keep failing for a
// lease period ends its loop (Done) and reports why (Err); a newer schema
// ends it at once. Stop then returns the same error.
func TestWorkerDiesOnStoreErrors(t *testing.T) {
	t.Run("schema too new", func(t *testing.T) {
		b := setup(t)
		e := New(claimFails{b.st, fmt.Errorf("claim: %w", store.ErrSchemaTooNew), nil}, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1}})
		w := NewWorker(e, WorkerOptions{})
		if err := w.Start(b.ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second): // safety net only
			t.Fatal("the worker did not stop on a schema from a newer flowrun")
		}
		if err := w.Err(); !errors.Is(err, store.ErrSchemaTooNew) {
			t.Fatalf("Err() = %v, want store.ErrSchemaTooNew", err)
		}
	})
	t.Run("failing for a lease period", func(t *testing.T) {
		b := setup(t)
		broken := errors.New("disk I/O error")
		var calls atomic.Int64
		e := New(claimFails{b.st, broken, &calls}, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1}, LeaseFor: 30 * time.Second, Poll: time.Second})
		w := NewWorker(e, WorkerOptions{})
		if err := w.Start(b.ctx); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second) // safety net only
		// The clock moves a second at a time, and only once the worker
		// has tried another claim since the last move (or has been given
		// 50 ms of real time to): other timers (the heartbeat's) are always
		// pending, and moving on them alone let the fake clock run ahead
		// of a worker slowed by -race on a loaded machine, so the bound
		// below measured the machine, not the worker (seen once).
		seen, waited := calls.Load(), time.Now()
		for stopped := false; !stopped; {
			select {
			case <-w.Done():
				stopped = true
			default:
				if b.clk.Now().Sub(t0) > time.Minute {
					t.Fatalf("the worker still runs %s after its claims began to fail", b.clk.Now().Sub(t0))
				}
				if time.Now().After(deadline) {
					t.Fatal("the worker did not stop")
				}
				if n := calls.Load(); b.clk.Pending() > 0 && (n != seen || time.Since(waited) > 50*time.Millisecond) {
					b.clk.Advance(time.Second)
					seen, waited = n, time.Now()
				}
				time.Sleep(time.Millisecond)
			}
		}
		if got := b.clk.Now().Sub(t0); got < 30*time.Second {
			t.Fatalf("the worker gave up after %s, before a lease period (30s) of failures", got)
		}
		if err := w.Err(); !errors.Is(err, broken) {
			t.Fatalf("Err() = %v, want the claim error", err)
		}
		if err := w.Stop(b.ctx); !errors.Is(err, broken) {
			t.Fatalf("Stop() = %v, want the claim error", err)
		}
	})
}

// leaseTracker is a store that follows which runs an owner holds from the
// claims and transitions it commits, and records the most held at once.
type leaseTracker struct {
	store.Store
	cc      store.TransitionClaimer
	mu      sync.Mutex
	held    map[string]bool
	most    int
	inBatch int // runs claimed by group commits
	alone   int // runs claimed by claims of their own
}

func (s *leaseTracker) RunClaim(ctx context.Context, p store.RunClaimParams) ([]store.Run, error) {
	rs, err := s.Store.RunClaim(ctx, p)
	s.note(nil, nil, rs, false)
	return rs, err
}

func (s *leaseTracker) TransitionCommitClaim(ctx context.Context, ts []store.Transition, p store.RunClaimParams) ([]store.TransitionResult, []store.Run, error) {
	res, rs, err := s.cc.TransitionCommitClaim(ctx, ts, p)
	if err == nil {
		s.note(ts, res, rs, true)
	}
	return res, rs, err
}

func (s *leaseTracker) TransitionCommit(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, error) {
	res, err := s.Store.TransitionCommit(ctx, ts)
	if err == nil {
		s.note(ts, res, nil, false)
	}
	return res, err
}

func (s *leaseTracker) note(ts []store.Transition, res []store.TransitionResult, claimed []store.Run, batch bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range claimed {
		s.held[r.ID] = true
	}
	if batch {
		s.inBatch += len(claimed)
	} else {
		s.alone += len(claimed)
	}
	for i, t := range ts {
		if t.Run != nil && t.Run.Release && res[i].Err == nil {
			delete(s.held, t.RunID)
		}
	}
	s.most = max(s.most, len(s.held))
}

// TestWorkerClaimsInGroupCommit: a busy worker takes most of its next runs
// in the commits of the runs it works on (the runs that end in a commit
// are replaced by it), and never holds more runs than its concurrency.
func TestWorkerClaimsInGroupCommit(t *testing.T) {
	b := setup(t)
	b.compile(chainHCL("three", 3))
	const runs, slots = 60, 4
	var ids []string
	for range runs {
		ids = append(ids, b.start("three", nil).ID)
	}
	tr := &leaseTracker{Store: b.st, cc: b.st, held: map[string]bool{}}
	var mu sync.Mutex
	ended := 0
	// Leases of an hour (heartbeats every 20 minutes of engine time): a
	// fake clock that runs ahead of a worker slowed by a loaded machine
	// must not lapse a lease, which lets the worker claim again a run it
	// still works on ("claimed 61 runs", "held 5 runs at once", seen under
	// load): that is not what this test is about.
	e := New(tr, Options{Clock: b.clk, LeaseFor: time.Hour, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "g"},
		OnEvent: func(ev store.Event) {
			if ev.Kind == "run_completed" {
				mu.Lock()
				ended++
				mu.Unlock()
			}
		}})
	w := NewWorker(e, WorkerOptions{Concurrency: slots})
	if err := w.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // safety net only
	// The clock moves a poll interval only once no run has ended for 2 ms
	// of real time (the worker then waits on it for slots to free before
	// a claim), not every millisecond whatever the worker does.
	seen, since := 0, time.Now()
	for {
		mu.Lock()
		n := ended
		mu.Unlock()
		if n == runs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs completed", n, runs)
		}
		if n != seen {
			seen, since = n, time.Now()
		} else if time.Since(since) > 2*time.Millisecond {
			b.clk.Advance(e.opts.Poll)
			since = time.Now()
		}
		time.Sleep(time.Millisecond)
	}
	if err := w.Stop(b.ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if r, err := b.st.RunGet(b.ctx, id); err != nil || r.Status != store.RunCompleted {
			t.Fatalf("run %s is %s (%v), want completed", id, r.Status, err)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.most > slots {
		t.Errorf("the worker held %d runs at once, more than its concurrency %d", tr.most, slots)
	}
	if tr.inBatch+tr.alone != runs {
		t.Errorf("claimed %d runs in group commits and %d alone, want %d in all", tr.inBatch, tr.alone, runs)
	}
	if tr.inBatch < runs/2 {
		t.Errorf("only %d of %d runs were claimed in group commits (%d by claims of their own)", tr.inBatch, runs, tr.alone)
	}
}

// TestCancelFromAnotherHandle: a cancel made through another store handle
// on the same database (as `flowrun cancel` from another process) reaches
// a worker's running exec through its cancel watcher (every poll interval)
// before its first heartbeat, which the engine clock never reaches here:
// the process is killed and the run and its attempt end canceled.
func TestCancelFromAnotherHandle(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	b.compile(fmt.Sprintf(`
workflow "c" {
  version = "1.0.0"
  step "long" {
    timeout = "1h"
    exec {
      command = "echo $$ > %[1]s.tmp && mv %[1]s.tmp %[1]s && exec sleep 300"
      shell   = true
    }
  }
}`, pidFile))
	run := b.start("c", nil)
	// The worker's engine: heartbeats every 10s, polls every 200ms.
	e := New(b.st, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "w"},
		LeaseFor: 30 * time.Second, Poll: 200 * time.Millisecond})
	w := NewWorker(e, WorkerOptions{Concurrency: 2})
	// The clock never reaches the worker's first heartbeat: only the
	// cancel watcher can bring the request.
	beat := b.clk.Now().Add(e.opts.Heartbeat)
	if err := w.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Drain for a moment only: on failure the exec still sleeps.
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		defer cancel()
		w.Stop(ctx)
	}()
	waitFile(t, pidFile)
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid file %q: %v", raw, err)
	}

	b.cancelElsewhere(run.ID)
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for {
		r, err := b.st.RunGet(b.ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == store.RunCanceled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run is still %s at %s of engine time since the worker started, before its first heartbeat (every %s)", r.Status, b.clk.Now().Sub(beat.Add(-e.opts.Heartbeat)), e.opts.Heartbeat)
		}
		if b.clk.Pending() > 0 && b.clk.Now().Add(e.opts.Poll/4).Before(beat) {
			b.clk.Advance(e.opts.Poll / 4)
		}
		time.Sleep(time.Millisecond)
	}
	if as := b.attempts(run.ID, "long"); len(as) != 1 || as[0].Status != store.AttemptCanceled {
		t.Fatalf("attempts = %+v, want one canceled", as)
	}
	// The exec is killed (its sleep had 300s to go) and reaped.
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d of the canceled exec: kill -0 = %v, want ESRCH (gone)", pid, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// notifyStore is a SQLite store with the notifications of Postgres
// (WaitForWork) driven by the test: notify wakes every wait in progress at
// once, as a Postgres notification wakes every listener.
type notifyStore struct {
	*sqlite.Store
	mu      sync.Mutex
	woke    chan struct{} // closed and replaced by notify
	waiting int
}

func newNotifyStore(st *sqlite.Store) *notifyStore {
	return &notifyStore{Store: st, woke: make(chan struct{})}
}

func (s *notifyStore) WaitForWork(ctx context.Context) error {
	s.mu.Lock()
	ch := s.woke
	s.waiting++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *notifyStore) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.woke)
	s.woke = make(chan struct{})
}

func (s *notifyStore) waiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// cancelElsewhere cancels run id as another process would: through a
// handle of its own on the same file, with an engine of its own.
func (b *bundle) cancelElsewhere(id string) {
	b.t.Helper()
	other, err := sqlite.Open(b.ctx, b.st.Path(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.t.Fatal(err)
	}
	defer other.Close()
	if _, err := New(other, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 2, Worker: "c"}}).Cancel(b.ctx, id); err != nil {
		b.t.Fatal(err)
	}
}

// longExec starts a run of one exec step that touches the file started
// names once it runs, then sleeps 300 s (timeout 1h): a run in flight for
// as long as a test needs, until it is canceled.
func (b *bundle) longExec() (run store.Run, started string) {
	b.t.Helper()
	started = filepath.Join(b.t.TempDir(), "started")
	b.compile(fmt.Sprintf(`
workflow "c" {
  version = "1.0.0"
  step "long" {
    timeout = "1h"
    exec {
      command = "touch %s; exec sleep 300"
      shell   = true
    }
  }
}`, started))
	return b.start("c", nil), started
}

// TestCancelOnNotification: on a store with notifications (Postgres), a
// cancel from another handle reaches a running exec as soon as the
// notification of RunCancel arrives, with the engine clock standing still
// (no poll interval, no heartbeat passes).
func TestCancelOnNotification(t *testing.T) {
	b := setup(t)
	run, started := b.longExec()
	ns := newNotifyStore(b.st)
	e := New(ns, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "w"}, Poll: 200 * time.Millisecond})
	w := NewWorker(e, WorkerOptions{Concurrency: 2})
	if err := w.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		defer cancel()
		w.Stop(ctx)
	}()
	waitFile(t, started)
	// Let the watcher see the running run and wait for a notification
	// (the worker's idle claim loop, with a slot free, waits too).
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for ns.waiters() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the cancel watcher never waited for a notification")
		}
		if b.clk.Pending() > 0 {
			b.clk.Advance(e.opts.Poll / 4)
		}
		time.Sleep(time.Millisecond)
	}
	b.cancelElsewhere(run.ID)
	ns.notify()
	frozen := b.clk.Now()
	for {
		r, err := b.st.RunGet(b.ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == store.RunCanceled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run is still %s after the notification", r.Status)
		}
		time.Sleep(time.Millisecond)
	}
	if !b.clk.Now().Equal(frozen) {
		t.Fatalf("the engine clock moved (%s) while the cancel was carried out", b.clk.Now().Sub(frozen))
	}
}

// failingWaiter is a store whose notifications always fail at once, as a
// Postgres store's do while the server refuses its listening connection;
// calls counts the waits.
type failingWaiter struct {
	*sqlite.Store
	calls atomic.Int64
}

func (s *failingWaiter) WaitForWork(context.Context) error {
	s.calls.Add(1)
	return errors.New("the server refused the connection")
}

// TestWorkerBacksOffAFailingListen: an idle worker whose store cannot
// listen polls on, and asks it to listen again only after a backoff that
// doubles with each failure (listenBackoff), not at every check: each
// attempt may cost the server a connection. Ten seconds of engine clock,
// a quarter poll interval at a time, make seven attempts (at 0, 0.1, 0.3,
// 0.7, 1.5, 3.1 and 6.3 s), not one per check: two hundred.
func TestWorkerBacksOffAFailingListen(t *testing.T) {
	b := setup(t)
	fw := &failingWaiter{Store: b.st}
	e := New(fw, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "w"}, Poll: 200 * time.Millisecond})
	w := NewWorker(e, WorkerOptions{Concurrency: 1})
	if err := w.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(b.ctx)
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for fw.calls.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle worker never asked the store to listen")
		}
		time.Sleep(time.Millisecond)
	}
	for range 200 {
		time.Sleep(2 * time.Millisecond) // the loop reaches its next nap
		b.clk.Advance(e.opts.Poll / 4)
	}
	if n := fw.calls.Load(); n < 1 || n > 15 {
		t.Fatalf("the store was asked to listen %d times in 10s of engine clock, want about 7", n)
	}
}

// TestCancelWatchBacksOffAFailingListen: the watcher that brings cancel
// requests to the runs in flight, on a store that cannot listen, polls
// (once a poll interval) and asks the store to listen again only after
// the same backoff as the idle worker, not at every check: ten seconds
// of engine clock with a run in flight make about seven attempts, not
// fifty. The run's cancel still reaches it by polling.
func TestCancelWatchBacksOffAFailingListen(t *testing.T) {
	b := setup(t)
	run, started := b.longExec()
	fw := &failingWaiter{Store: b.st}
	e := New(fw, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "w"},
		LeaseFor: time.Hour, Heartbeat: time.Hour, Poll: 200 * time.Millisecond})
	// One slot, taken by the run: only the cancel watcher listens.
	w := NewWorker(e, WorkerOptions{Concurrency: 1})
	if err := w.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		defer cancel()
		w.Stop(ctx)
	}()
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exec never started")
		}
		if b.clk.Pending() > 0 {
			b.clk.Advance(e.opts.Poll / 4)
		}
		time.Sleep(time.Millisecond)
	}
	before := fw.calls.Load()
	for range 200 {
		time.Sleep(2 * time.Millisecond) // the watcher reaches its next wait
		b.clk.Advance(e.opts.Poll / 4)
	}
	if n := fw.calls.Load() - before; n < 1 || n > 15 {
		t.Fatalf("the store was asked to listen %d times in 10s of engine clock with a run in flight, want about 7", n)
	}
	b.cancelElsewhere(run.ID)
	for {
		r, err := b.st.RunGet(b.ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == store.RunCanceled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run is still %s: the polling watcher never brought the cancel", r.Status)
		}
		b.clk.Advance(e.opts.Poll / 4)
		time.Sleep(time.Millisecond)
	}
}

func TestListenBackoff(t *testing.T) {
	poll := 200 * time.Millisecond
	for _, c := range []struct {
		n    int
		want time.Duration
	}{
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{9, 25600 * time.Millisecond},
		{10, maxListenBackoff},
		{1000, maxListenBackoff},
	} {
		if got := listenBackoff(poll, c.n); got != c.want {
			t.Errorf("listenBackoff(%s, %d) = %s, want %s", poll, c.n, got, c.want)
		}
	}
	if got := listenBackoff(time.Microsecond, 1); got != time.Millisecond {
		t.Errorf("listenBackoff(1µs, 1) = %s, want the 1ms floor", got)
	}
}

// pollOnly hides a store's notifications (WaitForWork) from the engine,
// as on a store or system that has none.
type pollOnly struct{ store.Store }

// TestWorkerSeesEnqueueFromAnotherHandle: an idle worker takes a run
// enqueued through another store handle on the same file (as `flowrun
// apply --detach` or `flowrun signal` from another process).
//
//   - polling: within a quarter of its poll interval, when it reads when
//     the next run is due: the engine clock moves Poll/4 once and no
//     further;
//   - notified (SQLite on Linux watches its log): woken by the other
//     handle's commit, with the engine clock moving only by the short
//     pauses between notifications (notifyGap), never by Poll/4.
func TestWorkerSeesEnqueueFromAnotherHandle(t *testing.T) {
	for _, notified := range []bool{false, true} {
		t.Run(map[bool]string{false: "polling", true: "notified"}[notified], func(t *testing.T) {
			if notified && runtime.GOOS != "linux" {
				t.Skip("the SQLite store watches its log with inotify (Linux)")
			}
			b := setup(t)
			b.compile(`
workflow "q" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
}`)
			var st store.Store = pollOnly{b.st}
			if notified {
				st = b.st
			}
			e := New(st, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "w"},
				LeaseFor: 30 * time.Second, Poll: 200 * time.Millisecond})
			w := NewWorker(e, WorkerOptions{Concurrency: 4})
			if err := w.Start(b.ctx); err != nil {
				t.Fatal(err)
			}
			defer w.Stop(b.ctx)
			// Let the worker's first claim find nothing and the loop go idle.
			deadline := time.Now().Add(30 * time.Second) // safety net only
			for b.clk.Pending() < 2 {
				if time.Now().After(deadline) {
					t.Fatal("the worker never went idle")
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)

			other, err := sqlite.Open(b.ctx, b.st.Path(), sqlite.Options{Synchronous: "NORMAL"})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			run, _, err := New(other, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 2}}).
				StartRun(b.ctx, StartParams{Workflow: "q", New: true})
			if err != nil {
				t.Fatal(err)
			}
			start, check, gap := b.clk.Now(), e.opts.Poll/4, w.notifyGap()
			for {
				r, err := b.st.RunGet(b.ctx, run.ID)
				if err != nil {
					t.Fatal(err)
				}
				if r.Status == store.RunCompleted {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the run is still %s after the engine clock moved %s (poll interval %s)", r.Status, b.clk.Now().Sub(start), e.opts.Poll)
				}
				switch moved := b.clk.Now().Sub(start); {
				case b.clk.Pending() == 0:
				case !notified && moved == 0:
					b.clk.Advance(check)
				case notified && moved+gap < check:
					b.clk.Advance(gap)
				}
				time.Sleep(time.Millisecond)
			}
			moved := b.clk.Now().Sub(start)
			if !notified && moved >= e.opts.Poll {
				t.Fatalf("the engine clock moved %s before the run was taken; want less than the poll interval %s", moved, e.opts.Poll)
			}
			if notified && moved >= check {
				t.Fatalf("the engine clock moved %s before the run was taken; want less than the poll check %s", moved, check)
			}
		})
	}
}
