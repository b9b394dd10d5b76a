package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/decide"
)

// The steering verbs through a server (--server): the server's workers
// run the runs; resume and retry follow the run as they follow one they
// run here, or leave it to them with --detach (spec/cli.md §9).

// resumeRemote is resume --server: a version decision taken through the
// API, given with --choose or, on a terminal, asked with the diff of the
// server's plan as resume asks locally. Without a decision to take there
// is nothing to do here, since the server's workers continue unfinished
// runs by themselves.
func (e *env) resumeRemote(ctx context.Context, ref, choose string, detach, asJSON bool) error {
	d, err := e.doorFor(ctx, ref)
	if err != nil {
		return err
	}
	from := ""
	if choose == "" {
		nothing := usageErrorf("resume --server runs nothing here: the server's workers continue unfinished runs by themselves").
			hint(fmt.Sprintf("Decide a blocked run with: flowrun resume %s --choose old|new|migrate --server %s; follow a run with: flowrun logs %s -f --server %s", ref, e.remote.url, ref, e.remote.url))
		if !e.canPrompt() {
			return nothing
		}
		if o, err := d.Offer(ctx, ref); err != nil {
			return controlError(err)
		} else if !o.Offer {
			return nothing
		}
		plan, err := d.PlanDecision(ctx, ref)
		if err != nil {
			return controlError(err)
		}
		c, err := decide.Prompt(ctx, plan, e.stdin, e.stderr, e.getenv("NO_COLOR") != "")
		if errors.Is(err, decide.ErrNoDecision) {
			return (&exitError{code: ExitDecision, msg: fmt.Sprintf("run %s stays blocked: no decision was made", plan.Run.ID)}).
				hint(fmt.Sprintf("Decide later with: flowrun resume %s --choose old|new|migrate --server %s", plan.Run.ID, e.remote.url))
		}
		if err != nil {
			return &exitError{code: ExitDecision, msg: "the decision prompt stopped", err: err}
		}
		choose, from = string(c), plan.From
	}
	dec, err := d.Decide(ctx, ref, interp.Choice(choose), from, e.decidedBy("cli"))
	if err != nil {
		return e.decideError(e.serverRefusal(err))
	}
	e.sayDecided(dec)
	if detach {
		return e.leftToServer(dec.Run, asJSON)
	}
	return e.followRemote(ctx, d, dec.Run, asJSON, "")
}

// retryRemote is retry --server: the redrive through the API.
func (e *env) retryRemote(ctx context.Context, ref, from, choose string, detach, asJSON bool) error {
	if choose != "" {
		return usageErrorf("retry --choose does not apply with --server").
			hint(fmt.Sprintf("Retry first, then decide the version with: flowrun resume %s --choose %s --server %s", ref, choose, e.remote.url))
	}
	d, err := e.doorFor(ctx, ref)
	if err != nil {
		return err
	}
	view, err := d.Retry(ctx, ref, from)
	if err != nil {
		return controlError(e.serverRefusal(err))
	}
	fmt.Fprintf(e.stderr, "flowrun retry: run %s is pending again.\n", view.RunID)
	if detach {
		return e.leftToServer(view, asJSON)
	}
	return e.followRemote(ctx, d, view, asJSON, "")
}

// serverRefusal words how to go on from a refusal that leaves an
// unfinished run as it is (api.Refusal.Continue) for a caller of this
// server: a worker of the server goes on with it, and logs -f follows it.
// Any other error is returned as it is.
func (e *env) serverRefusal(err error) error {
	var rf *api.Refusal
	if !errors.As(err, &rf) || rf.Continue == "" {
		return err
	}
	c := *rf
	c.Hint = api.ContinueHint(rf.Continue, e.remote.url)
	return &c
}

// serverFlag is " --server URL" for a command a verb names (in a hint or
// a line of what to do next) when the verb was given --server, else ""
// (FLOWRUN_SERVER or the project's server name it for the next command
// too).
func (e *env) serverFlag() string {
	if e.remote.from != "--server" {
		return ""
	}
	return " --server " + e.remote.url
}

// sayDecided says what a decision did, as decideOne does.
func (e *env) sayDecided(d *api.Decided) {
	switch interp.Choice(d.Choice) {
	case interp.ChoiceNew:
		fmt.Fprintf(e.stderr, "flowrun %s: run %s decided new: it is canceled, and run %s of version %s starts with the same inputs.\n",
			e.verb, d.RunID, d.Run.RunID, d.To)
	case interp.ChoiceMigrate:
		fmt.Fprintf(e.stderr, "flowrun %s: run %s decided migrate: it moves to version %s; kept: %s; re-run: %s.\n",
			e.verb, d.RunID, d.To, orNone(d.Keep), orNone(d.Rerun))
	default:
		fmt.Fprintf(e.stderr, "flowrun %s: run %s decided old: it resumes on version %s.\n", e.verb, d.RunID, d.From)
	}
}

