package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

func resumeCommand() *command {
	return &command{
		name:  "resume",
		args:  "RUN [--choose old|new|migrate] [--detach] [--no-tui] [--json]",
		short: "continue a parked or interrupted run in the foreground, or decide a blocked one",
		long: `Resume continues a run that is not finished (parked on a timer or a signal,
interrupted with Ctrl-C, or left by a process that died) in the foreground,
like apply: progress on stderr (the live view on a terminal, plain lines
otherwise or with --no-tui), the result on stdout, and the same exit codes.
With --detach it only checks the run and leaves it to a worker: every
unfinished run is already queued. Resuming a finished run is refused (exit 2);
redrive a failed one with flowrun retry.
RUN is a run reference: an id or a unique prefix of one, @last,
WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1).

A run blocked by a new MAJOR version (or parked on an older MAJOR than one
stored since, which resume blocks first) needs a decision: on a terminal
resume asks, as apply does; otherwise pass --choose (without it resume exits
4). old resumes it on its own version, new cancels it and starts a run of the
new version with the same inputs, migrate moves it to the new version keeping
the completed steps that did not change (see flowrun plan). --choose on a
run that takes no decision is refused with the reason (exit 2); on a run
someone else decided first (even at the same moment) it writes nothing,
names that decision and exits 6.`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			detach := fs.Bool("detach", false, "do not run it here; leave it to a worker")
			asJSON := fs.Bool("json", false, "print the run as one JSON object (as show --json)")
			choose := fs.String("choose", "", "decide a blocked run: old, new or migrate")
			e.noTUIFlag(fs)
			execUser := e.execUserFlag(fs)
			return func(ctx context.Context, args []string) error {
				if err := execUser(); err != nil {
					return err
				}
				if err := oneRunArg("resume", args, 1, "one RUN"); err != nil {
					return err
				}
				if err := checkChoice("choose", *choose, false); err != nil {
					return err
				}
				if e.remote.url != "" {
					return e.resumeRemote(ctx, args[0], *choose, *detach, *asJSON) // steerremote.go
				}
				st, run, err := e.findRun(ctx, args[0])
				if err != nil {
					return err
				}
				prog := e.newProgress()
				eng := e.engine(st, prog.event)
				if run.Status.Terminal() {
					if *choose != "" {
						// Decided "new" by someone else, say so (exit 6).
						if err := alreadyDecided(ctx, eng, run); err != nil {
							return err
						}
					}
					hint := fmt.Sprintf("See it with: flowrun show %s", run.ID)
					if run.Status != store.RunCompleted {
						hint = fmt.Sprintf("Redrive it with: flowrun retry %s", run.ID)
					}
					return usageErrorf("run %s already ended (%s); there is nothing to resume", run.ID, run.Status).hint(hint)
				}
				if *choose != "" {
					return e.resumeChoose(ctx, eng, run, *choose, *detach, *asJSON)
				}
				if run, err = eng.Rebind(ctx, run.ID); err != nil {
					return storeError(fmt.Sprintf("checking the version of run %s", args[0]), err)
				}
				if run.Status == store.RunBlocked {
					if !e.canPrompt() {
						return exitForStatus(run, "")
					}
					if run, err = e.resumePrompt(ctx, eng, run); err != nil {
						return err
					}
				}
				if *detach {
					return e.detached(ctx, eng, run, *asJSON)
				}
				return e.drive(ctx, eng, rootOf(run), *asJSON)
			}
		},
	}
}

