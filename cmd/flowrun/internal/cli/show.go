package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

func showCommand() *command {
	return &command{
		name:  "show",
		args:  "RUN [--items [--from N]] [--json]",
		short: "show a run: its status, steps, attempts, outputs and errors",
		long: `Show prints a run: its workflow and version, key, status, inputs, outputs and
error, and each step with its status, attempts, duration and error (until
iterations under their step). A foreach's items are folded into one row of
totals, with the failed ones listed; --items lists every item, 100 at a
time (--from N for the next). --json prints one object with
the fields run_id, workflow, version, key, status, inputs, outputs, error and
steps, as apply --json does.
RUN is a run reference: an id or a unique prefix of one, @last,
WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1).

Control characters in what programs and callers wrote (an escape sequence
in a step's stderr, a carriage return in a key) are printed escaped, as
\x1b and \r, so they cannot rewrite the terminal; --json prints the exact
text.`,
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print the run as one JSON object")
			fs.BoolVar(&e.display.items.all, "items", false, "list a foreach's items one per row (100 at a time) instead of their totals")
			fs.IntVar(&e.display.items.from, "from", 0, "with --items: the index of the first item listed")
			return func(ctx context.Context, args []string) error {
				if err := oneRunArg("show", args, 1, "one RUN"); err != nil {
					return err
				}
				if e.display.items.from < 0 || e.display.items.from > 0 && !e.display.items.all {
					return usageErrorf("--from must be 0 or more and goes with --items, got %d", e.display.items.from).hint("Run: flowrun show RUN --items --from 100")
				}
				d, view, err := e.viewRun(ctx, args[0])
				if err != nil {
					return err
				}
				if *asJSON {
					err = e.writeJSON(view)
				} else {
					err = writeHumanView(e.stdout, view, e.display.items, e.clock.Now())
				}
				if err != nil {
					return err
				}
				// Where a version decision can be taken, say how (on
				// stderr: stdout stays the view).
				if o, err := d.Offer(ctx, view.RunID); err == nil && o.Offer {
					fmt.Fprintf(e.stderr, "flowrun show: run %s is bound to version %s and version %s of %q, a newer MAJOR, is stored: decide with flowrun resume %s%s (it asks on a terminal) or flowrun resume %s --choose old|new|migrate%s\n",
						view.RunID, view.Version, o.Newest, view.Workflow, view.RunID, e.serverFlag(), view.RunID, e.serverFlag())
				}
				return nil
			}
		},
	}
}

// printView prints a run on stdout: the JSON object of show --json, or the
// human view.
func (e *env) printView(ctx context.Context, eng *interp.Engine, runID string, asJSON bool) error {
	var view *interp.RunView
	var err error
	if asJSON || e.display.items.all {
		view, err = eng.Show(ctx, runID)
	} else {
		// The folded table reads the items' totals, not every item row.
		view, err = eng.ShowFolded(ctx, runID, maxFoldedFailures)
	}
	if err != nil {
		return storeError("reading run "+runID, err)
	}
	if asJSON {
		return e.writeJSON(view)
	}
	return writeHumanView(e.stdout, view, e.display.items, e.clock.Now())
}

// waitWords says why an unfinished run waits: its wait reason, or, for a
// run parked on a signal that has arrived (the run is due: a worker or
// resume takes it up next), that the signal was received.
func waitWords(v *interp.RunView, now time.Time) string {
	name, ok := strings.CutPrefix(v.WaitReason, "signal:")
	if ok && v.Status == store.RunWaiting && v.AvailableAt != nil && !v.AvailableAt.After(now) {
		if signalTimedOut(v, name, now) {
			return "signal " + name + " timed out, due"
		}
		return "signal " + name + " received, due"
	}
	return v.WaitReason
}

// signalTimedOut reports whether a wait step of v on signal name passed
// its timeout (its wake time) by now: a due run parked on a signal is due
// for that, not for a signal, when no signal came in time.
func signalTimedOut(v *interp.RunView, name string, now time.Time) bool {
	for _, st := range v.Steps {
		if st.Status == store.StepWaiting && st.Detail == "signal "+name && st.WakeAt != nil && !st.WakeAt.After(now) {
			return true
		}
	}
	return false
}

