package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/store"
)

// LogReader reads a run's log: its events and the lines its exec steps
// wrote, merged in time (flowrun logs).
type LogReader interface {
	// Log calls each with the log of the run ref names, from its start;
	// with q.Follow it goes on until the run ends (or ctx ends). A
	// q.Step the run has nothing for is a *Refusal.
	Log(ctx context.Context, ref string, q LogQuery, each func(LogEntry) error) error
}

// LogQuery filters and follows a log.
type LogQuery struct {
	// Step keeps the events and output of a step (its items and
	// iterations too), or of one step key (each[2], poll#3).
	Step string
	// OutputOnly leaves the events out.
	OutputOnly bool
	// Follow goes on until the run ends.
	Follow bool
}

// LogEntry is one line of a log: an event or an output line. Its JSON
// form is the line of logs --json (semantics.md §16).
type LogEntry struct {
	Event *LogEvent
	Line  *LogLine
}

// LogEvent is an event of a log.
type LogEvent struct {
	Type  string          `json:"type"` // "event"
	ID    int64           `json:"id"`
	RunID string          `json:"run_id"`
	At    string          `json:"at"`
	Kind  string          `json:"kind"`
	Step  *string         `json:"step"`
	Data  json.RawMessage `json:"data"`
}

// LogLine is an output line of a log.
type LogLine struct {
	Type    string `json:"type"` // "output"
	Seq     int64  `json:"seq"`
	RunID   string `json:"run_id"`
	At      string `json:"at"`
	Step    string `json:"step"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"`
	Text    string `json:"text"`
	Partial bool   `json:"partial"`
}

// MarshalJSON writes the entry's line of logs --json.
func (e LogEntry) MarshalJSON() ([]byte, error) {
	if e.Line != nil {
		return json.Marshal(e.Line)
	}
	return json.Marshal(e.Event)
}

// UnmarshalJSON reads a line of logs --json.
func (e *LogEntry) UnmarshalJSON(b []byte) error {
	var t struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	switch t.Type {
	case "event":
		e.Event, e.Line = &LogEvent{}, nil
		return json.Unmarshal(b, e.Event)
	case "output":
		e.Line, e.Event = &LogLine{}, nil
		return json.Unmarshal(b, e.Line)
	}
	return fmt.Errorf("a log line of type %q", t.Type)
}

// StoreEvent is the event as the store holds it, for words (At is
// parsed from the JSON form).
func (e *LogEvent) StoreEvent() store.Event {
	at, _ := time.Parse(time.RFC3339Nano, e.At)
	ev := store.Event{ID: e.ID, RunID: e.RunID, At: at, Kind: e.Kind, Data: e.Data}
	if e.Step != nil {
		ev.StepKey = *e.Step
	}
	return ev
}

// Time is when the line was written.
func (l *LogLine) Time() time.Time {
	at, _ := time.Parse(time.RFC3339Nano, l.At)
	return at
}

func eventEntry(ev store.Event) LogEntry {
	j := &LogEvent{Type: "event", ID: ev.ID, RunID: ev.RunID, At: interp.JSONTime(ev.At), Kind: ev.Kind, Data: ev.Data}
	if ev.StepKey != "" {
		k := ev.StepKey
		j.Step = &k
	}
	if len(j.Data) == 0 || !json.Valid(j.Data) {
		j.Data = json.RawMessage("null")
	}
	return LogEntry{Event: j}
}

func lineEntry(ln interp.OutputLine) LogEntry {
	return LogEntry{Line: &LogLine{Type: "output", Seq: ln.Seq, RunID: ln.RunID, At: interp.JSONTime(ln.At), Step: ln.StepKey,
		Attempt: ln.Attempt, Stream: ln.Stream, Text: ln.Text, Partial: ln.Partial}}
}