func retryCommand() *command {
	return &command{
		name:  "retry",
		args:  "RUN [--from STEP] [--choose old|new|migrate] [--detach] [--no-tui] [--json]",
		short: "redrive a failed or canceled run, keeping its completed steps",
		long: `Retry redrives a failed or canceled run: completed steps keep their results,
the failed and canceled steps run again (or, with --from, the named step and
every step after it), with a fresh retry budget. Then it runs the run in the
foreground like apply, or leaves it to a worker with --detach. Retrying a run
that did not fail is refused (exit 2). A run bound to an older MAJOR
version than the newest stored needs a version decision to go on: retry
asks on a terminal, as resume does, and --choose old|new|migrate decides
it without asking (refused, before anything changes, for a run that needs
no decision).
RUN is a run reference: an id or a unique prefix of one, @last,
WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1).`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			from := fs.String("from", "", "re-run this step and every step after it")
			choose := fs.String("choose", "", "decide the version of a run bound to an older MAJOR: old, new or migrate")
			e.noTUIFlag(fs)
			detach := fs.Bool("detach", false, "do not run it here; leave it to a worker")
			asJSON := fs.Bool("json", false, "print the run as one JSON object (as show --json)")
			execUser := e.execUserFlag(fs)
			return func(ctx context.Context, args []string) error {
				if err := execUser(); err != nil {
					return err
				}
				if err := oneRunArg("retry", args, 1, "one RUN"); err != nil {
					return err
				}
				if err := checkChoice("choose", *choose, false); err != nil {
					return err
				}
				if e.remote.url != "" {
					return e.retryRemote(ctx, args[0], *from, *choose, *detach, *asJSON) // steerremote.go
				}
				st, run, err := e.findRun(ctx, args[0])
				if err != nil {
					return err
				}
				if run.Status != store.RunFailed && run.Status != store.RunCanceled {
					h := api.ContinueHint(run.ID, "")
					if run.Status == store.RunCompleted {
						h = "A completed run is not run again; start a new run of its workflow with: flowrun apply FILE.hcl --new"
					}
					return usageErrorf("run %s is %s; only a failed or canceled run can be retried", run.ID, run.Status).hint(h)
				}
				prog := e.newProgress()
				eng := e.engine(st, prog.event)
				if *choose != "" {
					// Refused before the redrive writes anything.
					b, err := eng.PlanBinding(ctx, run, "")
					if err != nil {
						return storeError(fmt.Sprintf("checking the version of run %s", run.ID), err)
					}
					if !b.Block {
						return usageErrorf("run %s takes no version decision: it goes on under its version without one", run.ID).
							hint(fmt.Sprintf("Run: flowrun retry %s", run.ID))
					}
				}
				run, err = eng.Retry(ctx, run.ID, *from)
				if err != nil {
					if errors.Is(err, store.ErrNotFound) && *from != "" {
						return usageErrorf("%s", trimSentinel(err)).hint(fmt.Sprintf("See the steps with: flowrun show %s", args[0]))
					}
					return storeError("", err)
				}
				fmt.Fprintf(e.stderr, "flowrun retry: run %s is pending again.\n", run.ID)
				if *choose != "" || e.canPrompt() {
					if run, err = eng.Rebind(ctx, run.ID); err != nil {
						return storeError(fmt.Sprintf("checking the version of run %s", run.ID), err)
					}
					if run.Status == store.RunBlocked {
						if *choose != "" {
							run, err = e.decideOne(ctx, eng, run, interp.Choice(*choose), "cli", run.Version)
						} else {
							run, err = e.resumePrompt(ctx, eng, run)
						}
						if err != nil {
							return err
						}
					}
				}
				if *detach {
					if err := e.detached(ctx, eng, run, *asJSON); err != nil {
						return err
					}
					if e.noLiveWorker(ctx, eng) {
						fmt.Fprintf(e.stderr, "flowrun retry: no live worker is registered (flowrun workers), so nothing will claim run %s until one starts; continue it in the foreground with: flowrun resume %s\n", run.ID, run.ID)
					}
					return nil
				}
				return e.drive(ctx, eng, rootOf(run), *asJSON)
			}
		},
	}
}

// heldBy is the owner whose lease on run id (or on its root run, which a
// foreground apply drives) has not expired, or "" when nobody holds it or
// it cannot be read. Only on a store: a server's workers hold its runs.
func (e *env) heldBy(ctx context.Context, id string) string {
	if e.remote.url != "" || e.opened.st == nil {
		return ""
	}
	now := e.clock.Now()
	for range 2 {
		r, err := e.opened.st.RunGet(ctx, id)
		if err != nil {
			return ""
		}
		if r.Lease.Owner != "" && r.LeaseExpiresAt.After(now) {
			return r.Lease.Owner
		}
		if r.RootRunID == "" || r.RootRunID == id {
			return ""
		}
		id = r.RootRunID
	}
	return ""
}

