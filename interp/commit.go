package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/flowrun/flowrun/store"
)

// committer is the engine's group commit. Runners submit transitions; the
// transitions submitted while a commit is in progress are applied together
// in the next single TransitionCommit call, so many runs cost one database
// commit. There is no committer goroutine: the first submitter that finds
// no commit in progress commits (it is the leader), and when it is done it
// hands the queued batch to the first waiter of that batch, who commits it
// in turn. Every submitter blocks until its own transition is applied or
// rejected, so the caller's goroutine is the owner of all the work.
type committer struct {
	e     *Engine
	mu    sync.Mutex
	busy  bool
	queue []*submission
}

type submission struct {
	t    store.Transition
	res  store.TransitionResult
	err  error
	done chan struct{}
	// lead is closed (instead of done) to make this submitter the leader
	// of batch.
	lead  chan struct{}
	batch []*submission
}

// commit applies t, together with whatever other runners submit at the same
// time. It returns store.ErrLeaseLost (wrapped) when the run's lease is
// lost, and the store's error when the batch failed. Commits ignore ctx
// cancellation: a runner that is being stopped still records where it is.
func (c *committer) commit(ctx context.Context, t store.Transition) error {
	s := &submission{t: t, done: make(chan struct{}), lead: make(chan struct{})}
	c.mu.Lock()
	if c.busy {
		c.queue = append(c.queue, s)
		c.mu.Unlock()
		select {
		case <-s.done:
			return s.result()
		case <-s.lead:
		}
	} else {
		c.busy = true
		c.mu.Unlock()
		s.batch = []*submission{s}
	}
	c.run(context.WithoutCancel(ctx), s.batch)
	return s.result()
}

// run commits one batch, then hands the next one to its first member or
// marks the committer idle.
func (c *committer) run(ctx context.Context, batch []*submission) {
	ts := make([]store.Transition, len(batch))
	for i, s := range batch {
		ts[i] = s.t
	}
	var results []store.TransitionResult
	var claimed batchClaim
	var err error
	if h := c.e.opts.BeforeCommit; h != nil {
		err = h(ts)
	}
	if err == nil {
		began := c.e.clk.Now()
		results, claimed, err = c.store(ctx, ts)
		c.e.opts.Observer.Committed(c.e.clk.Now().Sub(began), err != nil)
	}
	for i, s := range batch {
		switch {
		case err != nil:
			s.err = fmt.Errorf("commit run %s: %w", s.t.RunID, err)
		case i < len(results):
			s.res = results[i]
			if results[i].Err != nil {
				s.err = fmt.Errorf("commit run %s: %w", s.t.RunID, results[i].Err)
			}
		default:
			s.err = fmt.Errorf("commit run %s: the store returned %d results for %d transitions", s.t.RunID, len(results), len(ts))
		}
	}
	// Report events before anyone moves on, so progress output is in order.
	if c.e.opts.OnEvent != nil {
		for _, s := range batch {
			if s.err == nil {
				c.e.emit(s.t, s.res)
			}
		}
	}
	c.mu.Lock()
	next := c.queue
	c.queue = nil
	if len(next) == 0 {
		c.busy = false
	}
	c.mu.Unlock()
	for _, s := range batch[1:] {
		close(s.done)
	}
	if len(next) > 0 {
		next[0].batch = next
		close(next[0].lead)
	}
	if claimed.p != nil {
		claimed.p.startRuns(claimed.runs, claimed.n)
	}
}

// batchClaim is what a commit claimed for a worker pool: runs for n
// reserved slots of p.
type batchClaim struct {
	p    *pool
	n    int
	runs []store.Run
}

// store commits the batch. When the store can, and a worker pool of this
// engine has free slots, the same database transaction also claims runs
// for those slots, so a busy worker's claims cost no commit of their own:
// the runs that end in one commit are replaced by the next, instead of the
// worker claiming in waves between commits.
func (c *committer) store(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, batchClaim, error) {
	cc, ok := c.e.st.(store.TransitionClaimer)
	if !ok {
		results, err := c.e.st.TransitionCommit(ctx, ts)
		return results, batchClaim{}, err
	}
	var bc batchClaim
	for _, p := range c.e.batchPools() {
		// A run whose transition releases it (it ended or parked) leaves
		// the pool with this commit: its slot is free for a run claimed in
		// the same commit. (The claim comes first in the database
		// transaction, so it cannot take that run back.)
		owner, ending := p.owner.String(), 0
		for i := range ts {
			if ts[i].Run != nil && ts[i].Run.Release && ts[i].Lease.Owner == owner {
				ending++
			}
		}
		if n := p.reserve(ending); n > 0 {
			bc.p, bc.n = p, n
			break
		}
	}
	if bc.p == nil {
		results, err := c.e.st.TransitionCommit(ctx, ts)
		return results, bc, err
	}
	results, runs, err := cc.TransitionCommitClaim(ctx, ts, store.RunClaimParams{Owner: bc.p.owner.String(),
		Now: c.e.clk.Now(), LeaseFor: c.e.opts.LeaseFor, Limit: bc.n})
	bc.runs = runs
	return results, bc, err
}

func (s *submission) result() error { return s.err }

// emit calls OnEvent for the events of an applied transition.
func (e *Engine) emit(t store.Transition, res store.TransitionResult) {
	for i, ev := range t.Events {
		var id int64
		if i < len(res.EventIDs) {
			id = res.EventIDs[i]
		}
		e.opts.OnEvent(store.Event{ID: id, RunID: t.RunID, At: t.Now, Kind: ev.Kind, StepKey: ev.StepKey, Data: ev.Data})
	}
	for _, c := range t.Children {
		for _, ev := range c.Events {
			e.opts.OnEvent(store.Event{RunID: c.ID, At: t.Now, Kind: ev.Kind, StepKey: ev.StepKey, Data: ev.Data})
		}
	}
}

// isLeaseLost reports whether err says the run's lease was taken over.
func isLeaseLost(err error) bool { return errors.Is(err, store.ErrLeaseLost) }

// mustJSON encodes v; values here are built by the engine from JSON-like
// data, so a failure is a bug, reported as a JSON string.
func mustJSON(v any) json.RawMessage {
	if b, ok := appendValueJSON(nil, v, 0); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprintf("unencodable value: %v", err))
	}
	return b
}
