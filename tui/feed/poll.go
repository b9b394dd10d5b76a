package feed

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// PollInterval is how often flowtui asks the store for new events: well
// inside the 500 ms in which a change by any process must show.
const PollInterval = 250 * time.Millisecond

// MinPollGap is the least time between two polls when the store tells of
// commits (flowtui then polls on each, instead of waiting PollInterval).
const MinPollGap = 50 * time.Millisecond

// maxEvents bounds the events read by one poll; a poll that reads that many
// reports More and the next one follows at once.
const maxEvents = 2000

// RunRow is a run as the runs list shows it: the store's run summary
// (StepsTotal counts the steps of the run's graph, or of its step rows
// when the graph cannot be read) and what the list shows and searches
// beyond it.
type RunRow struct {
	store.RunSummary
	// WaitReason is the run's wait reason in rows re-read by a poll or an
	// open; "" in the rows of Load, whose run summaries do not carry it.
	// What a run waits for is read with Current, not from a row.
	WaitReason string
	// Error is the text of a failed run's error ("kind: message"), for the
	// list's search; "" for the others.
	Error string
}

// Snapshot is the first view of the store.
type Snapshot struct {
	// Cursor is the id of the newest event when the snapshot was taken.
	Cursor int64
	Runs   []RunRow // newest first
}

