package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

// runStatuses are the values --status accepts.
var runStatuses = []string{
	string(store.RunPending), string(store.RunRunning), string(store.RunWaiting), string(store.RunBlocked),
	string(store.RunCompleted), string(store.RunFailed), string(store.RunCanceled),
}

func runsCommand() *command {
	return &command{
		name:  "runs",
		args:  "[--status S[,S...]] [--workflow W] [--key K] [--since AGE|TIME] [--children] [--limit N] [--json]",
		short: "list runs, newest first",
		long: `Runs lists runs, newest first, with their workflow, version, key, status and
progress. Child runs (started by a workflow step) are left out unless
--children is given: their parent's row stands for them. --status takes one
status or several, comma-separated (--status failed,canceled); --key keeps
the runs with that run key; --since keeps the runs created since an age ago
(30m, 12h, 7d, 2w) or a time (2026-12-01, 2026-12-01T09:00:00Z).
--json prints an array of run summaries with the fields run_id,
workflow, version, key, status, created_at, finished_at (null until the run
ends), steps_total and steps_done.`,
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			status := &choicesFlag{choices: runStatuses}
			fs.Var(status, "status", "only runs with these statuses, comma-separated: pending, running, waiting, blocked, completed, failed, canceled")
			workflow := fs.String("workflow", "", "only runs of this workflow")
			key := fs.String("key", "", "only runs with this run key")
			since := &sinceFlag{}
			fs.Var(since, "since", "only runs created since: an age (30m, 12h, 7d, 2w) or a time (2026-12-01, 2026-12-01T09:00:00Z)")
			children := fs.Bool("children", false, "list child runs too (started by a workflow step)")
			limit := fs.Int("limit", 50, "at most this many runs; 0 lists all")
			asJSON := fs.Bool("json", false, "print a JSON array of run summaries")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("runs takes no arguments, got %q", args[0]).
						hint("Filter with --status and --workflow, such as: flowrun runs --status failed.")
				}
				if *limit < 0 {
					return usageErrorf("--limit must be 0 or more, got %d", *limit).hint("Pass --limit 0 to list every run.")
				}
				d, err := e.door(ctx)
				switch {
				case errors.Is(err, errNoDatabase):
					return e.noDatabase("")
				case err != nil:
					return err
				}
				q := api.RunsQuery{Workflow: *workflow, Key: *key, Since: since.since(e.clock.Now()),
					Children: *children, Limit: *limit}
				for _, v := range status.values {
					q.Statuses = append(q.Statuses, store.RunStatus(v))
				}
				runs, err := d.Runs(ctx, q)
				if err != nil {
					return storeError("", err) // the store's words start with "listing runs"
				}
				if *asJSON {
					return e.writeJSON(runs)
				}
				if len(runs) == 0 && !*children {
					// Child runs are left out: say so when they are what
					// matches, rather than to start a run.
					q.Children, q.Limit = true, 1
					if some, err := d.Runs(ctx, q); err == nil && len(some) > 0 {
						fmt.Fprintln(e.stderr, "flowrun runs: no runs match but child runs (started by a workflow step), which are left out; list them with --children")
						return nil
					}
				}
				if len(runs) == 0 {
					if *workflow != "" {
						stored, nearest, err := d.NearestWorkflows(ctx, *workflow)
						if err != nil {
							return storeError("", err)
						}
						if !stored {
							msg := fmt.Sprintf("flowrun runs: no runs match: no workflow %q is stored", *workflow)
							if len(nearest) > 0 {
								msg += "; the nearest stored workflows are " + strings.Join(quoteAll(nearest), ", ")
							}
							fmt.Fprintln(e.stderr, msg)
							return nil
						}
					}
					fmt.Fprintln(e.stderr, "flowrun runs: no runs match; start one with: flowrun apply FILE.hcl")
					return nil
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "RUN\tWORKFLOW\tVERSION\tKEY\tSTATUS\tSTEPS\tCREATED")
				for _, r := range runs {
					row(tw, r.RunID, r.Workflow, r.Version, r.Key, r.Status,
						fmt.Sprintf("%d/%d", r.StepsDone, r.StepsTotal), formatStamp(r.CreatedAt))
				}
				return tw.Flush()
			}
		},
	}
}

// writeJSON prints v as indented JSON on stdout. The JSON is exact: its
// strings decode to the stored text. Its C1 and bidirectional controls (and
// DEL), which encoding/json leaves raw, are written as \u escapes
// (termtext.JSON), so printing it on a terminal is safe too.
func (e *env) writeJSON(v any) error {
	var out bytes.Buffer
	if m, ok := v.(json.Marshaler); ok {
		// Indent the value's own JSON: encoding/json would first compact
		// it once more, a pass over all of it (a 10,000-step show is
		// megabytes).
		b, err := m.MarshalJSON()
		if err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
		out.Grow(len(b) + len(b)/2)
		if err := json.Indent(&out, b, "", "  "); err != nil {
			// json.Indent stops at 10,000 levels of nesting, which a
			// value stored before flowrun bounded them at 1,000 may pass:
			// print it as it is, unindented, still exact JSON.
			if graph.JSONDepthOver(b, maxEncodingJSONDepth) < 0 {
				return fmt.Errorf("writing JSON: %w", err)
			}
			out.Reset()
			out.Write(b)
		}
		out.WriteByte('\n')
	} else {
		enc := json.NewEncoder(&out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
	}
	if _, err := e.stdout.Write(termtext.JSON(out.Bytes())); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// formatTime renders a time for tables, in the local zone, or "-".
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// formatDuration renders a duration for people: 850ms, 1.2s, 3m4s.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// maxEncodingJSONDepth is the nesting encoding/json reads and indents.
const maxEncodingJSONDepth = 10000