// How Local follows a log: at each commit the store tells of, at most
// every followGap, and every followEvery anyway.
const (
	followEvery = 200 * time.Millisecond
	followGap   = 20 * time.Millisecond
)

// Log implements LogReader.
func (l *Local) Log(ctx context.Context, ref string, q LogQuery, each func(LogEntry) error) error {
	run, err := l.eng.ResolveRun(ctx, ref)
	if err != nil {
		return err
	}
	if q.Step != "" {
		if err := checkStepFilter(ctx, l.eng, run, q.Step); err != nil {
			return err
		}
	}
	var keep func(string) bool
	if q.Step != "" {
		keep = func(key string) bool { return OfStep(key, q.Step) }
	}
	lw := &logMerge{st: l.st, runID: run.ID, step: q.Step, outputOnly: q.OutputOnly, each: each,
		out: interp.NewOutputFollower(l.st, run.ID, keep)}
	if !q.Follow {
		if err := lw.round(ctx); err != nil {
			return err
		}
		return lw.end()
	}
	var out Outage // a store that fails is read again (StoreOutage)
	for {
		// Read the status before the events and output, so the events of
		// the final transition are given before stopping.
		cur, err := l.st.RunGet(ctx, run.ID)
		if err != nil {
			err = fmt.Errorf("reading run %s: %w", run.ID, err)
		} else {
			err = lw.round(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// The run goes on once the store answers.
			if again, _ := out.Failed(err, l.clk.Now()); !again {
				return err
			}
			out.Pause(ctx, l.clk)
			continue
		}
		out.Answered(l.clk.Now())
		if cur.Status.Terminal() {
			return lw.end()
		}
		if interp.WaitForChange(ctx, l.clk, l.st, followGap, followEvery) != nil {
			return lw.end()
		}
	}
}

// logMerge gives a run's events and the lines its exec steps wrote
// (interp.OutputFollower) merged in time. Each round reads the events
// first and the output second: the last output of an attempt is committed
// with the event that ends it, so it is never read after that event.
type logMerge struct {
	st         store.Store
	runID      string
	step       string // "" for all
	outputOnly bool
	after      int64 // the last event id read
	out        *interp.OutputFollower
	each       func(LogEntry) error
}

type mergeEntry struct {
	ev   *store.Event
	line *interp.OutputLine
}

func (e mergeEntry) at() time.Time {
	if e.line != nil {
		return e.line.At
	}
	return e.ev.At
}

// round gives what was stored since the last round: events and output
// lines in time order, an output line before an event of the same time.
// An event of a step key first gives out that key's unended output lines
// stored before it (the attempt that wrote them has ended or moved on).
func (l *logMerge) round(ctx context.Context) error {
	const page = 500
	var evs []store.Event
	for {
		got, err := l.st.EventList(ctx, store.EventListParams{RunID: l.runID, AfterID: l.after, Limit: page})
		if err != nil {
			return fmt.Errorf("reading the events of run %s: %w", l.runID, err)
		}
		for _, ev := range got {
			l.after = ev.ID
			if l.step == "" || OfStep(ev.StepKey, l.step) {
				evs = append(evs, ev)
			}
		}
		if len(got) < page {
			break
		}
	}
	lines, err := l.out.Next(ctx)
	if err != nil {
		return fmt.Errorf("reading the output of run %s: %w", l.runID, err)
	}
	entries := make([]mergeEntry, 0, len(evs)+len(lines))
	for i := range lines {
		entries = append(entries, mergeEntry{line: &lines[i]})
	}
	for i := range evs {
		entries = append(entries, mergeEntry{ev: &evs[i]})
	}
	// Lines are in store order and events in id order; a stable sort by
	// time keeps each in its order and puts lines first at equal times.
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].at().Before(entries[j].at()) })
	for _, en := range entries {
		if en.line != nil {
			if err := l.each(lineEntry(*en.line)); err != nil {
				return err
			}
			continue
		}
		if en.ev.StepKey != "" {
			for _, ln := range l.out.Flush(en.ev.StepKey, en.ev.At) {
				if err := l.each(lineEntry(ln)); err != nil {
					return err
				}
			}
		}
		if l.outputOnly {
			continue
		}
		if err := l.each(eventEntry(*en.ev)); err != nil {
			return err
		}
	}
	return nil
}

