package sqlite

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// coalescingSource is an eventSource that keeps at most one unread event,
// as inotify coalesces identical events, and counts the reads.
type coalescingSource struct {
	events chan struct{}
	closed chan struct{}
	reads  atomic.Int64
}

func newCoalescingSource() *coalescingSource {
	return &coalescingSource{events: make(chan struct{}, 1), closed: make(chan struct{})}
}

func (s *coalescingSource) write() {
	select {
	case s.events <- struct{}{}:
	default:
	}
}

func (s *coalescingSource) next() error {
	select {
	case <-s.events:
		s.reads.Add(1)
		return nil
	case <-s.closed:
		return errClosed
	}
}

func (s *coalescingSource) close() error { close(s.closed); return nil }

// TestLogWatcherPausesWhileNobodyWaits: writes made while nobody waits
// are read once, not once each (the watcher's goroutine would otherwise
// wake for every page a commit writes), and the next wait still returns at
// once; a wait after that still sees a later write; close ends a paused
// watcher.
func TestLogWatcherPausesWhileNobodyWaits(t *testing.T) {
	src := newCoalescingSource()
	w := newLogWatcher(src)
	for range 50 {
		src.write()
		time.Sleep(200 * time.Microsecond) // room for the goroutine to read each
	}
	if n := src.reads.Load(); n > 2 {
		t.Errorf("the watcher read %d events while nobody waited, want at most 2", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.wait(ctx); err != nil {
		t.Fatalf("wait after writes nobody waited for = %v, want nil at once", err)
	}
	got := make(chan error, 1)
	go func() {
		// The event read while nobody waited may wake this wait at once;
		// the one after it must wake a wait too.
		if err := w.wait(ctx); err != nil {
			got <- err
			return
		}
		got <- w.wait(ctx)
	}()
	for {
		src.write()
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("wait across a write = %v", err)
			}
			w.close()
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// TestLogWatcherCloseWhilePaused: close ends a watcher whose goroutine is
// paused on a pending change.
func TestLogWatcherCloseWhilePaused(t *testing.T) {
	src := newCoalescingSource()
	w := newLogWatcher(src)
	src.write()
	for src.reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { w.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // safety net only
		t.Fatal("close did not end a paused watcher")
	}
	if err := w.wait(context.Background()); err == nil {
		t.Fatal("wait after close returned nil")
	}
}
