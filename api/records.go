package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Records is what a live face (flowtui, a dashboard) follows every run
// through: the store's own records of runs, steps, signals, events,
// attempts, live output, dead letters, breakers and schedules, in their
// JSON forms (the store's types carry them), and the stored graphs. A
// face reads the events after the last it saw and reads again only the
// runs they touch. Records only reads; a face steers through the rest of
// Service.
type Records interface {
	// RunList lists run summaries, newest first (every run when p is
	// zero).
	RunList(ctx context.Context, p store.RunListParams) ([]store.RunSummary, error)
	// RunFind reads a run by id or unique id prefix.
	RunFind(ctx context.Context, idOrPrefix string) (store.Run, error)
	// RunGet reads a run by id.
	RunGet(ctx context.Context, id string) (store.Run, error)
	// StepList reads every step key of a run; StepTops only the steps'
	// own rows (no foreach items, no until iterations).
	StepList(ctx context.Context, runID string) ([]store.Step, error)
	StepTops(ctx context.Context, runID string) ([]store.Step, error)
	// SignalList reads a run's signals (only the pending ones when
	// pending).
	SignalList(ctx context.Context, runID string, pending bool) ([]store.Signal, error)
	// EventList reads events: of one run, or of every run after an id.
	EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error)
	// WaitEvents returns when an event with an id above after is stored,
	// or max has passed, or ctx ends (its error then).
	WaitEvents(ctx context.Context, after int64, max time.Duration) error
	// AttemptList reads the attempts of one step key.
	AttemptList(ctx context.Context, runID, stepKey string) ([]store.Attempt, error)
	// StepOutputChunks reads a run's live output after a chunk sequence
	// number (store.OutputStore, which interp.OutputFollower reads).
	StepOutputChunks(ctx context.Context, runID string, after int64, limit int) ([]store.OutputChunk, error)
	// VersionHeads lists the stored versions of a workflow (of every
	// workflow for ""), without their graphs.
	VersionHeads(ctx context.Context, workflow string) ([]store.Version, error)
	// Graph reads a stored graph by its workflow and hash.
	Graph(ctx context.Context, workflow, hash string) (*graph.Graph, error)
	// DeadLetterList, BreakerList and ScheduleList read those records.
	DeadLetterList(ctx context.Context, all bool) ([]store.DeadLetter, error)
	BreakerList(ctx context.Context) ([]store.Breaker, error)
	ScheduleList(ctx context.Context, p store.ScheduleListParams) ([]store.Schedule, error)
	// VersionSource reads the source file a graph was stored from: its
	// name and text (store.ErrNotFound when it was stored without one).
	VersionSource(ctx context.Context, workflow, hash string) (name string, src []byte, err error)
	// RunQueue counts the runs due now and not held by a worker, and
	// says since when the oldest is due (the figures of /metrics).
	RunQueue(ctx context.Context) (store.QueueStats, error)
}

// VersionSource implements Records.
func (l *Local) VersionSource(ctx context.Context, workflow, hash string) (string, []byte, error) {
	return l.st.VersionSource(ctx, workflow, hash)
}

// VersionSource implements Records.
func (c *Client) VersionSource(ctx context.Context, workflow, hash string) (string, []byte, error) {
	var out struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	}
	if err := c.call(ctx, "GET", records("sources", workflow, hash), nil, nil, &out); err != nil {
		return "", nil, err
	}
	return out.Name, []byte(out.Source), nil
}

// RunQueue implements Records.
func (l *Local) RunQueue(ctx context.Context) (store.QueueStats, error) {
	return l.st.RunQueue(ctx, l.clk.Now())
}

// RunQueue implements Records.
func (c *Client) RunQueue(ctx context.Context) (store.QueueStats, error) {
	var out store.QueueStats
	return out, c.call(ctx, "GET", records("queue"), nil, nil, &out)
}

// MaxRecordEvents is the most events one EventList through a server
// answers; a reader that gets that many reads again after the last.
const MaxRecordEvents = 5000

// RunList implements Records.
func (l *Local) RunList(ctx context.Context, p store.RunListParams) ([]store.RunSummary, error) {
	return l.st.RunList(ctx, p)
}

// RunFind implements Records.
func (l *Local) RunFind(ctx context.Context, idOrPrefix string) (store.Run, error) {
	return l.st.RunFind(ctx, idOrPrefix)
}

// RunGet implements Records.
func (l *Local) RunGet(ctx context.Context, id string) (store.Run, error) {
	return l.st.RunGet(ctx, id)
}

// StepList implements Records.
func (l *Local) StepList(ctx context.Context, runID string) ([]store.Step, error) {
	return l.st.StepList(ctx, runID)
}

