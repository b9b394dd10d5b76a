package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

// describeEvent renders an event as words for people: "step charge started
// (attempt 1)", "run completed", "step charge failed: exit status 1". It
// knows the common fields of event data (alert and event, attempt, error,
// message, reason, wake_at, an alert's retry_at and final) and shows
// nothing else, so new event kinds
// still read well. The line is escaped for the terminal (termtext.Line):
// an error message quotes what a program wrote.
func describeEvent(ev store.Event) string {
	return termtext.Line(eventWords(ev))
}

// eventWords is describeEvent before escaping.
func eventWords(ev store.Event) string {
	d := decodeEventData(ev)
	return eventWordsOf(ev, &d)
}

// eventWordsOf is eventWords of ev whose data d holds.
func eventWordsOf(ev store.Event, d *eventData) string {
	var b strings.Builder
	b.Grow(64)
	switch rest, isRun := strings.CutPrefix(ev.Kind, "run_"); {
	case isRun || ev.StepKey == "":
		b.WriteString("run ")
		b.WriteString(words(rest))
		if ev.StepKey != "" {
			b.WriteString(" at step ")
			b.WriteString(ev.StepKey)
		}
	default:
		b.WriteString("step ")
		b.WriteString(ev.StepKey)
		b.WriteString(" ")
		b.WriteString(words(strings.TrimPrefix(ev.Kind, "step_")))
	}

	n := 0 // the fields shown in parentheses so far
	extra := func(parts ...string) {
		if n == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		for _, p := range parts {
			b.WriteString(p)
		}
		n++
	}
	if d.Alert != "" {
		// An alert's delivery: which alert, for which event (two alerts
		// may fire on one event).
		if d.Event != "" {
			extra("alert ", d.Alert, " on ", d.Event)
		} else {
			extra("alert ", d.Alert)
		}
	}
	if d.Attempt > 0 {
		extra("attempt ", strconv.Itoa(int(d.Attempt)))
	}
	if d.WakeAt != "" {
		if t, err := time.Parse(time.RFC3339Nano, d.WakeAt); err == nil {
			extra("until ", t.Local().Format("15:04:05"))
		}
	}
	// A failed alert delivery: when it is tried again, or that it was the
	// last try.
	if d.RetryAt != "" {
		if t, err := time.Parse(time.RFC3339Nano, d.RetryAt); err == nil {
			extra("next try at ", t.Local().Format("15:04:05"))
		}
	}
	if d.Final {
		extra("the last try")
	}
	if d.Reason != "" {
		extra(d.Reason)
	}
	if n > 0 {
		b.WriteString(")")
	}
	if msg := d.message(); msg != "" {
		b.WriteString(": ")
		b.WriteString(oneLine(msg))
	}
	return b.String()
}