// writeHumanView prints a run for people: its header, then one row per step
// in graph order, with foreach items indented under their step.
func writeHumanView(w io.Writer, v *interp.RunView, items itemsView, now time.Time) error {
	// Every value is escaped for the terminal (termtext): keys, inputs,
	// outputs and errors hold text that programs and callers wrote.
	field := func(name, value string) { fmt.Fprintf(w, "%-10s%s\n", name, termtext.Line(value)) }
	field("run", v.RunID)
	field("workflow", v.Workflow+" "+v.Version+revisionNote(v.Revision, v.Current))
	field("key", v.Key)
	status := string(v.Status)
	if v.WaitReason != "" && !v.Status.Terminal() {
		status += " (" + waitWords(v, now) + ")"
	}
	field("status", status)
	if v.ParentRunID != "" {
		field("parent", fmt.Sprintf("%s (step %s)", v.ParentRunID, v.ParentStep))
	}
	if f := v.Schedule; f != nil {
		how := "slot " + jsonTime(f.Slot)
		if f.Reason == "manual" {
			how = "triggered by hand at " + jsonTime(f.Slot)
		}
		field("schedule", f.Schedule+", "+how)
	}
	if v.CreatedAt != nil {
		when := "created " + formatTime(*v.CreatedAt)
		if v.FinishedAt != nil {
			when += ", finished " + formatTime(*v.FinishedAt)
			if v.StartedAt != nil {
				when += " (" + formatDuration(v.FinishedAt.Sub(*v.StartedAt)) + ")"
			}
		}
		field("time", when)
	}
	field("inputs", compactJSON(v.Inputs))
	if len(v.Outputs) > 0 && string(v.Outputs) != "null" {
		field("outputs", compactJSON(v.Outputs))
	}
	if msg := errorText(v.Error); msg != "" {
		field("error", msg)
	}

	order := v.Order
	if len(order) == 0 {
		order = sortedKeys(v.Steps)
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "STEP\tSTATUS\tATTEMPTS\tDURATION\tDETAIL")
	for _, name := range order {
		s := v.Steps[name]
		if s == nil {
			continue
		}
		detail := errorText(s.Error)
		if strings.HasPrefix(s.Detail, "caught by ") {
			detail += " (" + s.Detail + ")"
		}
		if strings.HasPrefix(s.Detail, "breaker ") && !s.Status.Terminal() || s.Status == store.StepWaiting && s.Detail != "" {
			// Parked (on a breaker, a retry's backoff): say on what and
			// until when, then the last error.
			detail = ""
		}
		if detail == "" && !s.Status.Terminal() || detail == "" && (s.Status == "skipped" || s.Status == "canceled") {
			detail = s.Detail
			if s.WakeAt != nil && !s.Status.Terminal() {
				detail += " until " + formatTime(*s.WakeAt)
			}
			if e := errorText(s.Error); e != "" {
				detail += "; last error: " + e
			}
		}
		if s.Iterations > 0 {
			// The count, then what the step says (its error, what it
			// waits for), after a semicolon.
			n := plural(s.Iterations, "iteration", "iterations")
			if detail = strings.TrimSpace(detail); detail != "" {
				n += "; " + detail
			}
			detail = n
		}
		row(tw, name, string(s.Status), fmt.Sprint(s.Attempts), spanText(s.StartedAt, s.FinishedAt), strings.TrimSpace(detail))
		items.rows(tw, v.RunID, name, s)
	}
	return tw.Flush()
}

// row writes one table row, each cell escaped for the terminal
// (termtext.Line): a tab or newline in a cell would break the table, and
// any other control character could rewrite what the terminal shows.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		cells[i] = termtext.Line(c)
	}
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// table lays out tab-separated rows in aligned columns, like tabwriter,
// without padding at the ends of lines.
type table struct {
	out io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newTable(out io.Writer) *table {
	t := &table{out: out}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 4, 2, ' ', 0)
	return t
}

func (t *table) Write(p []byte) (int, error) { return t.tw.Write(p) }

// Flush writes the table out.
func (t *table) Flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		trimmed := strings.TrimRight(line, " \n")
		if trimmed == "" && line == "" {
			continue
		}
		if _, err := io.WriteString(t.out, trimmed+"\n"); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}