// noLiveWorker reports whether the store's registry of workers has no live
// worker: a run left to a worker then waits until one starts. A registry
// that cannot be read says nothing (false): the hint is only a hint.
func (e *env) noLiveWorker(ctx context.Context, eng *interp.Engine) bool {
	ws, err := eng.LiveWorkers(ctx)
	return err == nil && len(ws) == 0
}

func cancelCommand() *command {
	return &command{
		name:  "cancel",
		args:  "RUN",
		short: "cancel a run and its child runs",
		long: `Cancel ends a run and its child runs as canceled. A run nobody is working on
ends at once; a run a worker holds is stopped by that worker at its next
heartbeat, with its running action killed. Canceling a run that already ended
is refused (exit 2).
RUN is a run reference: an id or a unique prefix of one, @last,
WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1).`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				if err := oneRunArg("cancel", args, 1, "one RUN"); err != nil {
					return err
				}
				d, err := e.doorFor(ctx, args[0])
				if err != nil {
					return err
				}
				view, err := d.Cancel(ctx, args[0])
				if err != nil {
					return controlError(err)
				}
				if view.Status == store.RunCanceled {
					fmt.Fprintf(e.stdout, "run %s canceled\n", view.RunID)
					if e.remote.url == "" {
						return e.undoKept(ctx, d, view.RunID)
					}
				} else if view.Status != store.RunRunning {
					// Nobody held it, and the store left it unfinished: it
					// runs its compensations (on_cancel) before it ends.
					fmt.Fprintf(e.stdout, "run %s: cancel requested; it runs its compensations first\n", view.RunID)
					if n, err := d.LiveWorkers(ctx); err == nil && n == 0 && e.remote.url == "" {
						err := e.continueHere(ctx, view.RunID)
						if final, gerr := d.Run(ctx, view.RunID); gerr == nil && final.Status == store.RunCanceled {
							return nil // canceled, as asked
						}
						return err
					}
					if e.remote.url != "" {
						fmt.Fprintf(e.stderr, "flowrun cancel: a worker of %s runs the compensations of run %s; follow it with: flowrun logs %s -f --server %s\n", e.remote.url, view.RunID, view.RunID, e.remote.url)
					} else {
						fmt.Fprintf(e.stderr, "flowrun cancel: a worker runs the compensations of run %s, or continue it here with: flowrun resume %s\n", view.RunID, view.RunID)
					}
				} else {
					fmt.Fprintf(e.stdout, "run %s: cancel requested; the worker running it stops it at its next heartbeat\n", view.RunID)
				}
				return nil
			}
		},
	}
}

