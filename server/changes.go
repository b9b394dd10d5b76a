package server

import (
	"context"
	"time"
)

// watchCommits and nextChange are the door's (api.Local.WatchCommits):
// the event streams, the waits of starts and the dashboard's live pages
// share one watch of the store's commits.
func (s *Server) watchCommits() (release func()) { return s.door.WatchCommits() }

func (s *Server) nextChange() <-chan struct{} { return s.door.NextCommit() }

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
