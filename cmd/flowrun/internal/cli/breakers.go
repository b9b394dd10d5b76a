package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/flowrun/flowrun/interp"
	"strconv"

	"github.com/flowrun/flowrun/store"
)

func breakersCommand() *command {
	return &command{
		name:  "breakers",
		args:  "[--json]",
		short: "list the circuit breakers and their shared state",
		long: `Breakers lists every circuit breaker a run has used, with its state (closed,
open or half-open), its count of consecutive failures, and when an open one
lets its trial attempt through. Breakers are shared by all runs and processes
of the database. --json prints an array of objects with the fields name,
state, failures, opened_at, open_until, trial (null, or {run_id, step}) and
updated_at.`,
		store: true,
		reads: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print a JSON array of breakers")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("breakers takes no arguments, got %q", args[0]).hint("Run: flowrun breakers [--json]")
				}
				var bs []store.Breaker
				st, err := e.openStore(ctx, false)
				switch {
				case errors.Is(err, errNoDatabase):
					return e.noDatabase("")
				case err != nil:
					return err
				default:
					if bs, err = e.engine(st, nil).BreakerList(ctx); err != nil {
						return storeError("", err)
					}
				}
				if *asJSON {
					return e.writeJSON(interp.Breakers(bs))
				}
				if len(bs) == 0 {
					fmt.Fprintln(e.stderr, "flowrun breakers: no breaker has been used yet")
					return nil
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "BREAKER\tSTATE\tFAILURES\tOPEN UNTIL\tTRIAL\tUPDATED")
				for _, b := range bs {
					until, trial := "-", "-"
					if b.State == store.BreakerOpen {
						until = formatTime(b.OpenUntil)
					}
					if b.TrialRunID != "" {
						trial = b.TrialRunID + " " + b.TrialStepKey
					}
					row(tw, b.Name, string(b.State), strconv.Itoa(b.Failures), until, trial, formatTime(b.UpdatedAt))
				}
				return tw.Flush()
			}
		},
	}
}