func signalCommand() *command {
	return &command{
		name:  "signal",
		args:  "RUN NAME [--data JSON] [--resume]",
		short: "deliver a named signal to a run's waiting step",
		long: `Signal delivers the signal NAME to a run, with --data as its JSON payload
(default {}); the wait step waiting for it completes with the payload as its
output. The run continues under a worker, or with flowrun resume; a run
blocked by a new MAJOR version goes on only after a decision (flowrun resume
RUN --choose old|new|migrate). A signal no step of the run waits for is
refused (exit 2). When no live worker will claim the run, signal offers on
a terminal to continue it here in the foreground, as resume does, and
--resume does so without asking (its exit code is then resume's).
RUN is a run reference: an id or a unique prefix of one, @last,
WORKFLOW@last or WORKFLOW/KEY (spec/cli.md §1).`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			data := fs.String("data", "", "the signal's payload, a JSON value such as '{\"approved\": true}'")
			resume := fs.Bool("resume", false, "then continue the run here in the foreground, as resume does, when no live worker will claim it")
			return func(ctx context.Context, args []string) error {
				if err := oneRunArg("signal", args, 2, "RUN and NAME"); err != nil {
					return err
				}
				if *resume && e.remote.url != "" {
					return usageErrorf("--resume does not apply with --server: the server's workers continue the run").
						hint("Leave --resume out, and follow the run with: flowrun logs RUN -f --server URL")
				}
				var payload json.RawMessage
				if *data != "" {
					if off := graph.JSONDepthOver([]byte(*data), graph.MaxValueDepth); off >= 0 {
						return usageErrorf("--data nests deeper than %d levels of lists and objects (column %d)", graph.MaxValueDepth, off+1).
							hint(fmt.Sprintf("Flatten the payload: a value flowrun stores nests at most %d levels.", graph.MaxValueDepth))
					}
					var v any
					if err := interp.DecodeJSONValue([]byte(*data), &v); err != nil {
						col := 0
						var je *interp.JSONError
						if errors.As(err, &je) {
							col = int(je.Offset) + 1
						}
						return usageErrorf("--data is not valid JSON (column %d): %v", col, err).
							hint(`Pass a JSON value, quoted for the shell, such as --data '{"approved": true}'.`)
					}
					payload = json.RawMessage(*data)
				}
				d, err := e.doorFor(ctx, args[0])
				if err != nil {
					return err
				}
				name := args[1]
				view, err := d.Signal(ctx, args[0], name, payload)
				var de *api.SignalDataError
				if errors.As(err, &de) {
					h := fmt.Sprintf("Pass --data with a JSON value of type %s, such as --data '%s'; nothing was delivered.", de.Type, de.Example)
					if *data == "" {
						h = fmt.Sprintf("No --data was given, so the signal carried {}: pass --data with a JSON value of type %s, such as --data '%s'; nothing was delivered.", de.Type, de.Example)
					}
					return usageErrorf("%s", de.Error()).hint(h)
				}
				if err != nil {
					return controlError(err)
				}
				fmt.Fprintf(e.stdout, "signal %s delivered to run %s\n", termtext.Line(name), view.RunID)
				// A blocked run (or one a newer MAJOR blocks as soon as it
				// is picked up) goes on only after a version decision:
				// a plain resume would exit 4.
				blocked := ""
				if view.Status == store.RunBlocked {
					blocked = "is blocked"
				} else if o, err := d.Offer(ctx, view.RunID); err == nil && o.Offer {
					blocked = "is blocked as soon as it goes on"
				}
				if blocked != "" {
					fmt.Fprintf(e.stderr, "flowrun signal: run %s %s: a newer MAJOR version of %q is stored, and a version decision is needed first: flowrun resume %s --choose old|new|migrate%s\n", view.RunID, blocked, view.Workflow, view.RunID, e.serverFlag())
					return nil
				}
				if e.remote.url != "" {
					// resume runs nothing through a server: its workers go on.
					if n, err := d.LiveWorkers(ctx); err == nil && n == 0 {
						fmt.Fprintf(e.stderr, "flowrun signal: %s has no live worker (flowrun workers --server %s), so nothing runs run %s until one starts.\n", e.remote.url, e.remote.url, view.RunID)
						return nil
					}
					fmt.Fprintf(e.stderr, "flowrun signal: a worker of %s goes on with run %s; follow it with: flowrun logs %s -f --server %s\n", e.remote.url, view.RunID, view.RunID, e.remote.url)
					return nil
				}
				if owner := e.heldBy(ctx, view.RunID); owner != "" {
					// A foreground apply or resume (or a worker) holds the
					// run: it takes the signal and goes on.
					fmt.Fprintf(e.stderr, "flowrun signal: run %s is held by %s, which takes the signal and goes on with it\n", view.RunID, owner)
					return nil
				}
				if n, err := d.LiveWorkers(ctx); err == nil && n == 0 {
					if e.remote.url == "" && (*resume || e.canPrompt() && e.confirm(fmt.Sprintf("No live worker will claim run %s. Continue it here now?", view.RunID))) {
						return e.continueHere(ctx, view.RunID)
					}
					fmt.Fprintf(e.stderr, "flowrun signal: no live worker is registered (flowrun workers), so nothing will claim run %s until one starts; continue it in the foreground with: flowrun resume %s (or flowrun signal --resume next time)\n", view.RunID, view.RunID)
					return nil
				}
				if *resume {
					fmt.Fprintf(e.stderr, "flowrun signal: a live worker claims run %s; --resume leaves it to the worker\n", view.RunID)
				}
				fmt.Fprintf(e.stderr, "flowrun signal: the run continues under a worker, or in the foreground with: flowrun resume %s\n", view.RunID)
				return nil
			}
		},
	}
}

