package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/schedule"
	"github.com/flowrun/flowrun/store"
)

func schedulesCommand() *command {
	return &command{
		name:  "schedules",
		args:  "[--json] | pause WORKFLOW/NAME | unpause WORKFLOW/NAME | trigger WORKFLOW/NAME",
		short: "list, pause, unpause or trigger the schedules",
		long: `Schedules lists the active schedules of every workflow (those the workflow's
applied version declares), with the version that activated them, their spec and
time zone, whether they are paused, their next fire and their last fire and the
run it started. --json prints an array of objects (spec/semantics.md §16).
A flowrun worker fires the schedules; apply activates them.

pause WORKFLOW/NAME stops a schedule firing; its slots while paused are never
fired later. unpause resumes it from now. trigger starts a run now through the
same path as a slot, honouring the schedule's overlap policy (it works while
paused): it prints the run's id, or says why the trigger was skipped. An
unknown schedule is refused (exit 2) with the nearest name, and nothing is
written.`,
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "list: print a JSON array of schedules")
			return func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return e.schedulesList(ctx, *asJSON)
				}
				switch sub := args[0]; sub {
				case "pause", "unpause", "trigger":
					if len(args) != 2 {
						return usageErrorf("schedules %s takes one WORKFLOW/NAME, got %s", sub, plural(len(args)-1, "argument", "arguments")).
							hint("List the schedules with: flowrun schedules")
					}
					return e.scheduleWork(ctx, sub, args[1], *asJSON)
				default:
					return usageErrorf("unknown schedules subcommand %q; use pause, unpause or trigger, or no argument to list", sub).
						hint("Run `flowrun help schedules` for the usage.")
				}
			}
		},
	}
}

func (e *env) schedulesList(ctx context.Context, asJSON bool) error {
	d, err := e.door(ctx)
	switch {
	case errors.Is(err, errNoDatabase):
		return e.noDatabase("")
	case err != nil:
		return err
	}
	out, err := d.Schedules(ctx)
	if err != nil {
		return storeError("", err)
	}
	if asJSON {
		return e.writeJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(e.stderr, "flowrun schedules: no schedule is active; apply a workflow with a schedule block")
		return nil
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "SCHEDULE\tVERSION\tSPEC\tTIMEZONE\tPAUSED\tNEXT FIRE\tLAST FIRE\tRUN")
	now := e.clock.Now()
	for _, j := range out {
		next, last, run := "-", "-", "-"
		if j.NextFire != nil {
			next = stampInZone(*j.NextFire, j.Timezone)
			if t, err := time.Parse(time.RFC3339Nano, *j.NextFire); err == nil && now.Sub(t) > overdueAfter {
				next += " (overdue: no worker fired it)"
			}
		}
		if j.LastFire != nil {
			last = stampInZone(j.LastFire.Slot, j.Timezone)
			if j.LastFire.RunID != nil && j.LastFire.Status != "skipped" {
				run = *j.LastFire.RunID
			} else {
				run = j.LastFire.Status + " (" + j.LastFire.Reason + ")"
			}
		}
		paused := "no"
		if j.Paused {
			paused = "yes"
		}
		row(tw, j.Workflow+"/"+j.Name, j.Version, j.Kind+" "+j.Spec, j.Timezone, paused, next, last, run)
	}
	return tw.Flush()
}