// StepTops implements Records.
func (l *Local) StepTops(ctx context.Context, runID string) ([]store.Step, error) {
	return l.st.StepTops(ctx, runID)
}

// SignalList implements Records.
func (l *Local) SignalList(ctx context.Context, runID string, pending bool) ([]store.Signal, error) {
	return l.st.SignalList(ctx, runID, pending)
}

// EventList implements Records.
func (l *Local) EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	return l.st.EventList(ctx, p)
}

// WaitEvents implements Records: it reads the store again at each commit
// the store tells of (WatchCommits), or at least every PollEvery.
func (l *Local) WaitEvents(ctx context.Context, after int64, max time.Duration) error {
	defer l.WatchCommits()()
	deadline := l.clk.Now().Add(max)
	for {
		changed := l.NextCommit()
		evs, err := l.st.EventList(ctx, store.EventListParams{AfterID: after, Limit: 1})
		if err != nil || len(evs) > 0 {
			return err
		}
		left := deadline.Sub(l.clk.Now())
		if left <= 0 {
			return nil
		}
		t := l.clk.NewTimer(min(left, PollEvery))
		select {
		case <-changed: // nil when the store cannot tell: never ready
			// The store tells of a commit as its log is written, which
			// can be before the commit is readable: read after a moment.
			t.Stop()
			t = l.clk.NewTimer(commitGap)
			select {
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// commitGap is how long a wait reads after the store told of a commit.
const commitGap = 5 * time.Millisecond

// PollEvery is how often a wait of Local reads the store when the store
// tells of no commit.
const PollEvery = 250 * time.Millisecond

// AttemptList implements Records.
func (l *Local) AttemptList(ctx context.Context, runID, stepKey string) ([]store.Attempt, error) {
	return l.st.AttemptList(ctx, runID, stepKey)
}

// StepOutputChunks implements Records.
func (l *Local) StepOutputChunks(ctx context.Context, runID string, after int64, limit int) ([]store.OutputChunk, error) {
	return l.st.StepOutputChunks(ctx, runID, after, limit)
}

// VersionHeads implements Records.
func (l *Local) VersionHeads(ctx context.Context, workflow string) ([]store.Version, error) {
	return l.st.VersionHeads(ctx, workflow)
}

// Graph implements Records, through the engine's graph cache.
func (l *Local) Graph(ctx context.Context, workflow, hash string) (*graph.Graph, error) {
	return l.eng.Graph(ctx, workflow, hash)
}

// StoredGraph is the stored form of a graph (its canonical JSON), what
// GET /v1/records/graphs/{workflow}/{hash} answers.
func (l *Local) StoredGraph(ctx context.Context, workflow, hash string) ([]byte, error) {
	v, err := l.st.VersionGetByHash(ctx, workflow, hash)
	if err != nil {
		return nil, fmt.Errorf("reading the graph %s of workflow %q: %w", hash, workflow, err)
	}
	return v.Graph, nil
}

// DeadLetterList implements Records.
func (l *Local) DeadLetterList(ctx context.Context, all bool) ([]store.DeadLetter, error) {
	return l.eng.DeadLetterList(ctx, all)
}

// BreakerList implements Records.
func (l *Local) BreakerList(ctx context.Context) ([]store.Breaker, error) {
	return l.eng.BreakerList(ctx)
}

// ScheduleList implements Records.
func (l *Local) ScheduleList(ctx context.Context, p store.ScheduleListParams) ([]store.Schedule, error) {
	return l.st.ScheduleList(ctx, p)
}

// records is the path of a record under /v1/records.
func records(parts ...string) string {
	p := "/v1/records"
	for _, s := range parts {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// RunList implements Records. Only the whole list, or one workflow's, is
// read through a server.
func (c *Client) RunList(ctx context.Context, p store.RunListParams) ([]store.RunSummary, error) {
	q := url.Values{}
	if p.Workflow != "" {
		q.Set("workflow", p.Workflow)
	}
	var out []store.RunSummary
	return out, c.call(ctx, "GET", records("runs"), q, nil, &out)
}

// RunFind implements Records.
func (c *Client) RunFind(ctx context.Context, idOrPrefix string) (store.Run, error) {
	var out store.Run
	return out, c.call(ctx, "GET", records("runs", idOrPrefix), nil, nil, &out)
}

// RunGet implements Records.
func (c *Client) RunGet(ctx context.Context, id string) (store.Run, error) {
	return c.RunFind(ctx, id)
}

// StepList implements Records.
func (c *Client) StepList(ctx context.Context, runID string) ([]store.Step, error) {
	var out []store.Step
	return out, c.call(ctx, "GET", records("runs", runID, "steps"), nil, nil, &out)
}

// StepTops implements Records.
func (c *Client) StepTops(ctx context.Context, runID string) ([]store.Step, error) {
	var out []store.Step
	return out, c.call(ctx, "GET", records("runs", runID, "steps"), url.Values{"tops": {"true"}}, nil, &out)
}

// SignalList implements Records.
func (c *Client) SignalList(ctx context.Context, runID string, pending bool) ([]store.Signal, error) {
	var out []store.Signal
	return out, c.call(ctx, "GET", records("runs", runID, "signals"), url.Values{"pending": {strconv.FormatBool(pending)}}, nil, &out)
}

// EventList implements Records: at most MaxRecordEvents a call.
func (c *Client) EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	q := url.Values{}
	if p.RunID != "" {
		q.Set("run", p.RunID)
	}
	if p.AfterID > 0 {
		q.Set("after", strconv.FormatInt(p.AfterID, 10))
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	var out []store.Event
	return out, c.call(ctx, "GET", records("events"), q, nil, &out)
}

// WaitEvents implements Records: the server waits (GET
// /v1/records/events with wait) and answers at the commit.
func (c *Client) WaitEvents(ctx context.Context, after int64, max time.Duration) error {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {"1"}, "wait": {max.String()}}
	var out []store.Event
	return c.call(ctx, "GET", records("events"), q, nil, &out)
}

// AttemptList implements Records.
func (c *Client) AttemptList(ctx context.Context, runID, stepKey string) ([]store.Attempt, error) {
	var out []store.Attempt
	return out, c.call(ctx, "GET", records("runs", runID, "attempts"), url.Values{"step": {stepKey}}, nil, &out)
}

// StepOutputChunks implements Records.
func (c *Client) StepOutputChunks(ctx context.Context, runID string, after int64, limit int) ([]store.OutputChunk, error) {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	var out []store.OutputChunk
	return out, c.call(ctx, "GET", records("runs", runID, "output"), q, nil, &out)
}

// VersionHeads implements Records.
func (c *Client) VersionHeads(ctx context.Context, workflow string) ([]store.Version, error) {
	q := url.Values{}
	if workflow != "" {
		q.Set("workflow", workflow)
	}
	var out []store.Version
	return out, c.call(ctx, "GET", records("versions"), q, nil, &out)
}

// graphCache holds the graphs a Client read: a stored graph never
// changes under its hash.
type graphCache struct {
	mu sync.Mutex
	m  map[string]*graph.Graph
}

// Graph implements Records; each graph is read from the server once.
func (c *Client) Graph(ctx context.Context, workflow, hash string) (*graph.Graph, error) {
	key := workflow + "\x00" + hash
	c.graphs.mu.Lock()
	g := c.graphs.m[key]
	c.graphs.mu.Unlock()
	if g != nil {
		return g, nil
	}
	var raw json.RawMessage
	if err := c.call(ctx, "GET", records("graphs", workflow, hash), nil, nil, &raw); err != nil {
		return nil, err
	}
	g, err := graph.Decode(raw)
	if err != nil {
		return nil, &ServerError{Server: c.Server(), Op: "GET " + records("graphs", workflow, hash), Err: fmt.Errorf("the graph does not decode: %w", err)}
	}
	c.graphs.mu.Lock()
	if c.graphs.m == nil {
		c.graphs.m = map[string]*graph.Graph{}
	}
	c.graphs.m[key] = g
	c.graphs.mu.Unlock()
	return g, nil
}

// DeadLetterList implements Records.
func (c *Client) DeadLetterList(ctx context.Context, all bool) ([]store.DeadLetter, error) {
	var out []store.DeadLetter
	return out, c.call(ctx, "GET", records("dead-letters"), url.Values{"all": {strconv.FormatBool(all)}}, nil, &out)
}

// BreakerList implements Records.
func (c *Client) BreakerList(ctx context.Context) ([]store.Breaker, error) {
	var out []store.Breaker
	return out, c.call(ctx, "GET", records("breakers"), nil, nil, &out)
}

// ScheduleList implements Records.
func (c *Client) ScheduleList(ctx context.Context, p store.ScheduleListParams) ([]store.Schedule, error) {
	q := url.Values{"inactive": {strconv.FormatBool(p.Inactive)}}
	if p.Workflow != "" {
		q.Set("workflow", p.Workflow)
	}
	var out []store.Schedule
	return out, c.call(ctx, "GET", records("schedules"), q, nil, &out)
}
