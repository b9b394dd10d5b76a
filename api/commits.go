package api

import (
	"context"
	"sync"
	"time"

	"github.com/flowrun/flowrun/store"
)

// commits tells the waiters of a Local (the server's event streams and
// waits, the dashboard's live pages, WaitEvents) of the store's commits:
// while any of them waits, one goroutine waits on the store
// (store.WorkWaiter: inotify on SQLite's log, LISTEN on Postgres) and
// wakes every one of them at each commit, so a commit is never missed
// between a waiter's read and its next wait, however many wait. (A wait
// of its own per waiter missed one whenever another was waiting at the
// commit: the store then keeps no wake for later, and the waiter waited
// out its full poll.)
//
// The watch runs only while someone waits: a store wakes a caller that
// was not waiting at its next wait only when nobody else waited at the
// commit, and a watch that never ended would take that from the embedded
// worker's claim loop.
type commits struct {
	mu    sync.Mutex
	users int
	next  chan struct{} // closed at the next commit
	stop  context.CancelFunc
}

// WatchCommits starts following the store's commits for one waiter and
// returns the function that ends it. With a store that cannot tell of
// commits, NextCommit returns nil and the waiters poll.
func (l *Local) WatchCommits() (release func()) {
	ww, ok := l.st.(store.WorkWaiter)
	if !ok {
		return func() {}
	}
	c := &l.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users++
	if c.users == 1 {
		// A previous watch may still be ending; until it sees its context
		// end it can only wake the waiters once more, which costs them
		// one read.
		ctx, stop := context.WithCancel(context.Background())
		c.stop = stop
		if c.next == nil {
			c.next = make(chan struct{})
		}
		go l.watchStore(ctx, ww) // ends when the last waiter releases
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.users--
			if c.users == 0 {
				c.stop()
			}
		})
	}
}

// NextCommit returns a channel closed at the next commit the store tells
// of, or nil when it cannot tell (the caller polls). Take it before
// reading the store, while watching (WatchCommits).
func (l *Local) NextCommit() <-chan struct{} {
	c := &l.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// watchStore wakes the waiters at each commit until ctx ends. When the
// store fails to tell, it wakes them anyway after a second (they read the
// store and find out) and tries again.
func (l *Local) watchStore(ctx context.Context, ww store.WorkWaiter) {
	c := &l.commits
	for {
		err := ww.WaitForWork(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			t := l.clk.NewTimer(time.Second)
			select {
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		c.mu.Lock()
		close(c.next)
		c.next = make(chan struct{})
		c.mu.Unlock()
	}
}

// CommitWaiters is how many wait on the store's commits now (WatchCommits
// calls not yet released).
func (l *Local) CommitWaiters() int {
	c := &l.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.users
}