// leftToServer reports a run the server's workers go on with: its id on
// stdout (or the JSON view), how to follow it on stderr.
func (e *env) leftToServer(v *interp.RunView, asJSON bool) error {
	fmt.Fprintf(e.stderr, "flowrun %s: run %s is left to the workers of %s. Follow it with: flowrun logs %s -f --server %s\n",
		e.verb, v.RunID, e.remote.url, v.RunID, e.remote.url)
	if asJSON {
		return e.writeJSON(v)
	}
	fmt.Fprintln(e.stdout, v.RunID)
	return nil
}

// decideError words a refused decision through the server: decided by
// someone else first (exit 6), or one the run's state does not allow
// (exit 2).
func (e *env) decideError(err error) error {
	var de *interp.DecidedError
	if errors.As(err, &de) {
		return decidedError(de, e.remote.url)
	}
	return controlError(err)
}

// statusGap is how often followRemote reads the run's status while its
// log streams.
const statusGap = 250 * time.Millisecond

// followRemote follows a run the server's workers run, as apply, resume
// and retry follow one they run here: the run's log on stderr (as logs -f
// prints it; nothing with --quiet) until the run ends, is blocked on a
// version decision, or parks on a signal that has not come (what apply
// here returns on), then the run as show prints it on stdout (--json: as
// show --json) and the exit code of apply. A server with no live worker
// would never run it: that is said, and the run is left as --detach
// leaves it.
//
// following, when not "", is said on stderr once the log does follow.
func (e *env) followRemote(ctx context.Context, d api.Service, view *interp.RunView, asJSON bool, following string) error {
	if n, err := d.LiveWorkers(ctx); err == nil && n == 0 && !parkedView(view, e.clock.Now()) {
		fmt.Fprintf(e.stderr, "flowrun %s: run %s is enqueued on %s, which has no live worker (flowrun workers --server %s), so nothing runs it until one starts.\n",
			e.verb, view.RunID, e.remote.url, e.remote.url)
		return e.leftToServer(view, asJSON)
	}
	if following != "" {
		fmt.Fprintln(e.stderr, following)
	}
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var final *interp.RunView
	// The log is followed until the run has parked (or ended) and the
	// event saying so is printed: the status watcher may see the run
	// parked before the log has streamed the events up to it, so it only
	// ends the follow itself after endGrace, should that event not come.
	var atEnd atomic.Bool // the last event of the run printed parks or ends it
	parked := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the status watcher: joined below, ended by stop
		defer wg.Done()
		defer stop()
		for {
			v, err := d.Run(fctx, view.RunID)
			if err == nil && parkedView(v, e.clock.Now()) {
				final = v
				close(parked)
				if atEnd.Load() {
					return
				}
				t := e.clock.NewTimer(endGrace)
				select {
				case <-t.C():
				case <-fctx.Done():
					t.Stop()
				}
				return
			}
			t := e.clock.NewTimer(statusGap)
			select {
			case <-t.C():
			case <-fctx.Done():
				t.Stop()
				return
			}
		}
	}()
	lp := &logPrinter{w: e.stderr}
	err := d.Log(fctx, view.RunID, api.LogQuery{Follow: true}, func(en api.LogEntry) error {
		if ev := en.Event; ev != nil && ev.RunID == view.RunID {
			atEnd.Store(endsFollow[ev.Kind])
		}
		if !e.display.quiet {
			if err := lp.print(en); err != nil {
				return err
			}
		}
		if atEnd.Load() {
			select {
			case <-parked:
				stop()
			default:
			}
		}
		return nil
	})
	stop()
	wg.Wait()
	if err != nil && fctx.Err() == nil {
		return storeError("following run "+view.RunID, err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if final == nil {
		if final, err = d.Run(ctx, view.RunID); err != nil {
			return storeError("reading run "+view.RunID, err)
		}
	}
	switch {
	case asJSON:
		err = e.writeJSON(final)
	case e.display.quiet:
		_, err = fmt.Fprintf(e.stdout, "%s %s\n", final.RunID, final.Status)
	default:
		err = writeHumanView(e.stdout, final, e.display.items, e.clock.Now())
	}
	if err != nil {
		return err
	}
	return e.exitForDoorView(ctx, d, final)
}

// endGrace is how long the follow of a run the status watcher saw parked
// waits for the log to print the event that parked it.
const endGrace = 2 * time.Second

// endsFollow are the events that park or end a run: once the status
// watcher saw the run parked, the follow ends with the first of them.
var endsFollow = map[string]bool{"run_parked": true, "run_completed": true, "run_failed": true,
	"run_canceled": true, "version_blocked": true}

// parkedView reports whether a run is where a run driven here stops: it
// ended, it is blocked on a version decision, or it waits for a signal
// that has not come.
func parkedView(v *interp.RunView, now time.Time) bool {
	switch {
	case v.Status.Terminal(), v.Status == store.RunBlocked:
		return true
	case v.Status == store.RunWaiting && strings.HasPrefix(v.WaitReason, "signal:"):
		return v.AvailableAt == nil || v.AvailableAt.After(now)
	}
	return false
}
