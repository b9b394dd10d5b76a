package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// WaitForWork blocks until another connection may have made work
// available: it returns nil after a commit to the database by any process
// (on Linux the store watches the write-ahead log, which every commit
// appends to, with inotify), and ctx.Err() when ctx ends first. It claims
// nothing, and most commits concern no idle worker, so the caller checks
// what is due (RunNextAvailable, a read) and waits again.
//
// It has the contract of the Postgres store's WaitForWork: the first call
// only starts watching and returns nil at once (work may have come
// before); a commit seen while nobody waits makes the next call return at
// once; every caller waiting at that moment returns. Any other error
// means the log cannot be watched (not Linux, no inotify, the log
// replaced): the caller polls instead.
func (s *Store) WaitForWork(ctx context.Context) error {
	w, first, err := s.watch()
	if err != nil {
		return fmt.Errorf("waiting for work on %s: %w", s.path, err)
	}
	if first {
		return nil
	}
	if err := w.wait(ctx); err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("waiting for work on %s: %w", s.path, err)
	}
	return nil
}

// watch returns the store's log watcher, starting it on first use (first
// reports that it was started now).
func (s *Store) watch() (w *logWatcher, first bool, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wclosed {
		return nil, false, errClosed
	}
	if s.watcher != nil {
		return s.watcher, false, nil
	}
	if s.watchErr != nil {
		return nil, false, s.watchErr
	}
	w, err = watchLog(s.path + "-wal")
	if err != nil {
		s.watchErr = err
		return nil, false, err
	}
	s.watcher = w
	return w, true, nil
}

// closeWatch stops the log watcher (Close).
func (s *Store) closeWatch() {
	s.wmu.Lock()
	w := s.watcher
	s.watcher, s.wclosed = nil, true
	s.wmu.Unlock()
	if w != nil {
		w.close()
	}
}

var errClosed = errors.New("the store is closed")

// logWatcher broadcasts the changes of a file that an event source
// (inotify on Linux) reports: one goroutine, owned by the watcher and
// ended by close, reads the events; each batch closes woke (waking every
// waiter) or, when nobody waits, leaves pending for the next wait.
//
// Once a change is pending and nobody waits, the goroutine reads no more
// until a wait takes it: a commit writes the log many times (a frame per
// page), the source keeps one unread event for all of them (inotify
// coalesces identical events), and reading each would wake the goroutine
// for every write of this process's own commits.
type logWatcher struct {
	src   eventSource
	ended chan struct{} // closed when the reading goroutine returned
	// resume wakes the reading goroutine paused on a pending change (a
	// wait began, or close); buffered, so a send never blocks.
	resume chan struct{}

	mu      sync.Mutex
	woke    chan struct{} // closed and replaced at each batch of events
	waiting int
	pending bool
	err     error // why the watcher stopped (errClosed after close)
}

// eventSource is what a logWatcher reads: next blocks until the watched
// file changed (or the source failed or was closed).
type eventSource interface {
	next() error
	close() error
}

func newLogWatcher(src eventSource) *logWatcher {
	w := &logWatcher{src: src, ended: make(chan struct{}), woke: make(chan struct{}), resume: make(chan struct{}, 1)}
	go w.read()
	return w
}

func (w *logWatcher) read() {
	defer close(w.ended)
	for {
		w.mu.Lock()
		paused := w.pending && w.waiting == 0 && w.err == nil
		w.mu.Unlock()
		if paused {
			<-w.resume
			continue
		}
		err := w.src.next()
		w.mu.Lock()
		if err != nil {
			if w.err == nil {
				w.err = err
			}
			close(w.woke)
			w.mu.Unlock()
			return
		}
		if w.waiting == 0 {
			w.pending = true
		}
		close(w.woke)
		w.woke = make(chan struct{})
		w.mu.Unlock()
	}
}

func (w *logWatcher) wait(ctx context.Context) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	if w.pending {
		w.pending = false
		w.mu.Unlock()
		w.wakeReader()
		return nil
	}
	woke := w.woke
	w.waiting++
	w.mu.Unlock()
	w.wakeReader()
	defer func() {
		w.mu.Lock()
		w.waiting--
		w.mu.Unlock()
	}()
	select {
	case <-woke:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *logWatcher) close() {
	w.mu.Lock()
	if w.err == nil {
		w.err = errClosed
	}
	w.mu.Unlock()
	w.wakeReader()
	w.src.close()
	<-w.ended
}

// wakeReader resumes the reading goroutine if it is paused.
func (w *logWatcher) wakeReader() {
	select {
	case w.resume <- struct{}{}:
	default:
	}
}
