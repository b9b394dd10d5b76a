package cli

// Version decisions from the command line: `resume RUN --choose`, and
// apply's --on-major and terminal prompt for the blocked runs it meets.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/decide"
)

// checkChoice checks a --choose or --on-major value before the store is
// opened; fail is accepted only for --on-major.
func checkChoice(flagName, v string, allowFail bool) error {
	if v == "" || (allowFail && v == "fail") {
		return nil
	}
	if _, err := interp.ParseChoice(v); err != nil {
		opts := "old, new or migrate"
		if allowFail {
			opts = "old, new, migrate or fail"
		}
		return usageErrorf("--%s %q is not a version decision", flagName, v).
			hint(fmt.Sprintf("Pass --%s with one of %s.", flagName, opts))
	}
	return nil
}

// decidedBy names who decides, for the version_decided event.
func (e *env) decidedBy(how string) string {
	if u := e.getenv("USER"); u != "" {
		return how + " (user " + u + ")"
	}
	return how
}

// resumeChoose carries out `resume RUN --choose C`: the run is checked
// against the stored versions first (a parked run is blocked now if a new
// MAJOR is stored), must be blocked, and is then decided and run (or left
// to a worker with --detach).
func (e *env) resumeChoose(ctx context.Context, eng *interp.Engine, run store.Run, choice string, detach, asJSON bool) error {
	run, err := eng.Rebind(ctx, run.ID)
	if err != nil {
		return storeError(fmt.Sprintf("checking the version of run %s", run.ID), err)
	}
	if run.Status != store.RunBlocked {
		if err := alreadyDecided(ctx, eng, run); err != nil {
			return err
		}
		o, err := eng.OfferDecision(ctx, run)
		if err != nil {
			return storeError(fmt.Sprintf("checking the version of run %s", run.ID), err)
		}
		why := o.Reason
		if why == "" {
			why = fmt.Sprintf("run %s is %s and cannot be blocked now", run.ID, run.Status)
		}
		return usageErrorf("run %s is %s and takes no version decision: %s", run.ID, run.Status, why).
			hint(api.ContinueHint(run.ID, ""))
	}
	next, err := e.decideOne(ctx, eng, run, interp.Choice(choice), "cli", run.Version)
	if err != nil {
		return err
	}
	if detach {
		return e.detached(ctx, eng, next, asJSON)
	}
	return e.drive(ctx, eng, rootOf(next), asJSON)
}

// alreadyDecided returns the exit 6 of a --choose on a run that is not
// blocked because a decision was taken on it since it was blocked; nil when
// there was none.
func alreadyDecided(ctx context.Context, eng *interp.Engine, run store.Run) error {
	d, err := eng.LastDecision(ctx, run.ID, "")
	if err != nil {
		return storeError(fmt.Sprintf("reading the history of run %s", run.ID), err)
	}
	if d != nil {
		return decidedError(d, "")
	}
	return nil
}

// decidedError is the exit of a decision that came too late: the run was
// decided already, by someone else or at the same moment (exit 6). server
// is the URL of --server, "" on the store: through a server the hint
// names it, and follows the replacing run with logs -f (the server's
// workers run it; resume would run nothing).
func decidedError(d *interp.DecidedError, server string) *exitError {
	h := fmt.Sprintf("See the decision with: flowrun logs %s", d.RunID)
	switch {
	case d.NewRunID != "" && server != "":
		h = fmt.Sprintf("Follow the run that replaced it with: flowrun logs %s -f --server %s", d.NewRunID, server)
	case d.NewRunID != "":
		h = fmt.Sprintf("Follow the run that replaced it with: flowrun resume %s", d.NewRunID)
	case server != "":
		h += " --server " + server
	}
	return (&exitError{code: ExitConflict, msg: d.Error()}).hint(h)
}

