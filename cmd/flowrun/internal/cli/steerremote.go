package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/tui/decide"
)

// The steering verbs through a server (--server): the server's workers
// run the runs, so resume and retry leave the run to them and return, as
// --detach does (spec/cli.md §9).

// resumeRemote is resume --server: a version decision taken through the
// API, given with --choose or, on a terminal, asked with the diff of the
// server's plan as resume asks locally. Without a decision to take there
// is nothing to do here, since the server's workers continue unfinished
// runs by themselves.
func (e *env) resumeRemote(ctx context.Context, ref, choose string, asJSON bool) error {
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
		return decideError(err)
	}
	e.sayDecided(dec)
	return e.leftToServer(dec.Run, asJSON)
}

// retryRemote is retry --server: the redrive through the API.
func (e *env) retryRemote(ctx context.Context, ref, from, choose string, asJSON bool) error {
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
		return controlError(err)
	}
	fmt.Fprintf(e.stderr, "flowrun retry: run %s is pending again.\n", view.RunID)
	return e.leftToServer(view, asJSON)
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

// decideError words a refused decision: decided by someone else first
// (exit 6), or one the run's state does not allow (exit 2).
func decideError(err error) error {
	var de *interp.DecidedError
	if errors.As(err, &de) {
		return decidedError(de)
	}
	return controlError(err)
}
