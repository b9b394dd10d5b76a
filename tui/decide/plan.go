// Package decide is the version-decision screen for a blocked run: the
// classified changes between the graph the run is bound to and the newest
// stored version, the bump they require, and which completed steps a
// migration keeps and which it re-runs, shown before the choice of old, new
// or migrate. The same model serves flowtui (as an overlay) and `flowrun
// apply` on a terminal (Prompt, inline).
//
// decide must not carry the decision out: flowtui hands the choice to a
// feed.Decider, and Prompt returns it to its caller.
package decide

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
)

// Plan is what a decision is about.
type Plan struct {
	RunID    string
	Workflow string
	// From is the version the run is bound to; To the newest stored one.
	From, To string
	Changes  []lang.Change
	Bump     lang.Bump
	// Keep and Rerun are the completed steps a migration keeps and re-runs
	// (lang.MigrationPlan); PlanErr says why they could not be computed.
	Keep, Rerun []string
	PlanErr     error
}

// LoadPlan reads the run, its bound graph and the newest version of its
// workflow, and classifies the difference.
func LoadPlan(ctx context.Context, src *feed.Source, runID string) (Plan, error) {
	run, err := src.Store.RunFind(ctx, runID)
	if err != nil {
		return Plan{}, fmt.Errorf("reading run %s: %w", runID, err)
	}
	old, err := src.GraphByHash(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return Plan{}, err
	}
	_, newest, err := src.Newest(ctx, run.Workflow)
	if err != nil {
		return Plan{}, err
	}
	steps, err := src.Store.StepList(ctx, run.ID)
	if err != nil {
		return Plan{}, fmt.Errorf("reading the steps of run %s: %w", run.ID, err)
	}
	return MakePlan(run.ID, old, newest, steps), nil
}

// MakePlan classifies the change from old to new for a run with the given
// step rows.
func MakePlan(runID string, old, new *lang.Graph, steps []store.Step) Plan {
	p := Plan{RunID: runID, Workflow: old.Workflow, From: old.Version, To: new.Version}
	p.Changes = lang.Diff(old, new)
	p.Bump = lang.RequiredBump(p.Changes)
	inOld := map[string]bool{}
	for _, s := range old.Steps {
		inOld[s.Name] = true
	}
	var completed []string
	for _, s := range steps {
		if s.Key == s.Step && inOld[s.Step] && (s.Status == store.StepCompleted || s.Status == store.StepSkipped) {
			completed = append(completed, s.Step)
		}
	}
	p.Keep, p.Rerun, p.PlanErr = lang.MigrationPlan(old, new, completed)
	return p
}
