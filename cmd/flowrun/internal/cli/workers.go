package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
)

func workersCommand() *command {
	return &command{
		name:  "workers",
		args:  "[--json]",
		short: "list the worker processes of the database, live and gone",
		long: `Workers lists the worker processes that registered in the database (flowrun
worker, and flowrun serve --worker): each beats at every heartbeat, and one
not seen for a lease is gone (killed, cut off or stopped at once; a worker
drained gracefully removes itself). A gone worker stays listed for a day.
Liveness is decided on the database's clock on Postgres, so hosts whose
clocks disagree still agree on it. --json prints an array of objects with the
fields id, host, pid, version, concurrency, runs_held, started_at, last_seen
and live. With no live worker, nothing claims a run that is due: it waits
until a worker starts, or until flowrun resume RUN continues it in the
foreground.`,
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print a JSON array of workers")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("workers takes no arguments, got %q", args[0]).hint("Run: flowrun workers [--json]")
				}
				d, err := e.door(ctx)
				switch {
				case errors.Is(err, errNoDatabase):
					return e.noDatabase("")
				case err != nil:
					return err
				}
				ws, err := d.Workers(ctx)
				if err != nil {
					return storeError("", err)
				}
				if *asJSON {
					return e.writeJSON(ws)
				}
				if len(ws) == 0 {
					fmt.Fprintln(e.stderr, "flowrun workers: no worker has registered; start one with: flowrun worker")
					return nil
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "WORKER\tSTATE\tVERSION\tRUNS\tSTARTED\tLAST SEEN")
				for _, w := range ws {
					state := "live"
					if !w.Live {
						state = "gone"
					}
					row(tw, w.ID, state, w.Version, strconv.Itoa(w.Held)+"/"+strconv.Itoa(w.Concurrency),
						formatStamp(w.StartedAt), formatStamp(w.LastSeen))
				}
				return tw.Flush()
			}
		},
	}
}
