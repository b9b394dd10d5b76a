package postgres_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
)

// t0 is the tests' epoch; the store never reads the clock.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// safety bounds a wait that must end on its own; it only fails a broken
// test instead of hanging it.
const safety = 10 * time.Second

// quiet is how long a wait that must not end is watched.
const quiet = 300 * time.Millisecond

// waitFor calls WaitForWork with a deadline d and returns its error.
func waitFor(s interface {
	WaitForWork(context.Context) error
}, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.WaitForWork(ctx)
}

func insert(t *testing.T, s store.Store, id string, avail time.Time) {
	t.Helper()
	if _, err := s.RunInsert(context.Background(), store.RunInsertParams{
		ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h", Now: t0, AvailableAt: avail,
	}); err != nil {
		t.Fatalf("RunInsert(%s): %v", id, err)
	}
}

func TestWaitForWork(t *testing.T) {
	t.Parallel()
	dsn, _ := newSchema(t)
	worker := openDSN(t, dsn)
	client := openDSN(t, dsn)

	// The first call only starts listening.
	if err := waitFor(worker, safety); err != nil {
		t.Fatalf("first WaitForWork: %v", err)
	}
	// Nothing happened: the wait ends with its context.
	if err := waitFor(worker, quiet); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForWork with no news = %v, want the deadline", err)
	}

	// A run inserted while nobody waits is not lost: the next call returns.
	insert(t, client, "r1", t0)
	if err := waitFor(worker, safety); err != nil {
		t.Fatalf("WaitForWork after an insert: %v", err)
	}

	// A run inserted while the worker waits wakes it.
	done := make(chan error, 1)
	go func() { done <- waitFor(worker, safety) }()
	insert(t, client, "r2", t0)
	if err := <-done; err != nil {
		t.Fatalf("WaitForWork during an insert: %v", err)
	}

	// A released run that is due wakes a waiter; a park in the future does
	// not (RunNextAvailable tells the worker when to look again).
	rs, err := client.RunClaim(context.Background(), store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Minute, Limit: 2})
	if err != nil || len(rs) != 2 {
		t.Fatalf("RunClaim = %v, %v; want two runs", rs, err)
	}
	waiting := store.RunWaiting
	later := t0.Add(time.Hour)
	if _, err := client.TransitionCommit(context.Background(), []store.Transition{{RunID: rs[0].ID, Lease: rs[0].Lease, Now: t0,
		Run: &store.RunUpdate{Status: &waiting, AvailableAt: &later, Release: true}}}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(worker, quiet); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForWork after a park in the future = %v, want the deadline", err)
	}
	if _, err := client.TransitionCommit(context.Background(), []store.Transition{{RunID: rs[1].ID, Lease: rs[1].Lease, Now: t0,
		Run: &store.RunUpdate{Status: &waiting, AvailableAt: &t0, Release: true}}}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(worker, safety); err != nil {
		t.Fatalf("WaitForWork after a due release: %v", err)
	}

	// A signal wakes.
	if _, err := client.SignalSend(context.Background(), store.SignalSendParams{RunID: rs[0].ID, Name: "go", Now: t0}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(worker, safety); err != nil {
		t.Fatalf("WaitForWork after a signal: %v", err)
	}
}

// TestWaitForWorkShortDeadlines: a worker's wait often ends a few
// milliseconds away, when a timer is due, or sooner, when it has other work.
// The listening connection still gets opened, by one attempt whatever the
// deadlines of the calls, and then hears the news. (Opening it under each
// call's deadline cut every attempt short, and each call dialed the server
// again: several workers did so many times a second, until the server's
// accept queue was full and nobody could connect.)
func TestWaitForWorkShortDeadlines(t *testing.T) {
	t.Parallel()
	dsn, _ := newSchema(t)
	worker := openDSN(t, dsn)
	client := openDSN(t, dsn)
	calls := 0
	for {
		calls++
		err := waitFor(worker, 2*time.Millisecond)
		if err == nil {
			break // listening
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitForWork %d with a 2ms deadline: %v", calls, err)
		}
		if calls == int(safety/(2*time.Millisecond)) {
			t.Fatalf("not listening after %d waits of 2ms", calls)
		}
	}
	if n := postgres.ListenDials(worker); n != 1 {
		t.Fatalf("%d waits of 2ms dialed the server %d times, want once", calls, n)
	}
	insert(t, client, "r1", t0)
	if err := waitFor(worker, safety); err != nil {
		t.Fatalf("WaitForWork after an insert: %v", err)
	}
}

func TestWaitForWorkWakesAllWaiters(t *testing.T) {
	t.Parallel()
	dsn, _ := newSchema(t)
	worker := openDSN(t, dsn)
	client := openDSN(t, dsn)
	if err := waitFor(worker, safety); err != nil {
		t.Fatal(err)
	}
	const waiters = 3
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- waitFor(worker, safety)
		}()
	}
	// Each waiter counted holds the channel of the next notification.
	deadline := time.Now().Add(safety)
	for postgres.Waiters(worker) < waiters {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters in place after %s, want %d", postgres.Waiters(worker), safety, waiters)
		}
		runtime.Gosched()
	}
	insert(t, client, "r", t0)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a waiter: %v", err)
		}
	}
}

func TestWaitForWorkIgnoresOtherSchemas(t *testing.T) {
	t.Parallel()
	dsn, _ := newSchema(t)
	otherDSN, _ := newSchema(t)
	worker := openDSN(t, dsn)
	other := openDSN(t, otherDSN)
	if err := waitFor(worker, safety); err != nil {
		t.Fatal(err)
	}
	insert(t, other, "r", t0)
	if err := waitFor(worker, quiet); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForWork after another schema's insert = %v, want the deadline", err)
	}
}

func TestWaitForWorkEndsOnClose(t *testing.T) {
	t.Parallel()
	dsn, _ := newSchema(t)
	worker := openDSN(t, dsn)
	if err := waitFor(worker, safety); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waitFor(worker, safety) }()
	// Close may run before or during the wait; either way it ends.
	if err := worker.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := <-done
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForWork across Close = %v, want a closed-store error", err)
	}
}

// TestServerDropsConnections ends every connection of a store on the server
// side, as a server restart does: the next read and write go through on
// new connections, and the listener reports the loss once, then listens
// again.
func TestServerDropsConnections(t *testing.T) {
	t.Parallel()
	dsn, schema := newSchema(t)
	dsn = withParam(t, dsn, "application_name", schema)
	s := openDSN(t, dsn)
	insert(t, s, "before", t0)
	if err := waitFor(s, safety); err != nil {
		t.Fatalf("first WaitForWork: %v", err)
	}
	if n := adminQuery[int64](t, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, schema); n < 2 {
		t.Fatalf("terminated %d connections, want the pool's and the listener's", n)
	}
	if _, err := s.RunGet(context.Background(), "before"); err != nil {
		t.Fatalf("RunGet after the connections were dropped: %v", err)
	}
	insert(t, s, "after", t0)
	if n := adminQuery[int64](t, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, schema); n < 1 {
		t.Fatalf("terminated %d connections, want at least one", n)
	}
	insert(t, s, "after2", t0)

	if err := waitFor(s, safety); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForWork on a dropped listener = %v, want the connection error", err)
	}
	if err := waitFor(s, safety); err != nil {
		t.Fatalf("WaitForWork that listens again: %v", err)
	}
	insert(t, s, "woken", t0)
	if err := waitFor(s, safety); err != nil {
		t.Fatalf("WaitForWork after listening again: %v", err)
	}
}
