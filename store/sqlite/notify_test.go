package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// TestWaitForWork: the first call starts watching and returns at once; a
// later one blocks until another handle on the file (another process, for
// SQLite) commits; a commit seen while nobody waits makes the next call
// return at once; Close ends a wait.
func TestWaitForWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the log is watched with inotify (Linux)")
	}
	path := filepath.Join(t.TempDir(), "flowrun.db")
	s, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	insert := func(i int) {
		t.Helper()
		if _, err := other.RunInsert(ctx, store.RunInsertParams{ID: fmt.Sprintf("r%d", i), Workflow: "wf", Version: "1.0.0",
			GraphHash: "h", Now: time.Unix(1000, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WaitForWork(ctx); err != nil {
		t.Fatalf("first call: %v, want nil at once", err)
	}
	// Nothing written: the wait lasts until its context ends.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err = s.WaitForWork(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait with no commit = %v, want the context's deadline", err)
	}
	// A commit of the other handle ends a wait in progress.
	got := make(chan error, 1)
	go func() { got <- s.WaitForWork(ctx) }()
	time.Sleep(20 * time.Millisecond) // let it wait; the commit ends it either way
	insert(1)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("wait across a commit = %v", err)
		}
	case <-time.After(30 * time.Second): // safety net only
		t.Fatal("a commit of another handle did not end the wait")
	}
	// A commit while nobody waits: the next call returns at once.
	insert(2)
	deadline := time.Now().Add(30 * time.Second)
	for {
		short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		err := s.WaitForWork(short)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a commit made while nobody waited was lost")
		}
	}
	// Close ends a wait (with nil when a late event of the last commits
	// came first), and later calls fail.
	go func() { got <- s.WaitForWork(ctx) }()
	time.Sleep(20 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if errors.Is(err, context.Canceled) {
			t.Fatalf("wait across Close = %v, want the store's error or nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end the wait")
	}
	if err := s.WaitForWork(ctx); err == nil {
		t.Fatal("WaitForWork after Close returned nil")
	}
}