// eventData holds the fields of an event's data that describeEvent shows,
// and the attempts a step's end counts (for the worker's log).
type eventData struct {
	Alert    string  `json:"alert"`
	Event    string  `json:"event"`
	Attempt  float64 `json:"attempt"`
	Attempts float64 `json:"attempts"`
	WakeAt   string  `json:"wake_at"`
	RetryAt  string  `json:"retry_at"`
	Final    bool    `json:"final"`
	Reason   string  `json:"reason"`
	Error    *struct {
		Message *string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

// decodeEventData reads the fields eventData holds from ev's data; a
// field of another type, or data that is not an object, is left out.
func decodeEventData(ev store.Event) eventData {
	var d eventData
	if len(ev.Data) > 2 { // "{}" and "null" hold no known field
		_ = json.Unmarshal(ev.Data, &d)
	}
	return d
}

// attempt is the attempt an event is about: its "attempt", or the
// "attempts" a step's end counts (0: none).
func (d *eventData) attempt() int { return max(int(d.Attempt), int(d.Attempts)) }

// message is the error's message, or else the message.
func (d *eventData) message() string {
	if d.Error != nil && d.Error.Message != nil {
		return *d.Error.Message
	}
	return d.Message
}

func words(kind string) string { return strings.ReplaceAll(kind, "_", " ") }

// oneLine keeps the first line of a message, marking that more was cut.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// progress prints one plain line per event, for apply and resume when the
// output is not a terminal: "[12:00:01] step charge started (attempt 1)".
// The time is the event's, recorded from the engine clock. It is called from
// the engine's goroutines, so it serializes its writes.
type progress struct {
	mu sync.Mutex
	w  io.Writer
	// withRun names the run on every line, for a worker running many.
	withRun bool
	// quiet prints nothing (--quiet, --json).
	quiet bool
	// foreach counts the items of each foreach step (by run and step),
	// whose starts and ends are folded into a line a second at most.
	foreach map[string]*itemCount
	buf     []byte // the line being written, kept for the next
	// top is the run driven (follow); a line of another run, a child,
	// names it, with its workflow when a child_started event named it
	// (children), so that a child's "run failed" does not read as the
	// end of the run driven.
	top      string
	children map[string]string // child run id → workflow
}

// newProgress makes the progress lines of the command's run, which drive
// tells the run it drives.
func (e *env) newProgress() *progress {
	p := &progress{w: e.stderr, quiet: e.display.quiet}
	e.cmdEngine.prog = p
	return p
}

// follow sets the run whose lines are printed without its id: the run
// driven, whose children's lines are marked as theirs.
func (p *progress) follow(runID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.top = runID
}

// itemCount is what the progress lines say of a foreach step's items.
type itemCount struct {
	total, done, failed int
	shown               time.Time // when its last progress line was printed
}

// itemEvery is how often, at most, a foreach's progress line is printed.
const itemEvery = time.Second

func (p *progress) event(ev store.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet {
		return
	}
	if ev.Kind == "child_started" {
		var d struct {
			Child    string `json:"child_run_id"`
			Workflow string `json:"workflow"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Child != "" {
			if p.children == nil {
				p.children = map[string]string{}
			}
			p.children[d.Child] = d.Workflow
		}
	}
	if p.foldItem(ev) {
		return
	}
	p.line(ev, describeEvent(ev))
}

// foldItem folds the events of foreach items into their step's progress
// line (a line a second at most, and one when the step ends); an item
// that fails is still printed. It reports whether ev was folded.
func (p *progress) foldItem(ev store.Event) bool {
	step, index, _, ok := store.ParseStepKey(ev.StepKey)
	if !ok {
		return false
	}
	if index < 0 {
		// The foreach step itself: its start says how many items.
		switch ev.Kind {
		case "step_started":
			if !bytes.Contains(ev.Data, []byte(`"items"`)) {
				return false // not a foreach
			}
			var d struct {
				Items *int `json:"items"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && d.Items != nil {
				if p.foreach == nil {
					p.foreach = map[string]*itemCount{}
				}
				p.foreach[ev.RunID+"\x00"+step] = &itemCount{total: *d.Items}
			}
		case "step_completed", "step_failed", "step_canceled":
			if len(p.foreach) == 0 {
				return false
			}
			key := ev.RunID + "\x00" + step
			if c := p.foreach[key]; c != nil {
				p.itemLine(ev, step, c)
				delete(p.foreach, key)
			}
		}
		return false
	}
	key := ev.RunID + "\x00" + step
	c := p.foreach[key]
	if c == nil {
		return false // a foreach started before this process followed it
	}
	switch ev.Kind {
	case "step_completed", "step_skipped":
		c.done++
	case "step_failed":
		c.done++
		c.failed++
		return false // printed
	default:
		return true
	}
	if ev.At.Sub(c.shown) >= itemEvery {
		p.itemLine(ev, step, c)
	}
	return true
}

// itemLine prints a foreach's progress line.
func (p *progress) itemLine(ev store.Event, step string, c *itemCount) {
	msg := fmt.Sprintf("step %s: %d/%d items done", termtext.Line(step), c.done, c.total)
	if c.failed > 0 {
		msg += fmt.Sprintf(", %d failed", c.failed)
	}
	p.line(ev, msg)
	c.shown = ev.At
}

// line prints one progress line.
func (p *progress) line(ev store.Event, msg string) {
	b := append(p.buf[:0], '[')
	b = ev.At.Local().AppendFormat(b, "15:04:05")
	b = append(b, "] "...)
	switch {
	case p.withRun:
		b = append(append(b, ev.RunID...), ": "...)
	case p.top != "" && ev.RunID != p.top:
		b = append(b, "child "...)
		if wf := p.children[ev.RunID]; wf != "" {
			b = append(append(b, termtext.Line(wf)...), ' ')
		}
		b = append(append(b, ev.RunID...), ": "...)
	}
	b = append(append(b, msg...), '\n')
	_, _ = p.w.Write(b)
	p.buf = b
}

// compactJSON renders a raw JSON value on one line, or "null". Numbers
// are kept as written (json.Number), so an integer past 2^53 keeps every
// digit rather than going through a float64.
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}