// scheduleWork pauses, unpauses or triggers one schedule.
func (e *env) scheduleWork(ctx context.Context, sub, ref string, asJSON bool) error {
	wf, name, ok := strings.Cut(ref, "/")
	if !ok || wf == "" || name == "" {
		return usageErrorf("%q is not WORKFLOW/NAME", ref).hint("Name a schedule as its workflow and its name, like nightly-report/nightly; list them with: flowrun schedules")
	}
	d, err := e.door(ctx)
	if errors.Is(err, errNoDatabase) {
		return e.noDatabase(fmt.Sprintf("there is no schedule %q", ref))
	}
	if err != nil {
		return err
	}
	if sub == "pause" || sub == "unpause" {
		sc, err := d.PauseSchedule(ctx, wf, name, sub == "pause")
		if err != nil {
			return controlError(err)
		}
		if sc.Paused {
			fmt.Fprintf(e.stdout, "schedule %s paused\n", ref)
		} else {
			next := "-"
			if sc.NextFire != nil {
				next = stampInZone(*sc.NextFire, sc.Timezone)
			}
			fmt.Fprintf(e.stdout, "schedule %s resumed; next fire %s\n", ref, next)
		}
		return nil
	}
	t, err := d.TriggerSchedule(ctx, wf, name)
	if err != nil {
		return controlError(err)
	}
	if asJSON {
		return e.writeJSON(t.Fire)
	}
	if t.Fire.Status == string(store.FireSkipped) && strings.HasPrefix(t.Fire.Reason, "key:") {
		fmt.Fprintf(e.stdout, "schedule %s: trigger skipped (%s): a workflow's run key names one run (language.md §2)\n", ref, t.Fire.Reason)
		return nil
	}
	if t.Fire.Status == string(store.FireSkipped) {
		fmt.Fprintf(e.stdout, "schedule %s: trigger skipped (%s): run %s of the schedule is unfinished and its overlap is %q\n",
			ref, t.Fire.Reason, strings.Join(t.Unfinished, ", "), t.Overlap)
		return nil
	}
	id := ""
	if t.Fire.RunID != nil {
		id = *t.Fire.RunID
	}
	fmt.Fprintf(e.stdout, "%s\n", id)
	if e.remote.url != "" {
		// The server's workers run it, not a flowrun worker here.
		if n, err := d.LiveWorkers(ctx); err == nil && n == 0 {
			fmt.Fprintf(e.stderr, "flowrun schedules: schedule %s started run %s; %s has no live worker (flowrun workers --server %s), so nothing runs it until one starts\n", ref, id, e.remote.url, e.remote.url)
			return nil
		}
		fmt.Fprintf(e.stderr, "flowrun schedules: schedule %s started run %s; a worker of %s runs it; follow it with: flowrun logs %s -f --server %s\n", ref, id, e.remote.url, id, e.remote.url)
		return nil
	}
	fmt.Fprintf(e.stderr, "flowrun schedules: schedule %s started run %s; a worker runs it (flowrun worker)\n", ref, id)
	return nil
}

// overdueAfter is how long past its next fire a schedule's list says it
// is overdue: a live worker fires a slot within a poll or two, so a next
// fire further in the past says that no worker runs on the store.
const overdueAfter = 10 * time.Second

// stampInZone is a JSON time (RFC 3339) in a schedule's zone with UTC
// beside it (schedule.InZone); text that is not one stays as it is.
func stampInZone(s, tz string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return schedule.InZone(t, tz)
}

// printNextFires prints the next fire times of a workflow's activated
// schedules (apply).
func (e *env) printNextFires(scs []store.Schedule, now time.Time) {
	for _, sc := range scs {
		fires, err := interp.NextFires(sc, now, 3)
		if err != nil {
			continue
		}
		ts := schedule.AllInZone(fires, sc.Timezone)
		paused := ""
		if sc.Paused {
			paused = " (paused)"
		}
		fmt.Fprintf(e.stderr, "flowrun apply: schedule %s/%s (%s %q in %s)%s next fires at %s\n",
			sc.Workflow, sc.Name, sc.Kind, sc.Spec, sc.Timezone, paused, strings.Join(ts, ", "))
	}
}

// applySchedules is apply of a workflow with schedules, without --run: it
// stores the versions, activates their schedules and prints each one's
// next fires, and starts no run.
func (e *env) applySchedules(ctx context.Context, mod *lang.Module, o *applyOptions) error {
	if len(o.pairs) > 0 || o.inputsFile != "" || o.newRun || o.detach {
		return usageErrorf("this workflow has %s: apply %s and starts no run, so --input, --inputs, --new and --detach do not apply", startersOf(mod), startersDo(mod)).
			hint("Pass --run to also start a run now with these inputs.")
	}
	e.announceNewStore()
	st, err := e.openStore(ctx, true)
	if err != nil {
		return err
	}
	eng := e.engine(st, nil)
	res, err := e.storeVersions(ctx, eng, mod)
	if err != nil {
		return err
	}
	e.sayNextFires(res)
	e.printWebhooks(mod)
	return nil
}

// sayNextFires prints the next fires of the schedules a deploy activated
// (a version that drops its schedules stopped them); their runs execute
// in the workflow file's directory.
func (e *env) sayNextFires(res *api.DeployResult) {
	for i := range res.Workflows {
		e.printNextFires(res.Workflows[i].ActiveSchedules(), e.clock.Now())
	}
}
