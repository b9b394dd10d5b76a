package interp

// What storing a version does to the runs of its workflow, asked before
// it is stored (plan) or when apply meets a blocked run.

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
)

// PlanRunsParams names the version whose storing is planned.
type PlanRunsParams struct {
	Workflow string
	// Version is the version about to be stored.
	Version string
}

// RunPlan is what storing a version would do to one unfinished run.
type RunPlan struct {
	Run store.Run
	// Binding is what the binding check would do to the run; zero for a
	// blocked run, which stays blocked until it is decided.
	Binding Binding
}

// PlanRuns says what storing p.Version would do to each unfinished run of
// p.Workflow (spec/versioning.md §4), in the order the store lists them.
// It writes nothing.
func (e *Engine) PlanRuns(ctx context.Context, p PlanRunsParams) ([]RunPlan, error) {
	runs, err := e.st.RunList(ctx, store.RunListParams{Workflow: p.Workflow})
	if err != nil {
		return nil, fmt.Errorf("listing the runs of workflow %q: %w", p.Workflow, err)
	}
	var out []RunPlan
	for _, rs := range runs {
		if rs.Status.Terminal() {
			continue
		}
		run, err := e.st.RunGet(ctx, rs.ID)
		if err != nil {
			return nil, fmt.Errorf("reading run %s: %w", rs.ID, err)
		}
		rp := RunPlan{Run: run}
		if run.Status != store.RunBlocked {
			if rp.Binding, err = e.binding(ctx, run, p.Version); err != nil {
				return nil, fmt.Errorf("planning the version of run %s: %w", run.ID, err)
			}
		}
		out = append(out, rp)
	}
	return out, nil
}

// BlockedRuns returns run, blocked by a new MAJOR version, and after it
// the other runs of its workflow a decision about that version concerns:
// those blocked, and those parked bound to an older MAJOR that a decision
// can be taken on now (OfferDecision: nobody holds them, no cancel request,
// not decided old, not a child kept to its pin), which apply announced as
// blocked when it stored the version. It writes nothing: a parked one is
// blocked (Rebind) just before it is decided.
func (e *Engine) BlockedRuns(ctx context.Context, run store.Run) ([]store.Run, error) {
	others, err := e.st.RunList(ctx, store.RunListParams{Workflow: run.Workflow,
		Statuses: []store.RunStatus{store.RunBlocked, store.RunPending, store.RunWaiting}})
	if err != nil {
		return nil, fmt.Errorf("listing the blocked runs of workflow %q: %w", run.Workflow, err)
	}
	blocked := []store.Run{run}
	for _, o := range others {
		if o.ID == run.ID {
			continue
		}
		r, err := e.st.RunGet(ctx, o.ID)
		if err != nil {
			return nil, fmt.Errorf("reading run %s: %w", o.ID, err)
		}
		if r.Status != store.RunBlocked {
			if r.Status.Terminal() {
				continue
			}
			offer, err := e.OfferDecision(ctx, r)
			if err != nil {
				return nil, err
			}
			if !offer.Offer {
				continue
			}
		}
		blocked = append(blocked, r)
	}
	return blocked, nil
}
