package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
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
		args:  "RUN [--step STEP] [-f]",
		short: "print a run's events; follow them live with -f",
		long: `Logs prints the history of a run, one event per line with its time: claims,
steps started, completed and failed, retries scheduled, signals received,
version decisions. --step keeps the events of one step (and its foreach items
and until iterations). -f keeps printing new events until the run ends;
Ctrl-C stops following. RUN is a run id or a unique prefix of one.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			step := fs.String("step", "", "only the events of this step")
			follow := fs.Bool("f", false, "follow: keep printing new events until the run ends")
			return func(ctx context.Context, args []string) error {
				if err := oneRunArg("logs", args, 1, "one RUN"); err != nil {
					return err
				}
				st, run, err := e.findRun(ctx, args[0])
				if err != nil {
					return err
				}
				if !*follow {
					_, err := e.printEvents(ctx, st, run.ID, *step, 0)
					return err
				}
				sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				return e.followEvents(sctx, st, run.ID, *step)
			}
		},
	}
}

// printEvents prints the run's events after the event id after, and returns
// the id of the last event read.
func (e *env) printEvents(ctx context.Context, st store.Store, runID, step string, after int64) (int64, error) {
	const page = 500
	for {
		evs, err := st.EventList(ctx, store.EventListParams{RunID: runID, AfterID: after, Limit: page})
		if err != nil {
			return after, storeError("reading the events of run "+runID, err)
		}
		for _, ev := range evs {
			after = ev.ID
			if step != "" && !ofStep(ev.StepKey, step) {
				continue
			}
			fmt.Fprintf(e.stdout, "%s  %s\n", ev.At.Local().Format("2006-01-02T15:04:05.000Z07:00"), describeEvent(ev))
		}
		if len(evs) < page {
			return after, nil
		}
	}
}

// ofStep reports whether a step key belongs to the step: the step itself,
// one of its foreach items (step[2]) or until iterations (step#3).
func ofStep(key, step string) bool {
	return key == step || strings.HasPrefix(key, step+"[") || strings.HasPrefix(key, step+"#")
}

// followEvents prints events as they come until the run is finished (and
// its last events printed) or ctx is canceled.
func (e *env) followEvents(ctx context.Context, st store.Store, runID, step string) error {
	var after int64
	for {
		// Read the status before the events, so the events of the final
		// transition are printed before stopping.
		run, err := st.RunGet(ctx, runID)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return storeError("reading run "+runID, err)
		}
		after, err = e.printEvents(ctx, st, runID, step, after)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if run.Status.Terminal() {
			return nil
		}
		if interp.WaitForChange(ctx, e.clock, st, followGap, followEvery) != nil {
			return nil
		}
	}
}
