package cli

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/api"
)

// followEvery is how often logs -f looks for new events; on a store that
// tells of commits it looks at each, but at most every followGap.
const (
	followEvery = 200 * time.Millisecond
	followGap   = 20 * time.Millisecond
)

func logsCommand() *command {
	return &command{
		name:  "logs",
		args:  "RUN [--step STEP] [-f] [--output] [--json]",
		short: "print a run's events and its steps' output; follow them live with -f",
		long: `Logs prints the history of a run, one event per line with its time: claims,
steps started, completed and failed, retries scheduled, signals received,
version decisions. Between them come the lines exec steps wrote to stdout and
stderr, as the steps wrote them (stored while they run, with secrets as ***),
each prefixed by its step and stream: "count stdout | 1". --output prints
only those lines. --step keeps the events and output of one step (and its
foreach items and until iterations), or of one item or iteration (each[2],
poll#3); a step the run does not have is refused (exit 2). -f keeps printing
new events and output until the run ends; Ctrl-C stops following; with
--exit-status it then exits with the run's outcome (0 completed, 1 failed
or canceled, 3 when it stopped before the end), as wait does. --json
prints one JSON object per line instead (fields in spec/semantics.md §16).
RUN is a run reference: an id or a unique prefix of one, @last,
WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1). Control characters in what
programs wrote (in events and in output lines) are printed escaped, as \x1b
and \r (--json and show --json print the exact text).`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			step := fs.String("step", "", "only the events and output of this step")
			follow := fs.Bool("f", false, "follow: keep printing new events and output until the run ends")
			exitStatus := fs.Bool("exit-status", false, "with -f: exit with the run's outcome, as apply and wait do (0 completed, 1 failed or canceled, 3 when stopped before the end)")
			outputOnly := fs.Bool("output", false, "only the output of exec steps, no events")
			asJSON := fs.Bool("json", false, "print JSON lines: one object per event or output line")
			return func(ctx context.Context, args []string) error {
				if err := oneRunArg("logs", args, 1, "one RUN"); err != nil {
					return err
				}
				if *exitStatus && !*follow {
					return usageErrorf("--exit-status goes with -f").hint("Run: flowrun logs RUN -f --exit-status, or flowrun wait RUN")
				}
				d, err := e.doorFor(ctx, args[0])
				if err != nil {
					return err
				}
				lp := &logPrinter{w: e.stdout, asJSON: *asJSON}
				q := api.LogQuery{Step: *step, OutputOnly: *outputOnly, Follow: *follow}
				if *follow {
					sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
					defer stop()
					ctx = sctx
				}
				if err := d.Log(ctx, args[0], q, lp.print); err != nil {
					return controlError(err)
				}
				if !*exitStatus {
					return nil
				}
				final, err := d.Run(context.WithoutCancel(ctx), args[0])
				if err != nil {
					return storeError("reading run "+args[0], err)
				}
				return e.exitForDoorView(context.WithoutCancel(ctx), d, final)
			}
		},
	}
}
