package interp

// Where a version decision can be offered (spec/versioning.md §4–§6): one
// rule for every entry point, so that `flowrun resume`, `apply` and
// flowtui offer old/new/migrate on exactly the same runs.

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
)

// DecisionOffer says whether a version decision can be taken on a run now.
type DecisionOffer struct {
	// Offer is set when old, new and migrate can be offered: the run is
	// blocked, or it is parked or waiting (nobody holds it) bound to an
	// older MAJOR than the newest stored version it considers, was not
	// decided "old" before and is not a child kept to its pin.
	Offer bool
	// Blocked says the run is blocked already. An offered run that is
	// not blocked yet is blocked by Engine.Rebind (as a worker's claim
	// would block it) before the decision is written; Decide takes only
	// a blocked run.
	Blocked bool
	// Newest is the newer version a decision is about ("" when none).
	Newest string
	// Reason says, when Offer is false, why no decision can be taken, as
	// a clause to follow "no version decision: ".
	Reason string
}

// OfferDecision says whether a version decision can be offered for run.
// It reads the stored versions (and, when a newer MAJOR is stored, the
// run's history) and writes nothing.
func (e *Engine) OfferDecision(ctx context.Context, run store.Run) (DecisionOffer, error) {
	switch {
	case run.Status == store.RunBlocked:
		o := DecisionOffer{Offer: true, Blocked: true}
		if vs, err := e.st.VersionHeads(ctx, run.Workflow); err == nil && len(vs) > 0 {
			o.Newest = vs[len(vs)-1].Version
		} else if err != nil {
			return o, fmt.Errorf("run %s: list versions of workflow %q: %w", run.ID, run.Workflow, err)
		}
		return o, nil
	case run.Status.Terminal():
		return DecisionOffer{Reason: fmt.Sprintf("run %s is %s; only an unfinished run is bound to a version", run.ID, run.Status)}, nil
	case run.CancelRequested:
		return DecisionOffer{Reason: fmt.Sprintf("run %s has a cancel request, which wins", run.ID)}, nil
	}
	b, err := e.binding(ctx, run, "")
	if err != nil {
		return DecisionOffer{}, err
	}
	return offerFor(run, b), nil
}

// offerFor decides the offer for an unfinished run that is not blocked,
// from its binding. It is pure.
func offerFor(run store.Run, b Binding) DecisionOffer {
	o := DecisionOffer{Newest: b.Newest}
	switch {
	case b.Block && run.Lease.Owner != "":
		o.Reason = fmt.Sprintf("run %s is being executed by %s; it is blocked by version %s when it is next claimed, and can be decided then", run.ID, run.Lease.Owner, b.Newest)
	case b.Block:
		o.Offer = true
	case b.DecidedOld:
		o.Reason = fmt.Sprintf("run %s was decided old and finishes on version %s (versioning §4)", run.ID, run.Version)
	case run.ParentRunID != "":
		o.Reason = fmt.Sprintf("run %s is a child run and follows its parent step's version pin (versioning §6); decide its parent instead", run.ID)
	default:
		o.Reason = fmt.Sprintf("no newer MAJOR version of %q than %s is stored", run.Workflow, run.Version)
	}
	return o
}
