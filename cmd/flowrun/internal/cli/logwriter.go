package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

// logWriter prints a run's events and the lines its exec steps wrote
// (interp.OutputFollower) merged in time, as text for people or as JSON
// lines. Each round reads the events first and the output second: the
// last output of an attempt is committed with the event that ends it, so
// it is never read after that event.
type logWriter struct {
	w          io.Writer
	st         store.Store
	runID      string
	step       string // --step: "" for all
	outputOnly bool
	asJSON     bool
	after      int64 // the last event id read
	out        *interp.OutputFollower
}

func newLogWriter(w io.Writer, st store.Store, runID, step string, outputOnly, asJSON bool) *logWriter {
	var keep func(string) bool
	if step != "" {
		keep = func(key string) bool { return ofStep(key, step) }
	}
	return &logWriter{w: w, st: st, runID: runID, step: step, outputOnly: outputOnly, asJSON: asJSON,
		out: interp.NewOutputFollower(st, runID, keep)}
}

// logEntry is an event or an output line, for the merge.
type logEntry struct {
	ev   *store.Event
	line *interp.OutputLine
}

// round prints what was stored since the last round: events and output
// lines in time order, an output line before an event of the same time.
// An event of a step key first gives out that key's unended output lines
// stored before it (the attempt that wrote them has ended or moved on).
func (l *logWriter) round(ctx context.Context) error {
	const page = 500
	var evs []store.Event
	for {
		got, err := l.st.EventList(ctx, store.EventListParams{RunID: l.runID, AfterID: l.after, Limit: page})
		if err != nil {
			return storeError("reading the events of run "+l.runID, err)
		}
		for _, ev := range got {
			l.after = ev.ID
			if l.step == "" || ofStep(ev.StepKey, l.step) {
				evs = append(evs, ev)
			}
		}
		if len(got) < page {
			break
		}
	}
	lines, err := l.out.Next(ctx)
	if err != nil {
		return storeError("reading the output of run "+l.runID, err)
	}
	entries := make([]logEntry, 0, len(evs)+len(lines))
	for i := range lines {
		entries = append(entries, logEntry{line: &lines[i]})
	}
	for i := range evs {
		entries = append(entries, logEntry{ev: &evs[i]})
	}
	// Lines are in store order and events in id order; a stable sort by
	// time keeps each in its order and puts lines first at equal times.
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].at().Before(entries[j].at()) })
	for _, en := range entries {
		if en.line != nil {
			if err := l.printLine(*en.line); err != nil {
				return err
			}
			continue
		}
		if en.ev.StepKey != "" {
			for _, ln := range l.out.Flush(en.ev.StepKey, en.ev.At) {
				if err := l.printLine(ln); err != nil {
					return err
				}
			}
		}
		if err := l.printEvent(*en.ev); err != nil {
			return err
		}
	}
	return nil
}

func (e logEntry) at() time.Time {
	if e.line != nil {
		return e.line.At
	}
	return e.ev.At
}

// end prints the output lines no newline ended: the run ended, or the
// reader stops.
func (l *logWriter) end() error {
	for _, ln := range l.out.Flush("", time.Time{}) {
		if err := l.printLine(ln); err != nil {
			return err
		}
	}
	return nil
}

// logTime is the time of a text line, in the local zone.
func logTime(t time.Time) string { return t.Local().Format("2006-01-02T15:04:05.000Z07:00") }

// jsonLogEvent is an event of logs --json (semantics.md §16).
type jsonLogEvent struct {
	Type  string          `json:"type"` // "event"
	ID    int64           `json:"id"`
	RunID string          `json:"run_id"`
	At    string          `json:"at"`
	Kind  string          `json:"kind"`
	Step  *string         `json:"step"`
	Data  json.RawMessage `json:"data"`
}

// jsonLogLine is an output line of logs --json (semantics.md §16).
type jsonLogLine struct {
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

func (l *logWriter) printEvent(ev store.Event) error {
	if l.outputOnly {
		return nil
	}
	if !l.asJSON {
		_, err := fmt.Fprintf(l.w, "%s  %s\n", logTime(ev.At), describeEvent(ev))
		return err
	}
	j := jsonLogEvent{Type: "event", ID: ev.ID, RunID: ev.RunID, At: jsonTime(ev.At), Kind: ev.Kind, Data: ev.Data}
	if ev.StepKey != "" {
		j.Step = &ev.StepKey
	}
	if len(j.Data) == 0 || !json.Valid(j.Data) {
		j.Data = json.RawMessage("null")
	}
	return l.writeJSONLine(j)
}

func (l *logWriter) printLine(ln interp.OutputLine) error {
	if !l.asJSON {
		who := ln.StepKey
		if ln.Attempt > 1 {
			who += " (attempt " + strconv.Itoa(ln.Attempt) + ")"
		}
		_, err := fmt.Fprintf(l.w, "%s  %s %s | %s\n", logTime(ln.At), termtext.Line(who), ln.Stream, termtext.Line(ln.Text))
		return err
	}
	return l.writeJSONLine(jsonLogLine{Type: "output", Seq: ln.Seq, RunID: ln.RunID, At: jsonTime(ln.At), Step: ln.StepKey,
		Attempt: ln.Attempt, Stream: ln.Stream, Text: ln.Text, Partial: ln.Partial})
}

// writeJSONLine prints v as one line of JSON, exact, with the controls
// encoding/json leaves raw escaped (termtext.JSON).
func (l *logWriter) writeJSONLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	b = append(termtext.JSON(b), '\n')
	_, err = l.w.Write(b)
	return err
}
