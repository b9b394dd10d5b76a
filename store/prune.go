package store

import "time"

// RunPruneParams selects the finished runs that retention deletes.
//
// A run tree (a top-level run and every child run below it) is pruned as a
// whole, and only when every run in it ended (completed, failed or
// canceled) before Before, none of its dead letters is still open and none
// of its alerts is still waiting to be sent. Unfinished runs, and finished
// runs whose tree is not finished, are never touched.
type RunPruneParams struct {
	// Before is the cutoff: runs that finished at or after it stay.
	Before time.Time
	// Limit bounds how many run trees one call deletes, so that one
	// transaction stays short; 0 means no limit. Call again until
	// PruneResult.Runs is 0 to prune everything that qualifies.
	Limit int
	// DryRun counts what would be deleted and deletes nothing.
	DryRun bool
	// Workflow restricts the prune to the run trees whose top-level run
	// is of this workflow; "" prunes every workflow's.
	Workflow string
}

// PruneResult counts the rows a prune deleted (or, for a dry run, would
// delete).
type PruneResult struct {
	Runs     int // runs, children included
	Steps    int // step rows (steps, foreach items, until iterations)
	Attempts int // step attempts
	Events   int // events of the runs' histories
	Output   int // chunks of the steps' live output
}

// Add returns the sum of two results.
func (r PruneResult) Add(o PruneResult) PruneResult {
	return PruneResult{Runs: r.Runs + o.Runs, Steps: r.Steps + o.Steps, Attempts: r.Attempts + o.Attempts, Events: r.Events + o.Events, Output: r.Output + o.Output}
}
