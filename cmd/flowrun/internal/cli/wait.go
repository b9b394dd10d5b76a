package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

func waitCommand() *command {
	return &command{
		name:  "wait",
		args:  "RUN [--timeout DURATION] [--json]",
		short: "wait until a run ends and exit with its outcome (for CI)",
		long: `Wait waits until a run ends, wherever it runs (a worker, another apply), and
exits with its outcome by the exit codes of apply: 0 completed, 1 failed or
canceled, 4 blocked on a version decision (it will not end without one).
A database that stops answering (a restart, a failover) is read again for
up to 30s, as workers ride it out, before wait gives up with exit 5.
With --timeout it gives up after that long and exits 3 with the run's state
(the run goes on); Ctrl-C does the same at once. It prints the run's end on
stderr, and with --json the run as show --json prints it on stdout.
RUN is a run reference: an id or a unique prefix of one, @last,
WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1).`,
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			timeout := fs.Duration("timeout", 0, "give up after this long and exit 3 (default: wait as long as it takes)")
			asJSON := fs.Bool("json", false, "print the run as one JSON object (as show --json) when the wait ends")
			return func(ctx context.Context, args []string) error {
				if err := oneRunArg("wait", args, 1, "one RUN"); err != nil {
					return err
				}
				if *timeout < 0 {
					return usageErrorf("--timeout must not be negative, got %s", *timeout).hint("Pass a duration such as --timeout 10m, or none to wait as long as it takes.")
				}
				sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				if e.remote.url != "" {
					return e.waitThroughServer(ctx, sctx, args[0], *timeout, *asJSON)
				}
				st, run, err := e.findRun(ctx, args[0])
				if err != nil {
					return err
				}
				run, err = e.waitEnd(sctx, st, run.ID, *timeout)
				if err != nil {
					return err
				}
				if *asJSON {
					if err := e.printView(ctx, e.engine(st, nil), run.ID, true); err != nil {
						return err
					}
				}
				if run.Status.Terminal() {
					fmt.Fprintf(e.stderr, "flowrun wait: run %s %s\n", run.ID, run.Status)
				}
				// A signal of a declared type: its type and a value
				// of it, as apply says (and wait --server).
				return e.withSignalHint(ctx, e.engine(st, nil), run, exitForStatus(run, ""))
			}
		},
	}
}

// waitEnd reads the run until it is terminal or blocked, timeout passes
// (when more than 0) or ctx ends, and returns it as last read. A read
// that fails is tried again every second for up to api.StoreOutage, said once
// on stderr, as the run goes on meanwhile; a run that is gone, a newer
// schema, or a store that fails for longer ends the wait with the error.
func (e *env) waitEnd(ctx context.Context, st store.Store, runID string, timeout time.Duration) (store.Run, error) {
	var deadline time.Time
	var out api.Outage
	if timeout > 0 {
		deadline = e.clock.Now().Add(timeout)
	}
	for {
		run, err := st.RunGet(context.WithoutCancel(ctx), runID)
		if err != nil {
			now := e.clock.Now()
			if ctx.Err() != nil || (!deadline.IsZero() && !now.Before(deadline)) {
				return run, storeError("reading run "+runID, err)
			}
			again, first := out.Failed(err, now)
			switch {
			case !again && first: // gone, or a newer schema
				return run, storeError("reading run "+runID, err)
			case !again:
				return run, storeError(fmt.Sprintf("reading run %s: the store kept failing for %s", runID, api.StoreOutage), err)
			case first:
				fmt.Fprintf(e.stderr, "flowrun wait: %v; reading the run again every second for up to %s\n", err, api.StoreOutage)
			}
			out.Pause(ctx, e.clock)
			continue
		}
		if d := out.Answered(e.clock.Now()); d > 0 {
			fmt.Fprintf(e.stderr, "flowrun wait: the store answers again after failing for %s\n", d.Round(time.Millisecond))
		}
		if run.Status.Terminal() || run.Status == store.RunBlocked || ctx.Err() != nil {
			return run, nil
		}
		if !deadline.IsZero() && !e.clock.Now().Before(deadline) {
			return run, nil
		}
		// At most followEvery: the deadline is checked on the next turn.
		_ = interp.WaitForChange(ctx, e.clock, st, followGap, followEvery)
	}
}

// serverPoll is how often wait asks a server for the run: a server tells
// of no commits, so wait reads the run again at this pace.
const serverPoll = 250 * time.Millisecond

// waitThroughServer is wait through the one door of a server: it reads
// the run every serverPoll until it is terminal or blocked, timeout passes
// (when more than 0) or sctx ends, then prints and exits as wait does on
// a store.
func (e *env) waitThroughServer(ctx, sctx context.Context, ref string, timeout time.Duration, asJSON bool) error {
	d, view, err := e.viewRun(ctx, ref)
	if err != nil {
		return err
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = e.clock.Now().Add(timeout)
	}
	for !view.Status.Terminal() && view.Status != store.RunBlocked && sctx.Err() == nil {
		if !deadline.IsZero() && !e.clock.Now().Before(deadline) {
			break
		}
		t := e.clock.NewTimer(serverPoll)
		select {
		case <-t.C():
		case <-sctx.Done():
			t.Stop()
		}
		if sctx.Err() != nil {
			break
		}
		if view, err = d.Run(ctx, view.RunID); err != nil {
			return storeError("reading run "+ref, err)
		}
	}
	if asJSON {
		if err := e.writeJSON(view); err != nil {
			return err
		}
	}
	if view.Status.Terminal() {
		fmt.Fprintf(e.stderr, "flowrun wait: run %s %s\n", view.RunID, view.Status)
	}
	return e.exitForDoorView(ctx, d, view)
}
