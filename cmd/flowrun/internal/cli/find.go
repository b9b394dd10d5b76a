package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// refForms is the hint's list of the forms of a run reference.
const refForms = "a unique id prefix, @last, WORKFLOW@last or WORKFLOW/KEY"

// findRun opens the store without creating it and resolves a run
// reference (interp.Engine.ResolveRun: an id or unique prefix, @last,
// WORKFLOW@last, WORKFLOW/KEY). A reference that names no run, or several,
// is bad input (exit 2) and the message lists the candidates.
func (e *env) findRun(ctx context.Context, ref string) (store.Store, store.Run, error) {
	parsed, err := interp.ParseRunRef(ref)
	if err != nil {
		return nil, store.Run{}, refError(err)
	}
	st, err := e.openStore(ctx, false)
	if errors.Is(err, errNoDatabase) {
		what := fmt.Sprintf("no run matches %q", ref)
		if parsed.Kind == interp.RefID {
			what = fmt.Sprintf("no run has an id starting with %q", ref)
		}
		return nil, store.Run{}, e.noDatabase(what)
	}
	if err != nil {
		return nil, store.Run{}, err
	}
	run, err := e.engine(st, nil).ResolveRun(ctx, ref)
	if err != nil {
		return nil, store.Run{}, refError(err)
	}
	return st, run, nil
}

// doorFor opens the verb's door to act on the run ref names: the store
// without creating it (a missing one is refused, naming ref, as findRun
// does) or the server. A reference that is no reference is refused before
// anything is opened.
func (e *env) doorFor(ctx context.Context, ref string) (api.Service, error) {
	parsed, err := interp.ParseRunRef(ref)
	if err != nil {
		return nil, refError(err)
	}
	d, err := e.door(ctx)
	if errors.Is(err, errNoDatabase) {
		what := fmt.Sprintf("no run matches %q", ref)
		if parsed.Kind == interp.RefID {
			what = fmt.Sprintf("no run has an id starting with %q", ref)
		}
		return nil, e.noDatabase(what)
	}
	return d, err
}

// viewRun opens the verb's door (the store without creating it, or the
// server) and reads the view of the run a reference names, with the
// refusals of findRun.
func (e *env) viewRun(ctx context.Context, ref string) (api.Service, *interp.RunView, error) {
	d, err := e.doorFor(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	v, err := d.Run(ctx, ref)
	var re *interp.RunRefError
	if errors.As(err, &re) {
		return nil, nil, refError(err)
	}
	if err != nil {
		return nil, nil, storeError("reading run "+ref, err)
	}
	return d, v, nil
}

// refError words an error of ResolveRun for people: the message, the
// candidates one per line, and how to name the run instead.
func refError(err error) error {
	var re *interp.RunRefError
	if !errors.As(err, &re) {
		return storeError("finding the run", err)
	}
	x := usageErrorf("%s", re.Message)
	switch {
	case re.Problem == interp.RefInvalid:
		return x.doorHint("Name a run as " + refForms + "; list the runs with: flowrun runs")
	case re.Problem == interp.RefAmbiguous:
		x.msg += "; it matches:"
		x.lines = refCandidates(re.Candidates, re.More)
		return x.doorHint("Give more characters of the id; list the runs with: flowrun runs")
	case len(re.Workflows) == 1 && re.Workflows[0] == re.Ref:
		return x.doorHint(fmt.Sprintf("%q is a workflow: name its newest run as %s@last, or one of its runs as %s/KEY.", re.Ref, re.Ref, re.Ref))
	case len(re.Workflows) > 0:
		x.msg += "; the nearest stored workflows are " + strings.Join(quoteAll(re.Workflows), ", ")
		return x.doorHint("List the runs with: flowrun runs")
	case len(re.Candidates) > 0:
		x.msg += "; the nearest runs are:"
		x.lines = refCandidates(re.Candidates, false)
	}
	return x.doorHint("Name a run as " + refForms + "; list the runs with: flowrun runs")
}

// refCandidates is one line per candidate run: its id, workflow, version,
// key and status, the columns of `flowrun runs`.
func refCandidates(rs []store.RunSummary, more bool) []string {
	tw := &strings.Builder{}
	t := newTable(tw)
	for _, r := range rs {
		key := r.Key
		if key == "" {
			key = "-"
		}
		row(t, r.ID, r.Workflow, r.Version, key, string(r.Status), formatTime(r.CreatedAt))
	}
	t.Flush()
	lines := strings.Split(strings.TrimRight(tw.String(), "\n"), "\n")
	if more {
		lines = append(lines, fmt.Sprintf("... and more (%d listed)", len(rs)))
	}
	return lines
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// oneRunArg checks that a verb got exactly the RUN argument (and extra
// positional arguments when want > 1).
func oneRunArg(verb string, args []string, want int, usage string) error {
	if len(args) != want {
		return usageErrorf("%s takes %s, got %s", verb, usage, plural(len(args), "argument", "arguments")).
			hint(fmt.Sprintf("Run `flowrun %s -h` for its usage.", verb))
	}
	return nil
}