// continueHere continues a run in the foreground after a signal, as
// resume does: progress on stderr, the result on stdout, apply's exit
// codes.
func (e *env) continueHere(ctx context.Context, ref string) error {
	st, run, err := e.findRun(ctx, ref)
	if err != nil {
		return err
	}
	prog := e.newProgress()
	eng := e.engine(st, prog.event)
	if run, err = eng.Rebind(ctx, run.ID); err != nil {
		return storeError(fmt.Sprintf("checking the version of run %s", run.ID), err)
	}
	if run.Status == store.RunBlocked {
		return exitForStatus(run, "")
	}
	return e.drive(ctx, eng, rootOf(run), false)
}

// undoKept carries out the rest of a cancel of rootID that ended it: its
// child runs left to a runner, which first run their compensations
// (on_cancel, or a saga under way), run here when no live worker will.
func (e *env) undoKept(ctx context.Context, d api.Service, rootID string) error {
	st, run, err := e.findRun(ctx, rootID)
	if err != nil {
		return err
	}
	eng := e.engine(st, nil)
	kept, err := eng.Canceling(ctx, run.ID)
	if err != nil {
		return storeError("reading the child runs of run "+run.ID, err)
	}
	if len(kept) == 0 {
		return nil
	}
	for _, k := range kept {
		fmt.Fprintf(e.stdout, "child run %s (%s): cancel requested; it runs its compensations first\n", k.ID, k.Workflow)
	}
	if n, err := d.LiveWorkers(ctx); err != nil || n > 0 {
		fmt.Fprintf(e.stderr, "flowrun cancel: a worker runs the compensations of the child runs of run %s; follow them with: flowrun runs --status pending\n", run.ID)
		return nil
	}
	prog := e.newProgress()
	if err := e.drive(ctx, e.engine(st, prog.event), run.ID, false); err != nil {
		if final, gerr := d.Run(ctx, run.ID); gerr != nil || final.Status != store.RunCanceled {
			return err
		}
	}
	left, err := eng.Canceling(ctx, run.ID)
	if err != nil {
		return storeError("reading the child runs of run "+run.ID, err)
	}
	for _, k := range left {
		fmt.Fprintf(e.stderr, "flowrun cancel: child run %s is still %s; continue it with: flowrun resume %s\n", k.ID, k.Status, k.ID)
	}
	if len(left) > 0 {
		return exitCode(ExitParked)
	}
	return nil
}

// confirm asks a yes/no question on the terminal; anything but y or yes
// is no.
func (e *env) confirm(question string) bool {
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(io.LimitReader(e.stdin, 64)).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

// controlError words a refusal of a run's state (api.Refusal: exit 2 with
// how to go on); other errors as the store's.
func controlError(err error) error {
	var rf *api.Refusal
	var re *interp.RunRefError
	if errors.As(err, &re) {
		return refError(err)
	}
	if errors.As(err, &rf) {
		x := usageErrorf("%s", rf.Message)
		if rf.Hint != "" {
			x = x.doorHint(rf.Hint)
		}
		return x
	}
	return storeError("", err)
}

// rootOf is the run that Drive works on for a run: the top of its parent
// chain, so its parent progresses too.
func rootOf(run store.Run) string {
	if run.RootRunID != "" {
		return run.RootRunID
	}
	return run.ID
}

// trimSentinel drops the sentinel error's text that %w appended to a
// message ("...: conflict"), which says nothing to a person.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{store.ErrConflict, store.ErrNotFound} {
		msg = strings.TrimSuffix(msg, ": "+s.Error())
	}
	return msg
}
