package interp

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// TestWaitForChange: without notifications it returns after every on the
// clock; with them (SQLite on Linux) at another handle's commit once gap
// has passed, the clock standing still otherwise; and with ctx's error
// when ctx ends.
func TestWaitForChange(t *testing.T) {
	b := setup(t)
	gap, every := 20*time.Millisecond, 200*time.Millisecond
	deadline := time.Now().Add(30 * time.Second) // safety net only
	waitTimers := func(n int) {
		t.Helper()
		for b.clk.Pending() < n {
			if time.Now().After(deadline) {
				t.Fatalf("WaitForChange never set %d timers", n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	wait := func(st store.Store, ctx context.Context) chan error {
		done := make(chan error, 1)
		go func() { done <- WaitForChange(ctx, b.clk, st, gap, every) }()
		return done
	}

	// No notifications: the interval.
	done := wait(pollOnly{b.st}, b.ctx)
	waitTimers(1)
	b.clk.Advance(every)
	if err := <-done; err != nil {
		t.Fatalf("after the interval: %v", err)
	}

	// ctx ends first.
	ctx, cancel := context.WithCancel(b.ctx)
	done = wait(pollOnly{b.st}, ctx)
	waitTimers(1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v, want context.Canceled", err)
	}

	if runtime.GOOS != "linux" {
		return
	}
	// Notified: a commit of another handle, after the gap.
	if err := b.st.WaitForWork(b.ctx); err != nil { // the first wait only starts watching
		t.Fatal(err)
	}
	start := b.clk.Now()
	done = wait(b.st, b.ctx)
	waitTimers(2)
	b.clk.Advance(gap)
	other, err := sqlite.Open(b.ctx, b.st.Path(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i := 0; ; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("notified: %v", err)
			}
			if moved := b.clk.Now().Sub(start); moved != gap {
				t.Fatalf("the clock moved %s, want only the gap %s", moved, gap)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := other.RunInsert(b.ctx, store.RunInsertParams{ID: fmt.Sprintf("other-%d", i), Workflow: "w", Version: "1.0.0",
			GraphHash: "h", Now: b.clk.Now()}); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("a commit of another handle did not end the wait")
		}
	}
}
