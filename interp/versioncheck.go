package interp

// The version promise of an apply (spec/versioning.md §3): a compiled
// graph is checked against the stored versions of its workflow before it
// is stored.

import (
	"context"

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
	// Refused is why the version promise is broken, nil when it holds: a
	// *graph.BumpError when the version is lower than Against, the same
	// version with another graph, or a bump that does not cover the
	// changes; another error when the declared version cannot be compared.
	Refused error
}

// CheckVersion checks the version promise of p.Graph against the stored
// versions of its workflow: the same version must have the same graph, a
// version may not go down, and the declared bump must cover the changes
// (graph.CheckBump). It writes nothing. The error is a failure to read the
// store (a *GraphError for a stored graph that cannot be read), not a
// refusal, which is VersionCheck.Refused.
func (e *Engine) CheckVersion(ctx context.Context, p CheckVersionParams) (VersionCheck, error) {
	var c VersionCheck
	g := p.Graph
	vs, err := e.Versions(ctx, g.Workflow)
	if err != nil || len(vs) == 0 {
		return c, err
	}
	c.Newest, c.Against = vs[len(vs)-1], vs[len(vs)-1]
	for _, v := range vs {
		if v.Version == g.Version {
			c.Against = v
		}
	}
	old, err := e.Graph(ctx, g.Workflow, c.Against.Hash)
	if err != nil {
		return c, err
	}
	_, _, c.Refused = graph.CheckBump(old, g)
	return c, nil
}
