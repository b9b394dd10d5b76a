package graph

// Migration of a run in flight from the graph it is bound to onto a new
// version of its workflow.

import (
	"fmt"
)

// MigrationPlan decides, for a run moving from graph old to graph new, which
// of its completed steps keep their recorded results and which run again.
//
// completed lists the steps of old that settled with a recorded result:
// completed steps, and also skipped steps and steps that failed under
// on_error = "continue" (a skip or a continued failure is a result too, and
// is kept under the same rule). A settled step left out of completed is
// treated as not run, so every step after it re-runs: safe, but wasteful
// after a switch, whose untaken branches are skipped. A step is kept when
// it exists in new with the same Step.Hash (same definition: same action,
// same needs, same output type, ...) and every step it needs in new is kept
// too (so, transitively, its whole upstream). rerun is every other
// completed step that exists in new. Completed steps that new no longer has
// are in neither list: their results are dropped. Steps that never settled
// are in neither list either: they simply run as usual on the new graph.
//
// Both lists are in new's step order (topological), so they read in the
// order the steps run.
//
// Errors: a graph is nil or not sealed (a step without a hash), the graphs
// are of different workflows, a completed name is not a step of old, or a
// kept step's output type differs between the graphs (impossible while the
// hash covers the output type; checked so that a change to the hash cannot
// silently feed a step's output to readers expecting another type).
func MigrationPlan(old, new *Graph, completed []string) (keep, rerun []string, err error) {
	if old == nil || new == nil {
		return nil, nil, fmt.Errorf("plan migration: a graph is nil")
	}
	if old.Workflow != new.Workflow {
		return nil, nil, fmt.Errorf("plan migration: the graphs are of different workflows (%q and %q); a run only migrates between versions of its own workflow", old.Workflow, new.Workflow)
	}
	oldSteps := diffStepMap(old.Steps)
	for _, g := range []*Graph{old, new} {
		for _, s := range g.Steps {
			if s != nil && s.Hash == "" {
				return nil, nil, fmt.Errorf("plan migration: step %q of workflow %q version %s has no hash; the graph must be sealed (lang.Seal) before it is stored", s.Name, g.Workflow, g.Version)
			}
		}
	}
	done := map[string]bool{}
	for _, name := range completed {
		if oldSteps[name] == nil {
			return nil, nil, fmt.Errorf("plan migration: completed step %q is not a step of workflow %q version %s", name, old.Workflow, old.Version)
		}
		done[name] = true
	}
	// new.Steps is topological, so every need is decided before its user
	// (were it not, a need decided later counts as not kept: safe).
	kept := map[string]bool{}
	for _, s := range new.Steps {
		if s == nil || !done[s.Name] {
			continue
		}
		o := oldSteps[s.Name]
		ok := o.Hash == s.Hash
		for _, d := range s.Needs {
			ok = ok && kept[d]
		}
		if !ok {
			rerun = append(rerun, s.Name)
			continue
		}
		if !o.OutputType.Equal(s.OutputType) {
			return nil, nil, fmt.Errorf("plan migration: step %q has the same hash in both versions but its output type changed (%s → %s); the graphs were not sealed by the same flowrun", s.Name, o.OutputType, s.OutputType)
		}
		kept[s.Name] = true
		keep = append(keep, s.Name)
	}
	return keep, rerun, nil
}