func spanText(start, end *time.Time) string {
	if start == nil || end == nil {
		return "-"
	}
	return formatDuration(end.Sub(*start))
}

// errorText renders a stored error {"kind","message","step"} on one line:
// "step charge: exec: exit status 1".
func errorText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var e struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Step    string `json:"step"`
		// RetryWhen is why retry.when failed to evaluate on the error.
		RetryWhen string `json:"retry_when_error"`
		Caught    bool   `json:"caught"`
		// Compensations are the compensations the run ran (a saga).
		Compensations []struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		} `json:"compensations"`
		Status *int   `json:"status"`
		Title  string `json:"title"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return compactJSON(raw)
	}
	var parts []string
	if e.Step != "" {
		parts = append(parts, "step "+e.Step)
	}
	if e.Kind != "" {
		parts = append(parts, e.Kind)
	}
	if e.Title != "" {
		parts = append(parts, oneLine(e.Title))
	}
	parts = append(parts, oneLine(e.Message))
	text := strings.Join(parts, ": ")
	if e.Caught {
		text = "caught: " + text
	}
	if len(e.Compensations) > 0 {
		var cs []string
		for _, c := range e.Compensations {
			cs = append(cs, c.Step+" "+c.Status)
		}
		text += " (compensations: " + strings.Join(cs, ", ") + ")"
	}
	if e.RetryWhen != "" {
		text += " (not retried: retry.when failed: " + oneLine(e.RetryWhen) + ")"
	}
	return text
}

// revisionNote is what show adds to the version of a run of a development
// version that was replaced (spec/versioning.md §8): the revision the run
// is bound to, and whether it is the current one.
func revisionNote(rev, current int) string {
	switch {
	case rev == 0:
		return ""
	case rev == current:
		return fmt.Sprintf(" (revision %d)", rev)
	}
	return fmt.Sprintf(" (revision %d; the version is at revision %d now)", rev, current)
}

// itemsView is how the table shows a foreach's items: folded into one row
// of totals by default (with the failed items listed, at most
// maxFoldedFailures), or, with show --items, every item, itemPage at a
// time from item from.
type itemsView struct {
	all  bool
	from int
}

// itemPage is how many items show --items prints at once.
const itemPage = 100

// maxFoldedFailures is how many failed items the folded view lists.
const maxFoldedFailures = 10

// rows writes the item rows of step under its row: a page of them with
// --items, else their totals by status and the first failed ones.
func (iv itemsView) rows(tw *table, runID, step string, s *interp.StepView) {
	if iv.all {
		its := s.Items
		if len(its) == 0 {
			return
		}
		end := min(iv.from+itemPage, len(its))
		for _, it := range its[min(iv.from, len(its)):end] {
			row(tw, fmt.Sprintf("  [%d]", it.Index), string(it.Status), fmt.Sprint(it.Attempts), "", errorText(it.Error))
		}
		if end < len(its) {
			row(tw, "  …", "", "", "", fmt.Sprintf("%d more items: flowrun show %s --items --from %d", len(its)-end, runID, end))
		}
		return
	}
	fold := s.Folded(maxFoldedFailures)
	if fold == nil || fold.Total() == 0 {
		return
	}
	order := make([]string, 0, len(fold.Counts))
	for st, n := range fold.Counts {
		if n > 0 {
			order = append(order, string(st))
		}
	}
	sort.Strings(order)
	parts := make([]string, len(order))
	for i, st := range order {
		parts[i] = fmt.Sprintf("%d %s", fold.Counts[store.StepStatus(st)], st)
	}
	row(tw, "  items", "", "", "", fmt.Sprintf("%d: %s (all of them: flowrun show %s --items)", fold.Total(), strings.Join(parts, ", "), runID))
	for _, it := range fold.Failed {
		row(tw, fmt.Sprintf("  [%d]", it.Index), string(it.Status), fmt.Sprint(it.Attempts), "", errorText(it.Error))
	}
	if more := fold.Counts[store.StepFailed] - len(fold.Failed); more > 0 {
		row(tw, "  …", "", "", "", fmt.Sprintf("%d more failed items", more))
	}
}