// Load reads every run and the newest event id. The cursor is read before
// the runs, so a change made while loading is seen again by the next Poll,
// never lost.
func (s *Source) Load(ctx context.Context) (Snapshot, error) {
	cur, err := s.LastEventID(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	sums, err := s.records().RunList(ctx, store.RunListParams{})
	if err != nil {
		return Snapshot{}, fmt.Errorf("listing runs: %w", err)
	}
	snap := Snapshot{Cursor: cur, Runs: make([]RunRow, 0, len(sums))}
	hashes := map[string]map[string]string{} // workflow → version → graph hash, read once per workflow
	for _, r := range sums {
		row := RunRow{RunSummary: r}
		if _, ok := hashes[r.Workflow]; !ok {
			hashes[r.Workflow] = s.versionHashes(ctx, r.Workflow)
		}
		row.StepsTotal = max(row.StepsTotal, s.stepCount(ctx, r.Workflow, hashes[r.Workflow][r.Version]))
		if r.Status == store.RunFailed {
			// A summary carries no error; the search reads a failed
			// run's error text, so the few failed runs are read whole.
			if full, err := s.records().RunGet(ctx, r.ID); err == nil {
				row.Error = ErrorText(full.Error)
			}
		}
		snap.Runs = append(snap.Runs, row)
	}
	return snap, nil
}

// versionHashes maps the stored versions of a workflow to their graph
// hashes (the version heads: no graph is read); empty when they cannot be
// read (the step counts then fall back to the step rows).
func (s *Source) versionHashes(ctx context.Context, workflow string) map[string]string {
	vs, err := s.records().VersionHeads(ctx, workflow)
	if err != nil {
		return nil
	}
	m := make(map[string]string, len(vs))
	for _, v := range vs {
		m[v.Version] = v.Hash
	}
	return m
}

// stepCount is the number of steps of a stored graph, read through the
// engine's graph cache, or 0 when it cannot be read: a run's count then
// falls back to its step rows (and, in a run summary, to the version's
// recorded count).
func (s *Source) stepCount(ctx context.Context, workflow, hash string) int {
	if hash == "" {
		return 0
	}
	g, err := s.Door.Graph(ctx, workflow, hash)
	if err != nil {
		return 0
	}
	return len(g.Steps)
}

// LastEventID finds the newest event id without reading the history
// (api.LastEventID).
func (s *Source) LastEventID(ctx context.Context) (int64, error) {
	return api.LastEventID(ctx, s.records())
}

// Watch names what the interface has open, so a poll refreshes it when it
// changed.
type Watch struct {
	RunID   string // the run view's run, "" when none
	StepKey string // the step view's step key, "" when none
}

// Changes is what changed since the cursor.
type Changes struct {
	Cursor int64
	// More is true when the poll stopped at its limit; poll again at once.
	More bool
	// Events appended since the previous cursor, in id order.
	Events []store.Event
	// Runs are the touched runs, re-read.
	Runs []RunRow
	// Open is the watched run, re-read, when it was touched.
	Open *RunDetail
	// Attempts are the watched step key's attempts, when its run was
	// touched.
	Attempts []store.Attempt
}

// Poll reads the events after cursor and re-reads only the runs they touch.
func (s *Source) Poll(ctx context.Context, cursor int64, w Watch) (Changes, error) {
	evs, err := s.records().EventList(ctx, store.EventListParams{AfterID: cursor, Limit: maxEvents})
	if err != nil {
		return Changes{Cursor: cursor}, fmt.Errorf("reading new events: %w", err)
	}
	ch := Changes{Cursor: cursor, Events: evs, More: len(evs) == maxEvents}
	if len(evs) == 0 {
		return ch, nil
	}
	ch.Cursor = evs[len(evs)-1].ID
	touched := map[string]bool{}
	var order []string
	for _, e := range evs {
		if !touched[e.RunID] {
			touched[e.RunID] = true
			order = append(order, e.RunID)
		}
	}
	for _, id := range order {
		if id == w.RunID {
			d, err := s.detail(ctx, id, false)
			if err != nil {
				return Changes{Cursor: cursor}, err
			}
			ch.Open = d
			ch.Runs = append(ch.Runs, d.Row())
			if w.StepKey != "" {
				if ch.Attempts, err = s.records().AttemptList(ctx, id, w.StepKey); err != nil {
					return Changes{Cursor: cursor}, fmt.Errorf("reading the attempts of step %s: %w", w.StepKey, err)
				}
			}
			continue
		}
		row, err := s.row(ctx, id)
		if err != nil {
			return Changes{Cursor: cursor}, err
		}
		ch.Runs = append(ch.Runs, row)
	}
	return ch, nil
}

// row re-reads one run for the list.
func (s *Source) row(ctx context.Context, id string) (RunRow, error) {
	r, err := s.records().RunGet(ctx, id)
	if err != nil {
		return RunRow{}, fmt.Errorf("reading run %s: %w", id, err)
	}
	// The row counts steps, not their items: the steps' own rows do.
	steps, err := s.records().StepTops(ctx, id)
	if err != nil {
		return RunRow{}, fmt.Errorf("reading the steps of run %s: %w", id, err)
	}
	return makeRow(r, steps, s.stepCount(ctx, r.Workflow, r.GraphHash)), nil
}

func makeRow(r store.Run, steps []store.Step, graphSteps int) RunRow {
	row := RunRow{RunSummary: store.RunSummary{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Key: r.Key,
		Status: r.Status, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt}, WaitReason: r.WaitReason, Error: ErrorText(r.Error)}
	for _, st := range steps {
		if st.Index >= 0 || st.Iteration >= 0 || !store.GraphStep(st.Step) {
			continue // items and iterations are counted in their step; the engine's rows are not steps
		}
		row.StepsTotal++
		if st.Status.Terminal() {
			row.StepsDone++
		}
	}
	row.StepsTotal = max(row.StepsTotal, graphSteps)
	return row
}

// RunDetail is one run with its graph, steps, pending signals and (when
// loaded in full) its history.
type RunDetail struct {
	Run store.Run
	// Graph is the bound version's graph from the engine's cache, shared
	// and not to be modified; nil when it cannot be read.
	Graph *graph.Graph
	// GraphErr says why Graph is nil.
	GraphErr error
	Steps    []store.Step
	Signals  []store.Signal // pending
	// Events is the run's whole history, read once when the run is opened;
	// polls carry only new events.
	Events []store.Event
	// Bound is the stored version the run is bound to (by hash).
	Bound string
}

// Row is the run as a runs-list row.
func (d *RunDetail) Row() RunRow {
	n := 0
	if d.Graph != nil {
		n = len(d.Graph.Steps)
	}
	return makeRow(d.Run, d.Steps, n)
}

// WaitingSignals lists the signals the run's unfinished wait steps take
// (those of its graph whose step has not finished, started or not), in
// graph order: what a signal sent now can go to.
func (d *RunDetail) WaitingSignals() []string {
	if d == nil || d.Graph == nil {
		return nil
	}
	done := map[string]bool{}
	for _, st := range d.Steps {
		if st.Key == st.Step && st.Status.Terminal() {
			done[st.Step] = true
		}
	}
	var out []string
	for _, s := range d.Graph.Steps {
		if s.Action.Kind == graph.KindWait && s.Action.Wait != nil && s.Action.Wait.Signal != "" && !done[s.Name] {
			out = append(out, s.Action.Wait.Signal)
		}
	}
	return out
}

// Current reads a run as it is now, with its graph, steps and pending
// signals but not its history: what an action on a row of the list needs
// to know (the list's rows carry less). id may be a unique prefix.
func (s *Source) Current(ctx context.Context, id string) (*RunDetail, error) {
	return s.detail(ctx, id, false)
}

// Detail reads a run in full, history included, for the run view. id may be
// a unique prefix.
func (s *Source) Detail(ctx context.Context, id string) (*RunDetail, error) {
	return s.detail(ctx, id, true)
}

func (s *Source) detail(ctx context.Context, id string, history bool) (*RunDetail, error) {
	r, err := s.records().RunFind(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	d := &RunDetail{Run: r, Bound: r.Version}
	d.Graph, d.GraphErr = s.Door.Graph(ctx, r.Workflow, r.GraphHash)
	if d.Graph != nil {
		d.Bound = d.Graph.Version
	}
	if d.Steps, err = s.records().StepList(ctx, r.ID); err != nil {
		return nil, fmt.Errorf("reading the steps of run %s: %w", r.ID, err)
	}
	if d.Signals, err = s.records().SignalList(ctx, r.ID, true); err != nil {
		return nil, fmt.Errorf("reading the signals of run %s: %w", r.ID, err)
	}
	if history {
		if d.Events, err = s.records().EventList(ctx, store.EventListParams{RunID: r.ID}); err != nil {
			return nil, fmt.Errorf("reading the history of run %s: %w", r.ID, err)
		}
	}
	return d, nil
}

// StepEvents returns the events of a step key: the step's own, and those of
// its foreach items and until iterations.
func StepEvents(evs []store.Event, key string) []store.Event {
	var out []store.Event
	for _, e := range evs {
		if e.StepKey == key || strings.HasPrefix(e.StepKey, key+"[") || strings.HasPrefix(e.StepKey, key+"#") {
			out = append(out, e)
		}
	}
	return out
}
