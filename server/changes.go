package server

import (
	"context"
	"sync"
	"time"

	"github.com/flowrun/flowrun/store"
)

// changes tells the run feeds (feed.go) and the waits of starts of the
// store's commits: while any of them is open, one goroutine waits on the
// store (store.WorkWaiter: inotify on SQLite's log, LISTEN on Postgres)
// and wakes every one of them at each commit, so a commit is never missed
// between a follower's read and its next wait, however many follow.
// (interp.WaitForChange per follower missed one whenever another waiter
// was waiting at the commit: the store then keeps no wake for later, and
// the follower waited out its full poll.)
//
// The watch runs only while someone follows: a store wakes a caller that
// was not waiting at its next wait only when nobody else waited at the
// commit, and a watch that never ended would take that from the embedded
// worker's claim loop.
type changes struct {
	mu    sync.Mutex
	users int
	next  chan struct{} // closed at the next commit
	stop  context.CancelFunc
}

// watchCommits starts following the store's commits for one feed or wait
// and returns the function that ends it. With no WorkWaiter, next returns nil
// and the callers poll.
func (s *Server) watchCommits() (release func()) {
	ww, ok := s.st.(store.WorkWaiter)
	if !ok {
		return func() {}
	}
	c := &s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users++
	if c.users == 1 {
		// A previous watch may still be ending; until it sees its context
		// end it can only wake the followers once more, which costs them
		// one read.
		ctx, stop := context.WithCancel(s.streams)
		c.stop = stop
		if c.next == nil {
			c.next = make(chan struct{})
		}
		go s.watchStore(ctx, ww) // ends when the last follower releases, or at CloseStreams
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

// nextChange returns a channel closed at the next commit the store tells
// of, or nil when it cannot tell (the caller polls). Take it before
// reading the store, while watching (watchCommits).
func (s *Server) nextChange() <-chan struct{} {
	c := &s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// watchStore wakes the followers at each commit until ctx ends. When the
// store fails to tell, it wakes them anyway after a second (they read the
// store and find out) and tries again.
func (s *Server) watchStore(ctx context.Context, ww store.WorkWaiter) {
	c := &s.changes
	for {
		err := ww.WaitForWork(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			t := s.clk.NewTimer(time.Second)
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

// awaitChange waits until changed is closed (a commit after it was
// taken), or every has passed, or ctx ends (its error then); after a
// commit it returns no sooner than gap after since (the follower's last
// read began then), so a busy store is read at most once per gap by each
// follower. Nothing is missed meanwhile: the follower reads after.
func (s *Server) awaitChange(ctx context.Context, changed <-chan struct{}, every, gap time.Duration, since time.Time) error {
	t := s.clk.NewTimer(every)
	defer t.Stop()
	select {
	case <-changed: // nil when the store cannot tell: never ready
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	if rest := gap - s.clk.Now().Sub(since); rest > 0 {
		g := s.clk.NewTimer(rest)
		defer g.Stop()
		select {
		case <-g.C():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
