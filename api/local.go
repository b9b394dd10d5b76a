package api

import (
	"context"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Local is the Service of an engine over a store in this process: what
// the CLI uses without --server, and what flowrun serve's handlers call.
type Local struct {
	eng  *interp.Engine
	st   store.Store
	clk  clock.Clock
	opts LocalOptions
	// commits wake the waiters of this door at the store's commits
	// (commits.go).
	commits commits
}

// LocalOptions are the settings of NewLocal.
type LocalOptions struct {
	// WorkDir is where the exec steps of a version deployed from sources
	// (Deploy: apply --server) start: the server's, not the client's
	// directory, which the server cannot see.
	WorkDir string
	// MaxFileSize bounds each deployed file (0: lang's default).
	MaxFileSize int64
	// Clock times the following of a log (nil: the real clock).
	Clock clock.Clock
}

// NewLocal returns the Service of eng. Close does not close eng's store:
// whoever opened it does.
func NewLocal(eng *interp.Engine, opts LocalOptions) *Local {
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	return &Local{eng: eng, st: eng.Store(), clk: clk, opts: opts}
}

// Close implements Service; the store stays open (NewLocal).
func (l *Local) Close() error { return nil }

// Runs implements RunReader.
func (l *Local) Runs(ctx context.Context, q RunsQuery) ([]interp.RunSummaryJSON, error) {
	p := store.RunListParams{Workflow: q.Workflow, Key: q.Key, Statuses: q.Statuses, Since: q.Since, Until: q.Until,
		TopLevel: !q.Children, Limit: q.Limit, BeforeID: q.Before, Text: q.Text}
	runs, err := l.st.RunList(ctx, p)
	if err != nil {
		return nil, err
	}
	out := interp.RunSummaries(runs)
	if err := interp.AddRunSchedules(ctx, l.st, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Run implements RunReader.
func (l *Local) Run(ctx context.Context, ref string) (*interp.RunView, error) {
	run, err := l.eng.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	return l.eng.Show(ctx, run.ID)
}

// Offer implements RunReader.
func (l *Local) Offer(ctx context.Context, runID string) (interp.DecisionOffer, error) {
	run, err := l.eng.ResolveRun(ctx, runID)
	if err != nil {
		return interp.DecisionOffer{}, err
	}
	return l.eng.OfferDecision(ctx, run)
}

// NearestWorkflows implements RunReader.
func (l *Local) NearestWorkflows(ctx context.Context, name string) (bool, []string, error) {
	return l.eng.NearestWorkflows(ctx, name)
}

// RunFolded is Run with each foreach step's items folded into their
// totals and failed items (interp.Engine.ShowFolded): a view of a run of
// many items without reading every item row. A face served by this
// process (the web dashboard) uses it where it can.
func (l *Local) RunFolded(ctx context.Context, ref string, maxFailed int) (*interp.RunView, error) {
	run, err := l.eng.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	return l.eng.ShowFolded(ctx, run.ID, maxFailed)
}

// RunItems is a page of a foreach step's items (interp.Engine.ShowItems).
func (l *Local) RunItems(ctx context.Context, ref, step string, from, limit int) ([]interp.ItemView, error) {
	return l.eng.ShowItems(ctx, ref, step, from, limit)
}
