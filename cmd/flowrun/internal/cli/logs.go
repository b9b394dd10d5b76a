package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
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
		store: true,
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
				st, run, err := e.findRun(ctx, args[0])
				if err != nil {
					return err
				}
				if *step != "" {
					if err := checkStepFilter(ctx, e.engine(st, nil), run, *step); err != nil {
						return err
					}
				}
				if *exitStatus && !*follow {
					return usageErrorf("--exit-status goes with -f").hint("Run: flowrun logs RUN -f --exit-status, or flowrun wait RUN")
				}
				lw := newLogWriter(e.stdout, st, run.ID, *step, *outputOnly, *asJSON)
				if !*follow {
					if err := lw.round(ctx); err != nil {
						return err
					}
					return lw.end()
				}
				sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
				if err := e.followLogs(sctx, st, lw); err != nil || !*exitStatus {
					return err
				}
				final, err := st.RunGet(ctx, run.ID)
				if err != nil {
					return storeError("reading run "+run.ID, err)
				}
				return exitForStatus(final)
			}
		},
	}
}

// ofStep reports whether a step key belongs to the step: the step itself,
// one of its foreach items (step[2]) or until iterations (step#3).
func ofStep(key, step string) bool {
	return key == step || strings.HasPrefix(key, step+"[") || strings.HasPrefix(key, step+"#")
}

// checkStepFilter refuses a --step that names nothing the run has or can
// have (exit 2), naming the run's steps. It accepts a step of the run's
// graph or of its step rows (a step of the version it ran before a
// migration too), a step key (each[3], poll#2) the run has, a key of a
// step of the run that is still unfinished (its items and iterations may
// come), and anything an event of the run was recorded for.
func checkStepFilter(ctx context.Context, eng *interp.Engine, run store.Run, filter string) error {
	st := eng.Store()
	var names []string // in graph order, then steps of other versions
	known := map[string]bool{}
	addName := func(n string) {
		if !known[n] {
			known[n] = true
			names = append(names, n)
		}
	}
	g, err := eng.RunGraph(ctx, run)
	var ge *interp.GraphError
	var stepOf map[string]*graph.Step // nil when the graph cannot be read
	switch {
	case err == nil:
		stepOf = map[string]*graph.Step{}
		for _, s := range g.Steps {
			stepOf[s.Name] = s
			addName(s.Name)
		}
	case !errors.Is(err, store.ErrNotFound) && !errors.As(err, &ge):
		return storeError(fmt.Sprintf("reading the graph of run %s", run.ID), err)
	}
	heads, err := st.StepHeads(ctx, run.ID)
	if err != nil {
		return storeError("reading the steps of run "+run.ID, err)
	}
	sort.Slice(heads, func(i, j int) bool { return heads[i].Key < heads[j].Key })
	for _, h := range heads {
		addName(h.Step)
	}
	if known[filter] {
		return nil
	}
	for _, h := range heads {
		if ofStep(h.Key, filter) {
			return nil
		}
	}
	base, index, iteration, isKey := store.ParseStepKey(filter)
	if isKey && known[base] && !run.Status.Terminal() {
		// An item or iteration that may still come: its step has not
		// finished, and is a foreach (for [i]) or until (for #n) step.
		open := true
		for _, h := range heads {
			if h.Key == base && h.Status.Terminal() {
				open = false
			}
		}
		if s := stepOf[base]; s != nil && (index >= 0 && s.Foreach == nil || iteration >= 0 && s.Until == nil) {
			open = false
		}
		if open {
			return nil
		}
	}
	// Anything the run's history holds a line for.
	var after int64
	for {
		evs, err := st.EventList(ctx, store.EventListParams{RunID: run.ID, AfterID: after, Limit: 500})
		if err != nil {
			return storeError("reading the events of run "+run.ID, err)
		}
		for _, ev := range evs {
			after = ev.ID
			if ev.StepKey != "" && ofStep(ev.StepKey, filter) {
				return nil
			}
		}
		if len(evs) < 500 {
			break
		}
	}

	msg := fmt.Sprintf("run %s has no step %q", run.ID, filter)
	if isKey && known[base] {
		msg = fmt.Sprintf("run %s has no step key %q: step %q has no such foreach item or until iteration", run.ID, filter, base)
	}
	hint := "Pass --step with one of the run's steps"
	if len(names) == 0 {
		hint = "The run has no steps yet; see it with: flowrun show " + run.ID
	} else {
		if near := naming.NearestName(filter, names); near != "" && !(isKey && near == base) {
			hint = fmt.Sprintf("Did you mean %q? ", near) + hint
		}
		const most = 20
		shown := names
		more := ""
		if len(shown) > most {
			shown, more = shown[:most], fmt.Sprintf(" and %d more", len(names)-most)
		}
		hint += ": " + strings.Join(shown, ", ") + more + "; or with a key like NAME[2] (a foreach item) or NAME#3 (an until iteration); see them with: flowrun show " + run.ID
	}
	return usageErrorf("%s", msg).hint(hint)
}

// followLogs prints events and output as they come until the run is
// finished (and its last events and output printed) or ctx is canceled.
func (e *env) followLogs(ctx context.Context, st store.Store, lw *logWriter) error {
	for {
		// Read the status before the events and output, so the events of
		// the final transition are printed before stopping.
		run, err := st.RunGet(ctx, lw.runID)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return storeError("reading run "+lw.runID, err)
		}
		if err := lw.round(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if run.Status.Terminal() {
			return lw.end()
		}
		if interp.WaitForChange(ctx, e.clock, st, followGap, followEvery) != nil {
			return lw.end()
		}
	}
}