// decideOne carries out one decision and says what it did on stderr; from
// is the version the run was bound to when it was looked at. A run decided
// by someone else meanwhile is a conflict (exit 6); another refused
// decision is bad input (exit 2). Nothing was written then.
func (e *env) decideOne(ctx context.Context, eng *interp.Engine, run store.Run, c interp.Choice, how, from string) (store.Run, error) {
	d, err := eng.Decide(ctx, interp.DecideParams{RunID: run.ID, Choice: c, By: e.decidedBy(how), From: from})
	var de *interp.DecidedError
	if errors.As(err, &de) {
		return run, decidedError(de, "")
	}
	if errors.Is(err, store.ErrConflict) {
		hint := fmt.Sprintf("See the changes with: flowrun plan FILE, or: flowrun diff %s@%s %s@NEWEST", run.Workflow, run.Version, run.Workflow)
		if d.Plan != nil {
			hint = fmt.Sprintf("See the changes with: flowrun diff %s@%s %s@%s", run.Workflow, d.Plan.From, run.Workflow, d.Plan.To)
		}
		return run, usageErrorf("%s", trimSentinel(err)).hint(hint)
	}
	if err != nil {
		return run, storeError(fmt.Sprintf("deciding run %s", run.ID), err)
	}
	switch c {
	case interp.ChoiceNew:
		fmt.Fprintf(e.stderr, "flowrun %s: run %s decided new: it is canceled, and run %s of version %s starts with the same inputs.\n",
			e.verb, run.ID, d.Run.ID, d.Plan.To)
	case interp.ChoiceMigrate:
		fmt.Fprintf(e.stderr, "flowrun %s: run %s decided migrate: it moves to version %s; kept: %s; re-run: %s.\n",
			e.verb, run.ID, d.Plan.To, orNone(d.Plan.Keep), orNone(d.Plan.Rerun))
	default:
		fmt.Fprintf(e.stderr, "flowrun %s: run %s decided old: it resumes on version %s.\n", e.verb, run.ID, d.Plan.From)
	}
	return d.Run, nil
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// applyDecide decides the blocked runs of the workflow that apply meets:
// the run it works on first, then the other blocked runs of the same
// workflow. With --on-major the choice is taken for each; on a terminal
// each is asked with the decision screen; otherwise apply exits 4 saying
// which command decides. It returns the run to continue with.
func (e *env) applyDecide(ctx context.Context, eng *interp.Engine, run store.Run, onMajor string) (store.Run, error) {
	blocked, err := eng.BlockedRuns(ctx, run)
	if err != nil {
		return run, storeError("", err)
	}
	prompt := onMajor == "" && e.canPrompt()
	if onMajor == "fail" || (onMajor == "" && !prompt) {
		return run, e.blockedError(ctx, eng, blocked)
	}
	next := run
	for i, b := range blocked {
		if b.Status != store.RunBlocked {
			// Parked on an older MAJOR: blocked now, as a claim would,
			// just before it is decided (versioning §5).
			r, err := eng.Rebind(ctx, b.ID)
			if err != nil {
				return run, storeError(fmt.Sprintf("checking the version of run %s", b.ID), err)
			}
			if r.Status != store.RunBlocked {
				fmt.Fprintf(e.stderr, "flowrun apply: run %s was not decided: it is %s now and no longer waits for a decision.\n", b.ID, r.Status)
				continue
			}
			b = r
		}
		choice := interp.Choice(onMajor)
		how, from := "apply --on-major", b.Version
		if prompt {
			how = "apply prompt"
			plan, err := eng.PlanDecision(ctx, b.ID)
			if err != nil {
				return run, storeError("planning the decision for run "+b.ID, err)
			}
			if i == 0 && len(blocked) > 1 {
				fmt.Fprintf(e.stderr, "flowrun apply: %s of workflow %q are blocked by version %s; each is asked in turn.\n",
					plural(len(blocked), "run", "runs"), run.Workflow, plan.To)
			}
			c, err := decide.Prompt(ctx, plan, e.stdin, e.stderr, e.getenv("NO_COLOR") != "")
			if errors.Is(err, decide.ErrNoDecision) {
				if i == 0 {
					return run, (&exitError{code: ExitDecision, msg: fmt.Sprintf("run %s stays blocked: no decision was made", run.ID)}).
						hint(fmt.Sprintf("Decide later with: flowrun resume %s --choose old|new|migrate", run.ID))
				}
				fmt.Fprintf(e.stderr, "flowrun apply: run %s stays blocked: no decision was made.\n", b.ID)
				continue
			}
			if err != nil {
				return run, &exitError{code: ExitDecision, msg: "the decision prompt stopped", err: err}
			}
			choice, from = c, plan.From
		}
		r, err := e.decideOne(ctx, eng, b, choice, how, from)
		if err != nil {
			if i == 0 {
				return run, err
			}
			var xe *exitError
			if errors.As(err, &xe) && xe.code == ExitConflict {
				fmt.Fprintf(e.stderr, "flowrun apply: %s\n", termtext.Line(err.Error()))
			} else {
				fmt.Fprintf(e.stderr, "flowrun apply: run %s stays blocked: %s\n", b.ID, termtext.Line(err.Error()))
			}
			continue
		}
		if i == 0 {
			next = r
		}
	}
	return next, nil
}

// blockedError is apply's exit 4: the blocked runs, the changes and the
// commands that decide.
func (e *env) blockedError(ctx context.Context, eng *interp.Engine, blocked []store.Run) error {
	run := blocked[0]
	plan, err := eng.PlanDecision(ctx, run.ID)
	if err != nil {
		return storeError("planning the decision for run "+run.ID, err)
	}
	fmt.Fprintf(e.stderr, "flowrun %s: run %s is bound to version %s; version %s %s:\n",
		e.verb, run.ID, plan.From, plan.To, plan.Differs())
	for _, c := range plan.Changes {
		fmt.Fprintf(e.stderr, "  %s\n", termtext.Line(c.String()))
	}
	if plan.MigrateErr != nil {
		fmt.Fprintf(e.stderr, "  migrate cannot work: %s\n", termtext.Line(plan.MigrateErr.Error()))
	} else {
		fmt.Fprintf(e.stderr, "  migrate would keep: %s; re-run: %s\n", orNone(plan.Keep), orNone(plan.Rerun))
	}
	for _, o := range blocked[1:] {
		if o.Status == store.RunBlocked {
			fmt.Fprintf(e.stderr, "flowrun %s: run %s (version %s) is blocked too.\n", e.verb, o.ID, o.Version)
		} else {
			fmt.Fprintf(e.stderr, "flowrun %s: run %s (version %s, %s) needs a decision too: it is blocked when it goes on.\n", e.verb, o.ID, o.Version, o.Status)
		}
	}
	return (&exitError{code: ExitDecision,
		msg: fmt.Sprintf("run %s is blocked: a new MAJOR version of %q is stored and a decision is needed", run.ID, run.Workflow)}).
		hint(fmt.Sprintf("Decide with: flowrun resume %s --choose old|new|migrate, or apply again with --on-major=old|new|migrate.", run.ID))
}

// canPrompt reports whether a version decision can be asked: stdin and
// stderr are a terminal.
func (e *env) canPrompt() bool {
	return isTerminalReader(e.stdin) && isTerminal(e.stderr)
}

// resumePrompt asks on the terminal for the decision of a blocked run that
// `resume RUN` found, as apply's prompt does, and carries it out. Closing
// the screen leaves the run blocked (exit 4).
func (e *env) resumePrompt(ctx context.Context, eng *interp.Engine, run store.Run) (store.Run, error) {
	plan, err := eng.PlanDecision(ctx, run.ID)
	if err != nil {
		return run, storeError("planning the decision for run "+run.ID, err)
	}
	c, err := decide.Prompt(ctx, plan, e.stdin, e.stderr, e.getenv("NO_COLOR") != "")
	if errors.Is(err, decide.ErrNoDecision) {
		return run, (&exitError{code: ExitDecision, msg: fmt.Sprintf("run %s stays blocked: no decision was made", run.ID)}).
			hint(fmt.Sprintf("Decide later with: flowrun resume %s --choose old|new|migrate", run.ID))
	}
	if err != nil {
		return run, &exitError{code: ExitDecision, msg: "the decision prompt stopped", err: err}
	}
	return e.decideOne(ctx, eng, run, c, "resume prompt", plan.From)
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// runApplied runs what apply found or started: a run found unfinished is
// checked against the stored versions first (moved or blocked now), a
// blocked run is decided (applyDecide), then the run is driven, or left to
// a worker with --detach.
func (e *env) runApplied(ctx context.Context, eng *interp.Engine, run store.Run, created bool, o *applyOptions) error {
	var err error
	if !created {
		if run, err = eng.Rebind(ctx, run.ID); err != nil {
			return storeError(fmt.Sprintf("checking the version of run %s", run.ID), err)
		}
	}
	for decided := false; ; decided = true {
		if run.Status == store.RunBlocked {
			if run, err = e.applyDecide(ctx, eng, run, o.onMajor); err != nil {
				return err
			}
		}
		if o.detach {
			return e.detached(ctx, eng, run, o.json)
		}
		err = e.drive(ctx, eng, rootOf(run), o.json)
		var xe *exitError
		if decided || !errors.As(err, &xe) || xe.code != ExitDecision {
			return err
		}
		// Blocked while driving (a worker held it when apply looked): decide now.
		if run, err = eng.Store().RunGet(ctx, run.ID); err != nil {
			return storeError("reading run "+run.ID, err)
		}
		if run.Status != store.RunBlocked {
			return xe
		}
	}
}
