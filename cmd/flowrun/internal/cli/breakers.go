package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
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
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print a JSON array of breakers")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("breakers takes no arguments, got %q", args[0]).hint("Run: flowrun breakers [--json]")
				}
				d, err := e.door(ctx)
				switch {
				case errors.Is(err, errNoDatabase):
					return e.noDatabase("")
				case err != nil:
					return err
				}
				bs, err := d.Breakers(ctx)
				if err != nil {
					return storeError("", err)
				}
				if *asJSON {
					return e.writeJSON(bs)
				}
				if len(bs) == 0 {
					fmt.Fprintln(e.stderr, "flowrun breakers: no breaker has been used yet")
					return nil
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "BREAKER\tSTATE\tFAILURES\tOPEN UNTIL\tTRIAL\tUPDATED")
				for _, b := range bs {
					until, trial := "-", "-"
					if b.OpenUntil != nil {
						until = formatStamp(*b.OpenUntil)
					}
					if b.Trial != nil {
						trial = b.Trial.RunID + " " + b.Trial.Step
					}
					row(tw, b.Name, b.State, strconv.Itoa(b.Failures), until, trial, formatStamp(b.UpdatedAt))
				}
				return tw.Flush()
			}
		},
	}
}
