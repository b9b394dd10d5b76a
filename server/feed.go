package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// This file shares the following of one run among all its event streams:
// one feed per followed run reads the store once per commit the store
// tells of (the run's status and its new events) and hands the events to
// every stream of the run, so that a run followed by many clients costs
// the store what one client costs. A stream reads from the store itself
// only what the feed no longer holds (its start, or after falling behind).

// frame is one event as a stream sends it, encoded once for every
// stream.
type frame struct {
	id   int64
	text []byte
}

// frameOf encodes an event as its Server-Sent Event.
func frameOf(ev store.Event) (frame, error) {
	b, err := json.Marshal(interp.EventOf(ev))
	if err != nil {
		return frame{}, err
	}
	return frame{id: ev.ID, text: fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Kind, b)}, nil
}

// feedWindow is how many of a run's newest events a feed holds.
var feedWindow = 4096

// feed follows one run for its streams.
type feed struct {
	runID string
	mu    sync.Mutex
	// evs are the run's events with ids above from, in id order: every
	// event of the run after from is in it.
	evs  []frame
	from int64
	// last is the id of the newest event read.
	last   int64
	status store.RunStatus
	err    error
	// changed is closed, and replaced, when evs, status or err change.
	changed chan struct{}
	read    bool // the first read is done
	subs    int
	stop    context.CancelFunc
}

// feeds holds the feeds of the runs being followed.
type feeds struct {
	mu sync.Mutex
	m  map[string]*feed
}

// join returns the feed of runID, starting it for its first stream.
func (s *Server) joinFeed(runID string) *feed {
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	if s.feeds.m == nil {
		s.feeds.m = map[string]*feed{}
	}
	f := s.feeds.m[runID]
	if f == nil {
		ctx, stop := context.WithCancel(s.streams)
		f = &feed{runID: runID, changed: make(chan struct{}), stop: stop}
		s.feeds.m[runID] = f
		go s.follow(ctx, f) // ended by stop, when its last stream leaves, or by CloseStreams
	}
	f.subs++
	return f
}

// leaveFeed ends a stream's use of its feed; the last one stops it.
func (s *Server) leaveFeed(f *feed) {
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	f.subs--
	if f.subs == 0 {
		f.stop()
		delete(s.feeds.m, f.runID)
	}
}

// follow reads the run's status and new events at each commit the store
// tells of, until the run has ended or ctx ends.
func (s *Server) follow(ctx context.Context, f *feed) {
	defer s.watchCommits()()
	for {
		// A commit after this is seen by the wait below.
		next, since := s.nextChange(), s.clk.Now()
		// The status is read before the events: when it is final, every
		// event of the run is stored and read below.
		head, err := s.st.RunGetHead(ctx, f.runID)
		if ctx.Err() != nil {
			return
		}
		var evs []frame
		after := f.last
		for err == nil {
			var page []store.Event
			page, err = s.st.EventList(ctx, store.EventListParams{RunID: f.runID, AfterID: after, Limit: streamPage})
			for _, ev := range page {
				var fr frame
				if fr, err = frameOf(ev); err != nil {
					break
				}
				evs = append(evs, fr)
				after = ev.ID
			}
			if n := len(evs) - feedWindow; n > 0 { // a long history: keep the newest
				f.mu.Lock()
				f.evs, f.from = nil, evs[n-1].id
				f.mu.Unlock()
				evs = append([]frame(nil), evs[n:]...)
			}
			if len(page) < streamPage {
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		f.mu.Lock()
		if err != nil {
			f.err = err
		} else {
			f.evs = append(f.evs, evs...)
			if n := len(f.evs) - feedWindow; n > 0 {
				f.from = f.evs[n-1].id
				f.evs = append([]frame(nil), f.evs[n:]...)
			}
			f.last = after
			f.status = head.Status
		}
		changed := len(evs) > 0 || err != nil || !f.read || head.Status.Terminal()
		f.read = true
		if changed {
			close(f.changed)
			f.changed = make(chan struct{})
		}
		f.mu.Unlock()
		if err != nil || head.Status.Terminal() {
			return
		}
		if s.awaitChange(ctx, next, streamEvery, streamGap, since) != nil {
			return
		}
	}
}

// next returns the events after id that the feed holds, whether it holds
// all of them (false: some after id are older than its window, read them
// from the store), the run's status as last read, and the channel closed
// at the next change. Before the feed's first read it returns no event,
// held false... and the stream waits for changed. The error, last, is the feed's last read error.
func (f *feed) next(after int64) (evs []frame, held, read bool, status store.RunStatus, changed <-chan struct{}, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if after >= f.from {
		i := len(f.evs)
		for i > 0 && f.evs[i-1].id > after {
			i--
		}
		evs = f.evs[i:]
		held = true
	}
	return evs, held, f.read, f.status, f.changed, f.err
}