// end gives the output lines no newline ended: the run ended, or the
// reader stops.
func (l *logMerge) end() error {
	for _, ln := range l.out.Flush("", time.Time{}) {
		if err := l.each(lineEntry(ln)); err != nil {
			return err
		}
	}
	return nil
}

// OfStep reports whether a step key belongs to the step: the step itself,
// one of its foreach items (step[2]) or until iterations (step#3).
func OfStep(key, step string) bool {
	return key == step || strings.HasPrefix(key, step+"[") || strings.HasPrefix(key, step+"#")
}

// checkStepFilter refuses a step filter that names nothing the run has or
// can have (a *Refusal naming the run's steps). It accepts a step of the
// run's graph or of its step rows (a step of the version it ran before a
// migration too), a step key (each[3], poll#2) the run has, a key of a
// step of the run that is still unfinished (its items and iterations may
// come), and anything an event of the run was recorded for.
func checkStepFilter(ctx context.Context, eng *interp.Engine, run store.Run, filter string) error {
	st := eng.Store()
	var names []string // in graph order, then steps of other versions
	known := map[string]bool{}
	addName := func(n string) {
		if !known[n] {
			known[n] = true
			names = append(names, n)
		}
	}
	g, err := eng.RunGraph(ctx, run)
	var ge *interp.GraphError
	var stepOf map[string]*graph.Step // nil when the graph cannot be read
	switch {
	case err == nil:
		stepOf = map[string]*graph.Step{}
		for _, s := range g.Steps {
			stepOf[s.Name] = s
			addName(s.Name)
		}
	case !errors.Is(err, store.ErrNotFound) && !errors.As(err, &ge):
		return fmt.Errorf("reading the graph of run %s: %w", run.ID, err)
	}
	heads, err := st.StepHeads(ctx, run.ID)
	if err != nil {
		return fmt.Errorf("reading the steps of run %s: %w", run.ID, err)
	}
	sort.Slice(heads, func(i, j int) bool { return heads[i].Key < heads[j].Key })
	for _, h := range heads {
		addName(h.Step)
	}
	if known[filter] {
		return nil
	}
	for _, h := range heads {
		if OfStep(h.Key, filter) {
			return nil
		}
	}
	base, index, iteration, isKey := store.ParseStepKey(filter)
	if isKey && known[base] && !run.Status.Terminal() {
		// An item or iteration that may still come: its step has not
		// finished, and is a foreach (for [i]) or until (for #n) step.
		open := true
		for _, h := range heads {
			if h.Key == base && h.Status.Terminal() {
				open = false
			}
		}
		if s := stepOf[base]; s != nil && (index >= 0 && s.Foreach == nil || iteration >= 0 && s.Until == nil) {
			open = false
		}
		if open {
			return nil
		}
	}
	// Anything the run's history holds a line for.
	var after int64
	for {
		evs, err := st.EventList(ctx, store.EventListParams{RunID: run.ID, AfterID: after, Limit: 500})
		if err != nil {
			return fmt.Errorf("reading the events of run %s: %w", run.ID, err)
		}
		for _, ev := range evs {
			after = ev.ID
			if ev.StepKey != "" && OfStep(ev.StepKey, filter) {
				return nil
			}
		}
		if len(evs) < 500 {
			break
		}
	}

	msg := fmt.Sprintf("run %s has no step %q", run.ID, filter)
	if isKey && known[base] {
		msg = fmt.Sprintf("run %s has no step key %q: step %q has no such foreach item or until iteration", run.ID, filter, base)
	}
	hint := "Pass --step with one of the run's steps"
	if len(names) == 0 {
		hint = "The run has no steps yet; see it with: flowrun show " + run.ID
	} else {
		if near := naming.NearestName(filter, names); near != "" && !(isKey && near == base) {
			hint = fmt.Sprintf("Did you mean %q? ", near) + hint
		}
		const most = 20
		shown := names
		more := ""
		if len(shown) > most {
			shown, more = shown[:most], fmt.Sprintf(" and %d more", len(names)-most)
		}
		hint += ": " + strings.Join(shown, ", ") + more + "; or with a key like NAME[2] (a foreach item) or NAME#3 (an until iteration); see them with: flowrun show " + run.ID
	}
	return &Refusal{Status: http.StatusNotFound, Field: "step", Message: msg, Hint: hint}
}

