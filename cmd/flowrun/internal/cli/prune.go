package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowrun/flowrun/store"
)

// pruneBatch is how many run trees one prune transaction deletes, so that
// workers sharing the database wait for the writer only briefly.
const pruneBatch = 500

func pruneCommand() *command {
	return &command{
		name:  "prune",
		args:  "--older-than AGE [--dry-run] [--json]",
		short: "delete finished runs older than an age, with their history",
		long: `Prune deletes the runs that finished more than AGE ago, with their steps,
attempts, events and signals. A run and its child runs go together, and
only once every one of them has finished; unfinished runs, runs with an
open dead letter and runs with an alert still to send are never touched.
AGE is a number with a unit: 30d (days), 2w (weeks), 12h, 90m.

After a prune, applying the same workflow and inputs again starts a new run
instead of finding the pruned one.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			olderThan := fs.String("older-than", "", "prune runs that finished longer ago than this: 30d, 2w, 12h, 90m")
			dryRun := fs.Bool("dry-run", false, "count what would be deleted, delete nothing")
			asJSON := fs.Bool("json", false, `print {"runs", "steps", "attempts", "events", "before", "dry_run"}`)
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("prune takes no arguments, got %q", args[0]).hint("Run: flowrun prune --older-than 30d")
				}
				if *olderThan == "" {
					return usageErrorf("prune needs --older-than, the age of the oldest runs to keep").hint("Run: flowrun prune --older-than 30d")
				}
				age, err := parseAge(*olderThan)
				if err != nil {
					return usageErrorf("--older-than %q: %v", *olderThan, err).hint("Write the age as a number and a unit: 30d, 2w, 12h or 90m.")
				}
				before := e.clock.Now().Add(-age)
				var total store.PruneResult
				st, err := e.openStore(ctx, false)
				switch {
				case errors.Is(err, errNoDatabase):
					// Pointed at nothing: "pruned 0 runs" would hide a
					// mistyped --db from a cron job for ever.
					return e.noDatabase("")
				case err != nil:
					return err
				case *dryRun:
					if total, err = st.RunPrune(ctx, store.RunPruneParams{Before: before, DryRun: true}); err != nil {
						return storeError("counting the runs to prune", err)
					}
				default:
					for {
						res, err := st.RunPrune(ctx, store.RunPruneParams{Before: before, Limit: pruneBatch})
						if err != nil {
							return storeError(fmt.Sprintf("pruning runs (%s deleted before the error)", plural(total.Runs, "run was", "runs were")), err)
						}
						total = total.Add(res)
						if res.Runs == 0 {
							break
						}
					}
				}
				if *asJSON {
					enc := json.NewEncoder(e.stdout)
					return enc.Encode(struct {
						Runs     int    `json:"runs"`
						Steps    int    `json:"steps"`
						Attempts int    `json:"attempts"`
						Events   int    `json:"events"`
						Output   int    `json:"output_chunks"`
						Before   string `json:"before"`
						DryRun   bool   `json:"dry_run"`
					}{total.Runs, total.Steps, total.Attempts, total.Events, total.Output, jsonTime(before), *dryRun})
				}
				verb := "pruned"
				if *dryRun {
					verb = "would prune"
				}
				_, err = fmt.Fprintf(e.stdout, "%s %s (%s, %s, %s) that finished before %s\n", verb,
					plural(total.Runs, "run", "runs"), plural(total.Steps, "step", "steps"),
					plural(total.Attempts, "attempt", "attempts"), plural(total.Events, "event", "events"), formatTime(before))
				return err
			}
		},
	}
}

// parseAge reads an age: a whole number of days (d) or weeks (w), or a Go
// duration (12h, 90m, 1h30m). It must be more than zero.
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	switch {
	case strings.HasSuffix(s, "d") || strings.HasSuffix(s, "w"):
		n, err := strconv.Atoi(s[:len(s)-1])
		if err != nil {
			return 0, errors.New("the number before the unit is not a whole number")
		}
		unit := 24 * time.Hour
		if strings.HasSuffix(s, "w") {
			unit *= 7
		}
		d = time.Duration(n) * unit
	default:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, errors.New("it is not an age")
		}
	}
	if d <= 0 {
		return 0, errors.New("the age must be more than zero")
	}
	return d, nil
}
