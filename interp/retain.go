package interp

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/store"
)

// RetainOptions configure the retention a worker or server applies.
type RetainOptions struct {
	// Default is how long finished runs are kept when their workflow sets
	// no retention; 0 keeps them (only the workflows that set one are
	// pruned).
	Default time.Duration
	// Every is how often a pass runs (default a minute).
	Every time.Duration
	// Batch is how many run trees one transaction deletes at most
	// (default 100): a pass deletes in many short transactions, never one
	// long one that would hold the store's write lock.
	Batch int
}

func (o RetainOptions) withDefaults() RetainOptions {
	if o.Every <= 0 {
		o.Every = time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	return o
}

// Retain applies retention until ctx is done: a pass at once, then one
// every o.Every (RetainPass). A failing pass is left to the next: the
// store's faults are the claim loop's to report. The caller owns the
// goroutine it runs in and ends it by canceling ctx.
func (e *Engine) Retain(ctx context.Context, o RetainOptions) {
	o = o.withDefaults()
	for {
		_, _ = e.RetainPass(ctx, o)
		t := e.clk.NewTimer(o.Every)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// RetainPass deletes the finished run trees that outlived their
// workflow's retention: the `retention` of the workflow's newest stored
// version, else o.Default (none when both are unset). Each workflow's
// trees go in batches of o.Batch, one transaction each, until a batch
// comes back short. It returns the runs pruned by workflow and tells the
// Observer of each workflow's count (RunsPruned).
func (e *Engine) RetainPass(ctx context.Context, o RetainOptions) (map[string]int, error) {
	o = o.withDefaults()
	heads, err := e.st.VersionHeads(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("retention: list workflows: %w", err)
	}
	newest := map[string]store.Version{} // heads come oldest first per workflow
	var order []string
	for _, v := range heads {
		if _, seen := newest[v.Workflow]; !seen {
			order = append(order, v.Workflow)
		}
		newest[v.Workflow] = v
	}
	pruned := map[string]int{}
	for _, wf := range order {
		age := o.Default
		l, err := e.load(ctx, wf, newest[wf].Hash)
		if err != nil {
			return pruned, fmt.Errorf("retention of %q: %w", wf, err)
		}
		if ms := l.g.RetentionMS; ms > 0 {
			age = time.Duration(ms) * time.Millisecond
		}
		if age <= 0 {
			continue
		}
		before := e.clk.Now().Add(-age)
		for ctx.Err() == nil {
			res, err := e.st.RunPrune(ctx, store.RunPruneParams{Before: before, Limit: o.Batch, Workflow: wf})
			if err != nil {
				return pruned, fmt.Errorf("retention of %q: %w", wf, err)
			}
			if res.Runs > 0 {
				pruned[wf] += res.Runs
				e.opts.Observer.RunsPruned(wf, res.Runs)
			}
			if res.Runs < o.Batch {
				break
			}
		}
	}
	return pruned, ctx.Err()
}
