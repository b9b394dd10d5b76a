package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

// describeEvent renders an event as words for people: "step charge started
// (attempt 1)", "run completed", "step charge failed: exit status 1". It
// knows the common fields of event data (alert and event, attempt, error,
// message, reason, wake_at) and shows nothing else, so new event kinds
// still read well. The line is escaped for the terminal (termtext.Line):
// an error message quotes what a program wrote.
func describeEvent(ev store.Event) string {
	return termtext.Line(eventWords(ev))
}

// eventWords is describeEvent before escaping.
func eventWords(ev store.Event) string {
	var b strings.Builder
	switch rest, isRun := strings.CutPrefix(ev.Kind, "run_"); {
	case isRun || ev.StepKey == "":
		b.WriteString("run " + words(rest))
		if ev.StepKey != "" {
			b.WriteString(" at step " + ev.StepKey)
		}
	default:
		b.WriteString("step " + ev.StepKey + " " + words(strings.TrimPrefix(ev.Kind, "step_")))
	}

	var data map[string]any
	if len(ev.Data) > 0 {
		_ = json.Unmarshal(ev.Data, &data) // data that is not an object has no known fields
	}
	var extras []string
	if name, ok := data["alert"].(string); ok && name != "" {
		// An alert's delivery: which alert, for which event (two alerts
		// may fire on one event).
		what := "alert " + name
		if on, ok := data["event"].(string); ok && on != "" {
			what += " on " + on
		}
		extras = append(extras, what)
	}
	if a, ok := data["attempt"].(float64); ok && a > 0 {
		extras = append(extras, fmt.Sprintf("attempt %d", int(a)))
	}
	if w, ok := data["wake_at"].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, w); err == nil {
			extras = append(extras, "until "+t.Local().Format("15:04:05"))
		}
	}
	if r, ok := data["reason"].(string); ok && r != "" {
		extras = append(extras, r)
	}
	if len(extras) > 0 {
		b.WriteString(" (" + strings.Join(extras, ", ") + ")")
	}
	if msg := eventMessage(data); msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

func words(kind string) string { return strings.ReplaceAll(kind, "_", " ") }

func eventMessage(data map[string]any) string {
	if e, ok := data["error"].(map[string]any); ok {
		if m, ok := e["message"].(string); ok {
			return oneLine(m)
		}
	}
	if m, ok := data["message"].(string); ok {
		return oneLine(m)
	}
	return ""
}

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
	key := ev.RunID + "\x00" + step
	if index < 0 {
		// The foreach step itself: its start says how many items.
		if ev.Kind == "step_started" {
			var d struct {
				Items *int `json:"items"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && d.Items != nil {
				if p.foreach == nil {
					p.foreach = map[string]*itemCount{}
				}
				p.foreach[key] = &itemCount{total: *d.Items}
			}
		} else if c := p.foreach[key]; c != nil && (ev.Kind == "step_completed" || ev.Kind == "step_failed" || ev.Kind == "step_canceled") {
			p.itemLine(ev, step, c)
			delete(p.foreach, key)
		}
		return false
	}
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
	if p.withRun {
		fmt.Fprintf(p.w, "[%s] %s: %s\n", ev.At.Local().Format("15:04:05"), ev.RunID, msg)
		return
	}
	fmt.Fprintf(p.w, "[%s] %s\n", ev.At.Local().Format("15:04:05"), msg)
}

// compactJSON renders a raw JSON value on one line, or "null".
func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}