// logEnd is the last line of GET /v1/runs/{id}/log: the log ended as
// asked (type "end"), or the server failed to read on (type "error",
// with its message); a stream cut before it ended early.
type logEnd struct {
	Type    string `json:"type"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// LogEndLine and LogErrorLine are the last lines of a log the server
// streams.
func LogEndLine() any { return logEnd{Type: "end"} }

// LogErrorLine is the last line of a log the server could not stream
// on: status is the HTTP status it would have answered (401 for a token
// revoked meanwhile, 503 for a server stopping).
func LogErrorLine(status int, msg string) any {
	return logEnd{Type: "error", Status: status, Message: msg}
}

// maxLogLine bounds one line of a streamed log.
const maxLogLine = 16 << 20

// Log implements LogReader: GET /v1/runs/{id}/log, newline-delimited
// JSON, followed as long as the server streams it.
func (c *Client) Log(ctx context.Context, ref string, q LogQuery, each func(LogEntry) error) error {
	id := ref
	if strings.Contains(ref, "/") {
		v, err := c.Run(ctx, ref)
		if err != nil {
			return err
		}
		id = v.RunID
	}
	v := url.Values{}
	if q.Step != "" {
		v.Set("step", q.Step)
	}
	if q.OutputOnly {
		v.Set("output", "true")
	}
	if q.Follow {
		v.Set("follow", "true")
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	path := runPath(id, "/log")
	op := http.MethodGet + " " + path
	req, err := c.request(ctx, http.MethodGet, path, v, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.transportError(ctx, op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		b, err := c.readAnswer(resp)
		if err != nil {
			return c.transportError(ctx, op, err)
		}
		return c.problem(op, resp, b)
	}
	if err := c.checkJSON(resp, "application/x-ndjson"); err != nil {
		return &ServerError{Server: c.Server(), Op: op, Err: err}
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := readLine(br, maxLogLine)
		if err != nil {
			if ctx.Err() != nil && q.Follow && errors.Is(ctx.Err(), context.Canceled) {
				return nil // the caller stopped following
			}
			return c.transportError(ctx, op, fmt.Errorf("the log ended early: %w", err))
		}
		var end logEnd
		if json.Unmarshal(line, &end) == nil {
			switch end.Type {
			case "end":
				return nil
			case "error":
				if end.Status > 0 && end.Status < 500 {
					return &Problem{Server: c.Server(), ProblemJSON: ProblemJSON{Status: end.Status, Detail: end.Message}}
				}
				return &ServerError{Server: c.Server(), Op: op, Err: errors.New(end.Message)}
			}
		}
		var e LogEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return &ServerError{Server: c.Server(), Op: op, Err: fmt.Errorf("a log line is not the API's: %w", err)}
		}
		if err := each(e); err != nil {
			return err
		}
	}
}

// readLine reads one line (without its newline) of at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		part, err := br.ReadSlice('\n')
		out = append(out, part...)
		if len(out) > limit {
			return nil, fmt.Errorf("a line over %d bytes", limit)
		}
		switch {
		case err == nil:
			return out[:len(out)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}
