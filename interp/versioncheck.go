package interp

// The version promise of an apply (spec/versioning.md §3, §8): a compiled
// graph is checked against the stored versions of its workflow before it
// is stored. A development version (MAJOR 0) that is the newest stored may
// be replaced in place while no unfinished run is bound to it.

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// CheckVersionParams is what CheckVersion checks.
type CheckVersionParams struct {
	// Graph is the compiled graph about to be stored.
	Graph *graph.Graph
}

// VersionCheck is the outcome of CheckVersion.
type VersionCheck struct {
	// Against is the stored version the graph was compared with (Graph
	// nil): the same version when it is stored, else the highest stored
	// one. It is zero when the workflow has no stored version.
	Against store.Version
	// Newest is the highest stored version (zero when none).
	Newest store.Version
	// NewMajor is true when the graph's version is a higher MAJOR than
	// Newest: only storing such a version can block unfinished runs that
	// nothing blocked before (spec/versioning.md §4; PlanRuns says which).
	NewMajor bool
	// Replace is true when storing the graph replaces the stored graph of
	// its version in place (a development version, §8): Against is the
	// revision it replaces, Revision the one it becomes, Changes what
	// differs from Against. Refused is nil then.
	Replace  bool
	Revision int
	Changes  []graph.Change
	// Below is the version under Against that a replacement was checked
	// against (zero when the replaced version is the first stored).
	Below store.Version
	// Refused is why the version promise is broken, nil when it holds: a
	// *graph.BumpError when the version is lower than Against, the same
	// released version with another graph, or a bump that does not cover
	// the changes (for a replacement, those from Below); a
	// *store.VersionInUseError when a development version would be
	// replaced while an unfinished run is bound to it; another error when
	// the declared version cannot be compared.
	Refused error
}

// CheckVersion checks the version promise of p.Graph against the stored
// versions of its workflow: the same version must have the same graph, a
// version may not go down, and the declared bump must cover the changes
// (graph.CheckBump). The one exception is a development version (MAJOR 0)
// that is the newest stored: another graph of it replaces it (Replace),
// provided the graph is a valid bump from the version below it (the runs
// of older versions that would move to it rely on that) and no
// unfinished run is bound to it. It writes nothing. The error is a failure
// to read the store (a *GraphError for a stored graph that cannot be
// read), not a refusal, which is VersionCheck.Refused.
func (e *Engine) CheckVersion(ctx context.Context, p CheckVersionParams) (VersionCheck, error) {
	var c VersionCheck
	g := p.Graph
	vs, err := e.Versions(ctx, g.Workflow)
	if err != nil || len(vs) == 0 {
		return c, err
	}
	c.Newest, c.Against = vs[len(vs)-1], vs[len(vs)-1]
	if v, err := graph.ParseVersion(g.Version); err == nil && v.Major > c.Newest.Major {
		c.NewMajor = true
	}
	at := -1
	for i, v := range vs {
		if v.Version == g.Version {
			c.Against, at = v, i
		}
	}
	old, err := e.Graph(ctx, g.Workflow, c.Against.Hash)
	if err != nil {
		return c, err
	}
	_, changes, refused := graph.CheckBump(old, g)
	var be *graph.BumpError
	if !errors.As(refused, &be) || be.Reason != graph.BumpSameVersion || !Replaceable(c.Against, c.Newest) {
		c.Refused = refused
		return c, nil
	}
	// Another graph of the newest development version: a replacement.
	c.Changes = changes
	if at > 0 {
		c.Below = vs[at-1]
		below, err := e.Graph(ctx, g.Workflow, c.Below.Hash)
		if err != nil {
			return c, err
		}
		if _, _, c.Refused = graph.CheckBump(below, g); c.Refused != nil {
			return c, nil
		}
	}
	in, err := e.versionInUse(ctx, g.Workflow, g.Version)
	if err != nil {
		return c, err
	}
	if in != nil {
		c.Refused = in
		return c, nil
	}
	c.Replace, c.Revision = true, c.Against.Revision+1
	return c, nil
}

// Replaceable reports whether stored version v may be replaced in place
// by another graph (spec/versioning.md §8): it is a development version
// (MAJOR 0) and the newest stored version of its workflow, newest.
// Whether a run holds it is checked apart (at apply, in the store).
func Replaceable(v, newest store.Version) bool {
	return v.Major == 0 && v.Version == newest.Version
}

// versionInUse returns a *store.VersionInUseError naming the oldest
// unfinished run bound to version, nil when there is none.
func (e *Engine) versionInUse(ctx context.Context, workflow, version string) (*store.VersionInUseError, error) {
	runs, err := e.st.RunList(ctx, store.RunListParams{Workflow: workflow})
	if err != nil {
		return nil, fmt.Errorf("listing the runs of workflow %q: %w", workflow, err)
	}
	var in *store.VersionInUseError
	for _, r := range runs {
		if r.Version != version || r.Status.Terminal() {
			continue
		}
		if in == nil {
			in = &store.VersionInUseError{Workflow: workflow, Version: version}
		}
		in.Runs++
		if in.Run == "" || r.ID < in.Run {
			in.Run, in.Status = r.ID, r.Status
		}
	}
	return in, nil
}
