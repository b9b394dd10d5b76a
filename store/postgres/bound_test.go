package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
)

// appName returns a DSN for the schema of dsn whose connections carry an
// application_name of their own, to find their backends in
// pg_stat_activity.
func appName(t *testing.T, dsn string) (string, string) {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := "flowrun_bound_" + hex.EncodeToString(b)
	return withParam(t, dsn, "application_name", name), name
}

// lockRuns holds an ACCESS EXCLUSIVE lock on the schema's runs table until
// the returned function is called (or the test ends): every read of runs
// waits for it, as a statement that runs long would keep running.
func lockRuns(t *testing.T, dsn string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE runs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback(ctx)
			conn.Close(ctx)
		}
	}
	t.Cleanup(release)
	return release
}

// activeBackends counts the backends of application name that are running
// a statement on runs.
func activeBackends(t *testing.T, name string) int {
	t.Helper()
	return int(adminQuery[int64](t, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = $1 AND state = 'active' AND query LIKE '%FROM runs%'`, name))
}

// waitBackends polls pg_stat_activity until the number of active backends
// of name satisfies ok or the bounded wait ends; it returns the last count.
func waitBackends(t *testing.T, name string, wait time.Duration, ok func(int) bool) int {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		n := activeBackends(t, name)
		if ok(n) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestListCanceledLeavesNoBackend: a run listing whose caller goes away
// (an API client hangs up, Ctrl-C of the CLI) ends on the server too: the
// context reaches pgx, which sends the server a cancel request when it
// gives the statement up, so no backend keeps running the query; and the
// error says the caller canceled, not that the query timed out.
func TestListCanceledLeavesNoBackend(t *testing.T) {
	t.Parallel()
	base, _ := newSchema(t)
	dsn, name := appName(t, base)
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{MaxConns: 2, QueryTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lockRuns(t, base)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.RunList(ctx, store.RunListParams{Workflow: "wf", Status: store.RunCompleted, Limit: 1000})
		done <- err
	}()
	if n := waitBackends(t, name, 10*time.Second, func(n int) bool { return n == 1 }); n != 1 {
		t.Fatalf("%d backends run the listing, want 1 waiting for the lock", n)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || errors.Is(err, store.ErrTimeout) {
			t.Fatalf("RunList after its context was canceled: %v, want context.Canceled (not a timeout)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunList did not return after its context was canceled")
	}
	if n := waitBackends(t, name, 5*time.Second, func(n int) bool { return n == 0 }); n != 0 {
		t.Fatalf("%d backends still run the canceled listing", n)
	}
}

// TestReadTimeout: a read that runs past the query timeout is stopped by
// the server and fails with store.ErrTimeout, naming the timeout; a write
// transaction is not bounded by it.
func TestReadTimeout(t *testing.T) {
	t.Parallel()
	base, _ := newSchema(t)
	dsn, name := appName(t, base)
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{MaxConns: 2, QueryTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.QueryTimeout(); got != "300ms" {
		t.Fatalf("QueryTimeout() = %q, want 300ms", got)
	}
	ctx := context.Background()
	release := lockRuns(t, base)
	start := time.Now()
	bounded, cancel := context.WithTimeout(ctx, 10*time.Second) // the old code waited for the lock forever
	defer cancel()
	_, err = s.RunList(bounded, store.RunListParams{Limit: 50})
	if !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("RunList past the query timeout: %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("RunList took %s with a 300ms query timeout", took)
	}
	for _, want := range []string{"listing runs", "query timeout of 300ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if n := activeBackends(t, name); n != 0 {
		t.Fatalf("%d backends still run the listing that timed out", n)
	}

	// A write waits for the lock past the query timeout, and succeeds.
	go func() {
		time.Sleep(time.Second)
		release()
	}()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: "run-a", Workflow: "wf", Version: "1.0.0", GraphHash: "h", Now: now}); err != nil {
		t.Fatalf("a write that waited past the query timeout: %v", err)
	}
	if _, err := s.RunList(ctx, store.RunListParams{Limit: 50}); err != nil {
		t.Fatalf("RunList once the lock is gone: %v", err)
	}
}

// TestQueryTimeoutFromDSN: without Options.QueryTimeout, the DSN's
// statement_timeout is the reads' timeout; without either, the default.
func TestQueryTimeoutFromDSN(t *testing.T) {
	t.Parallel()
	base, _ := newSchema(t)
	s := openDSN(t, withParam(t, base, "statement_timeout", "250"))
	if got := s.QueryTimeout(); got != "250ms" {
		t.Fatalf("QueryTimeout() with the DSN's statement_timeout=250 = %q, want 250ms", got)
	}
	lockRuns(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.RunList(ctx, store.RunListParams{Limit: 50}); !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("RunList past the DSN's statement_timeout: %v, want ErrTimeout", err)
	}
	if got := openDSN(t, base).QueryTimeout(); got != postgres.DefaultQueryTimeout.String() {
		t.Fatalf("QueryTimeout() by default = %q, want %s", got, postgres.DefaultQueryTimeout)
	}
}

// TestKilledClientLeavesNoBackend: a process killed while its listing
// runs (kill -9 of the CLI or of the API server) sends no cancel request;
// the server finds the client gone (client_connection_check_interval) and
// stops the statement long before the query timeout would.
func TestKilledClientLeavesNoBackend(t *testing.T) {
	if os.Getenv("FLOWRUN_BOUND_CHILD") != "" {
		return // the child's part is TestBoundChild
	}
	t.Parallel()
	base, _ := newSchema(t)
	dsn, name := appName(t, base)
	openDSN(t, dsn) // migrates
	lockRuns(t, base)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBoundChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FLOWRUN_BOUND_CHILD="+dsn)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if n := waitBackends(t, name, 20*time.Second, func(n int) bool { return n == 1 }); n != 1 {
		t.Fatalf("%d backends run the child's listing, want 1 waiting for the lock", n)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if n := waitBackends(t, name, 10*time.Second, func(n int) bool { return n == 0 }); n != 0 {
		t.Fatalf("%d backends still run the listing of a killed client", n)
	}
}

// TestBoundChild is the client TestKilledClientLeavesNoBackend kills: it
// lists runs with a query timeout of an hour and waits.
func TestBoundChild(t *testing.T) {
	dsn := os.Getenv("FLOWRUN_BOUND_CHILD")
	if dsn == "" {
		t.Skip("run by TestKilledClientLeavesNoBackend")
	}
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{QueryTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.RunList(context.Background(), store.RunListParams{Limit: 50})
	t.Fatalf("RunList returned while the table was locked: %v", err)
}
