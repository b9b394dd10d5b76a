package api

import (
	"context"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Service is what the faces read and steer runs through. Every method
// takes a run reference where it names a run: an id or a unique prefix
// of one, @last, WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1); one that
// names no single run is an *interp.RunRefError.
type Service interface {
	RunReader
	Deployer
	Planner
	Starter
	RunControl
	LogReader
	Decider
	DeadLetterWorker
	Overview
	VersionLister
	ScheduleWorker
	TokenKeeper
	Records
	// Close releases what the service holds (the store of a Local it
	// opened; a Client's idle connections).
	Close() error
}

// RunReader reads runs.
type RunReader interface {
	// Runs lists runs, newest first.
	Runs(ctx context.Context, q RunsQuery) ([]interp.RunSummaryJSON, error)
	// Run is the view of a run (show, show --json).
	Run(ctx context.Context, ref string) (*interp.RunView, error)
	// Offer says whether a version decision can be taken on the run now.
	Offer(ctx context.Context, runID string) (interp.DecisionOffer, error)
	// NearestWorkflows says whether a workflow is stored and, when not,
	// the stored names nearest to it (for a misspelled name).
	NearestWorkflows(ctx context.Context, name string) (stored bool, nearest []string, err error)
}

// RunsQuery filters Runs: the flags of flowrun runs.
type RunsQuery struct {
	Workflow string
	Key      string
	Statuses []store.RunStatus
	// Since keeps the runs created at or after it (zero: all); Until the
	// runs created before it.
	Since, Until time.Time
	// Children lists child runs too.
	Children bool
	// Limit is at most how many runs (0: all).
	Limit int
	// Before keeps the runs older than this run id (a page's cursor).
	Before string
	// Text keeps the runs whose id, key or error holds it, ignoring case.
	Text string
}

// OfferJSON is the wire form of an interp.DecisionOffer (GET
// /v1/runs/{id}/decision).
type OfferJSON struct {
	Offer   bool   `json:"offer"`
	Blocked bool   `json:"blocked"`
	Newest  string `json:"newest"`
	Reason  string `json:"reason"`
}

// OfferOf is the wire form of o.
func OfferOf(o interp.DecisionOffer) OfferJSON {
	return OfferJSON{Offer: o.Offer, Blocked: o.Blocked, Newest: o.Newest, Reason: o.Reason}
}
