// Package feed is flowtui's window on a flowrun store, read through the
// one door (package api): it loads the runs once, then follows the store
// incrementally through the events appended since the last event id it
// saw, refreshing only the runs those events touch. The door is an engine
// over a local store, or a client of a flowrun serve (flowtui --server),
// whose records (api.Records) are the same. A run's graph comes from the
// door's graphs (the engine's cache, or the client's): feed keeps no
// graphs of its own.
//
// feed must not import bubbletea or render anything, and must not write:
// the root carries actions (cancel, retry, signal, decisions, dead
// letters) out through Source.Door, after a confirm.
package feed

import (
	"context"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Source is what flowtui reads from and acts through.
type Source struct {
	// Door reads the records and stored graphs, and carries actions out.
	Door api.Service
	// Store is the store under Door when it is local, so that a poll is
	// woken by its commits; nil through a server, which is polled every
	// PollInterval.
	Store store.Store
	// By names who acts, for the version_decided event of a decision made
	// in flowtui: "tui", or "tui (user ann)". (A server records its
	// token's name.)
	By string
}

// Server is the address of the flowrun serve the door reads through, or
// "" for a store in this process: what a face names when it cannot read.
func (s *Source) Server() string {
	if c, ok := s.Door.(*api.Client); ok {
		return c.Server()
	}
	return ""
}

// records are the store's records, through the door.
func (s *Source) records() api.Records { return s.Door }

// Local is the source of an engine over a store in this process; by
// names who acts (Source.By).
func Local(eng *interp.Engine, by string) *Source {
	return &Source{Door: api.NewLocal(eng, api.LocalOptions{}), Store: eng.Store(), By: by}
}

// RemoteWait is the longest one wait of a server lasts: the screen's
// notices and times are refreshed at least that often.
const RemoteWait = time.Second

// Wait waits for a change worth a poll. On a local store it wakes at the
// store's commits, no sooner than MinPollGap after the last poll, and at
// least every PollInterval; through a server, the server answers at the
// commit that appends an event after cursor, or after RemoteWait. A
// server that fails is asked again after PollInterval (the poll then says
// what failed). Only ctx ending is an error.
func (s *Source) Wait(ctx context.Context, clk clock.Clock, cursor int64) error {
	if s.Store != nil {
		return interp.WaitForChange(ctx, clk, s.Store, MinPollGap, PollInterval)
	}
	if err := s.Door.WaitEvents(ctx, cursor, RemoteWait); err == nil || ctx.Err() != nil {
		return ctx.Err()
	}
	t := clk.NewTimer(PollInterval)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
