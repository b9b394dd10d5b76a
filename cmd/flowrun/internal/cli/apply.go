package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/hashicorp/hcl/v2"
)

func applyCommand() *command {
	return &command{
		name:  "apply",
		args:  "PATH... [--input NAME=VALUE]... [--inputs FILE.json] [--workflow NAME] [--new] [--on-major old|new|migrate|fail] [--detach] [--no-tui] [--json]",
		short: "store a workflow's version and run it to the end",
		long: `Apply validates and compiles the workflow files (and every *.hcl file of each
directory), stores each workflow's version, and runs the chosen workflow: the
only one, or the one --workflow names. A run with the same key that has not
finished is resumed instead of starting another; one that completed is not run
again (--new always starts a new run). Progress goes to stderr: on a
terminal a live view (a spinner, the active steps with their retry and timer
countdowns and the error behind each retry, a foreach's items done over all
its items, a progress bar), otherwise or with --no-tui one plain line per
event; NO_COLOR turns colour off. The result goes to stdout, as JSON with
--json.

A run blocked by a new MAJOR version is decided before it goes on: on a
terminal apply asks, with the changes and what a migration keeps; scripts
pass --on-major (fail exits 4 without deciding).

Exit codes: 0 completed or detached, 1 failed or canceled, 2 bad workflow or
input (nothing is written), 3 parked (waiting on a timer or signal) or
interrupted with Ctrl-C, 4 a version decision is needed, 5 store error,
6 the blocked run was decided by someone else first.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var o applyOptions
			fs.Var(&o.pairs, "input", "an input as NAME=VALUE, converted by its declared type (repeatable)")
			fs.StringVar(&o.inputsFile, "inputs", "", "a JSON file holding an object of inputs; --input values win")
			fs.StringVar(&o.workflow, "workflow", "", "the workflow to run when the files define several")
			fs.BoolVar(&o.newRun, "new", false, "start a new run even if one with the same key exists")
			fs.BoolVar(&o.detach, "detach", false, "store and enqueue the run, print its id and exit; a worker runs it")
			fs.BoolVar(&o.json, "json", false, "print the run as one JSON object (as show --json)")
			fs.BoolVar(&o.run, "run", false, "a workflow with schedules or webhooks: also start a run now (apply alone only stores it and activates its schedules)")
			e.noTUIFlag(fs)
			e.maxFileSizeFlag(fs)
			fs.StringVar(&o.onMajor, "on-major", "", "decide runs blocked by a new MAJOR version: old, new, migrate, or fail (exit 4)")
			execUser := e.execUserFlag(fs)
			return func(ctx context.Context, args []string) error {
				if err := execUser(); err != nil {
					return err
				}
				return e.apply(ctx, args, &o)
			}
		},
	}
}

type applyOptions struct {
	pairs      multiFlag
	inputsFile string
	workflow   string
	newRun     bool
	detach     bool
	json       bool
	onMajor    string
	run        bool // start a run of a scheduled or webhook workflow too (schedules.go)
}

func (e *env) apply(ctx context.Context, paths []string, o *applyOptions) error {
	// Everything the user gave is checked before the store is opened.
	if err := checkChoice("on-major", o.onMajor, true); err != nil {
		return err
	}
	mod, err := e.load(ctx, paths)
	if err != nil {
		return err
	}
	w, err := e.pickWorkflow(mod, o.workflow)
	if err != nil {
		return err
	}
	if (len(w.Graph.Schedules) > 0 || len(w.Graph.Webhooks) > 0) && !o.run {
		return e.applySchedules(ctx, mod, o) // webhooks.go: and webhooks
	}
	inputs, err := readInputs(ctx, w.Graph, o.pairs, o.inputsFile, e.inputsFileLimit())
	if err != nil {
		return err
	}
	// The run key too: a key expression that fails on these inputs is the
	// user's mistake, found before anything is written.
	if err := interp.CheckStart(ctx, w.Graph, inputs); err != nil {
		return startError(w.Name, err)
	}
	if !o.detach {
		if err := checkSecretLengths(w.Graph, e.getenv); err != nil {
			return err
		}
	}

	e.announceNewStore()
	st, err := e.openStore(ctx, true)
	if err != nil {
		return err
	}
	prog := &progress{w: e.stderr, quiet: e.display.quiet}
	eng := e.engine(st, prog.event)
	if err := e.storeVersions(ctx, eng, mod); err != nil {
		return err
	}
	if err := e.activateSchedules(ctx, eng, mod); err != nil {
		return err
	}
	// Relative exec paths resolve against the workflow file's directory
	// (language.md §8.3), recorded on the run.
	workDir, err := filepath.Abs(filepath.Dir(w.File))
	if err != nil {
		return fmt.Errorf("find the directory of %s: %w", w.File, err)
	}
	run, created, err := eng.StartRun(ctx, interp.StartParams{
		Workflow: w.Name,
		Version:  w.Graph.Version,
		Inputs:   inputs,
		New:      o.newRun,
		WorkDir:  workDir,
	})
	if err != nil {
		return startError(w.Name, err)
	}
	switch {
	case !created && run.Status == store.RunCompleted:
		fmt.Fprintf(e.stderr, "flowrun apply: run %s with key %q already completed (on version %s); it was not run again. Pass --new to start another run.\n", run.ID, run.Key, run.Version)
		return e.finish(ctx, eng, run.ID, o.json)
	case !created:
		fmt.Fprintf(e.stderr, "flowrun apply: resuming run %s with key %q (%s).\n", run.ID, run.Key, run.Status)
	}
	return e.runApplied(ctx, eng, run, created, o)
}

// engine returns the interpreter over st: one per command, so that every
// stored graph the command reads or stores goes through the engine's one
// cache. onEvent, when not nil, receives the progress from then on.
func (e *env) engine(st store.Store, onEvent func(store.Event)) *interp.Engine {
	if onEvent != nil {
		e.onEvent.Store(&onEvent)
	}
	if e.eng == nil || e.engStore != st {
		opts := interp.Options{
			Clock:    e.clock,
			Getenv:   e.getenv,
			OnEvent:  e.display.gate(e.progress),
			ExecUser: e.execUser,
		}
		if tr := e.commandTracer(); tr != nil {
			opts.Observer, opts.Traceparent, opts.TraceSampled = tr, true, tr.Sampled
		}
		e.eng = interp.New(st, opts)
		e.engStore = st
	}
	return e.eng
}

// progress hands an event of the engine to the command's progress hook.
func (e *env) progress(ev store.Event) {
	if f := e.onEvent.Load(); f != nil {
		(*f)(ev)
	}
}

// storeVersions stores every workflow of the module, so children resolve,
// after checking each one's version promise against the stored versions
// (interp.Engine.CheckVersion), with the directory of its file. Every
// workflow is checked before any is stored, so a refused apply writes
// nothing.
func (e *env) storeVersions(ctx context.Context, eng *interp.Engine, mod *lang.Module) error {
	var blocks [][]interp.RunPlan
	var checks []interp.VersionCheck
	for _, w := range mod.Workflows {
		c, err := e.checkVersion(ctx, eng, mod, w)
		if err != nil {
			return err
		}
		checks = append(checks, c)
		var b []interp.RunPlan
		if c.NewMajor {
			if b, err = e.willBlock(ctx, eng, w.Name, w.Graph.Version); err != nil {
				return err
			}
		}
		blocks = append(blocks, b)
	}
	for i, w := range mod.Workflows {
		e.sayWillBlock(w.Name, w.Graph.Version, blocks[i])
		// The file's directory is recorded with the version: runs started
		// through the API or a webhook execute there (spec/api.md).
		dir, err := filepath.Abs(filepath.Dir(w.File))
		if err != nil {
			return fmt.Errorf("find the directory of %s: %w", w.File, err)
		}
		v, err := eng.StoreGraphAt(ctx, w.Graph, dir)
		if err != nil {
			var inUse *store.VersionInUseError
			if errors.As(err, &inUse) { // a run started since the check
				return versionInUseError(w, checks[i].Against, graph.RequiredBump(checks[i].Changes), inUse)
			}
			if errors.Is(err, store.ErrVersionConflict) {
				return usageErrorf("workflow %q version %s was stored with a different graph by another process", w.Name, w.Graph.Version).
					hint("Raise the version in " + w.File + " and apply again.")
			}
			return storeError("", err) // it names the workflow and version
		}
		if checks[i].Replace {
			fmt.Fprintf(e.stderr, "flowrun %s: workflow %q version %s replaced in place as revision %d (a development version, MAJOR 0); runs of revision %d keep their graph\n",
				e.verb, w.Name, v.Version, v.Revision, checks[i].Against.Revision)
		}
	}
	return nil
}

// willBlock lists the unfinished runs of workflow that storing version
// blocks for a version decision (a new MAJOR), as plan shows them.
func (e *env) willBlock(ctx context.Context, eng *interp.Engine, workflow, version string) ([]interp.RunPlan, error) {
	plans, err := eng.PlanRuns(ctx, interp.PlanRunsParams{Workflow: workflow, Version: version})
	if err != nil {
		return nil, storeError("", err)
	}
	var out []interp.RunPlan
	for _, p := range plans {
		if p.Binding.Block {
			out = append(out, p)
		}
	}
	return out, nil
}

// sayWillBlock tells, on stderr, which unfinished runs storing version of
// workflow blocks, and how each is decided.
func (e *env) sayWillBlock(workflow, version string, runs []interp.RunPlan) {
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(e.stderr, "flowrun %s: version %s of %q is a new MAJOR version; %s bound to an older MAJOR %s blocked until decided:\n",
		e.verb, version, workflow, plural(len(runs), "unfinished run", "unfinished runs"), pluralWord(len(runs), "is", "are"))
	for _, p := range runs {
		fmt.Fprintf(e.stderr, "  run %s (version %s, %s): flowrun resume %s --choose old|new|migrate\n", p.Run.ID, p.Run.Version, p.Run.Status, p.Run.ID)
	}
}

// checkVersion checks one workflow of mod against what is stored. A
// refused version is printed as a diagnostic on the workflow's version
// attribute (file:line:col, the source line, the changes and the version
// to set), like a compile error, and returned as the exit-2 error.
func (e *env) checkVersion(ctx context.Context, eng *interp.Engine, mod *lang.Module, w *lang.Workflow) (interp.VersionCheck, error) {
	c, err := eng.CheckVersion(ctx, interp.CheckVersionParams{Graph: w.Graph})
	if err != nil {
		return c, storedGraphError(err)
	}
	var be *graph.BumpError
	if errors.As(c.Refused, &be) {
		d := w.BumpDiagnostic(be)
		if werr := e.writeDiags(mod.Files, hcl.Diagnostics{d}); werr != nil {
			return c, fmt.Errorf("writing diagnostics: %w", werr)
		}
		at := w.File
		if d.Subject != nil {
			at = fmt.Sprintf("%s:%d:%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		return c, usageErrorf("%s: workflow %q version %s refused: %s", at, w.Name, w.Graph.Version, bumpReason(be)).
			hint(fmt.Sprintf("Set version = %q in %s (or check the changes with: flowrun diff %s@%s %s), then apply again.",
				be.Suggested().String(), w.File, c.Against.Workflow, c.Against.Version, w.File))
	}
	var inUse *store.VersionInUseError
	if errors.As(c.Refused, &inUse) {
		return c, versionInUseError(w, c.Against, graph.RequiredBump(c.Changes), inUse)
	}
	if c.Refused != nil {
		return c, usageErrorf("%s: %v", w.File, c.Refused).hint("Fix the workflow's version and apply again.")
	}
	return c, nil
}

// versionInUseError refuses to replace development version v of w while
// unfinished runs are bound to it (spec/versioning.md §8); need is the
// bump the changes from v's current revision need, for the version to
// suggest instead.
func versionInUseError(w *lang.Workflow, v store.Version, need graph.Bump, in *store.VersionInUseError) error {
	others := ""
	if in.Runs > 1 {
		others = fmt.Sprintf(" (and %s)", plural(in.Runs-1, "other unfinished run", "other unfinished runs"))
	}
	next := graph.SemVer{Major: v.Major, Minor: v.Minor, Patch: v.Patch}.Next(max(need, graph.BumpPatch))
	return usageErrorf("%s: workflow %q version %s is stored with another graph and cannot be replaced: run %s%s is bound to it and is still %s",
		w.File, w.Name, v.Version, in.Run, others, in.Status).
		hint(fmt.Sprintf("A development version is replaced only when no unfinished run is bound to it. Let the run finish or cancel it (flowrun cancel %s), then apply again; or set version = %q in %s to store a new version beside it.",
			in.Run, next.String(), w.File))
}

// storedGraphError is the exit error of a failure to read a stored
// version: a graph that cannot be read is exit 5 naming the version.
func storedGraphError(err error) error {
	var ge *interp.GraphError
	if errors.As(err, &ge) {
		return &exitError{code: ExitStore, msg: fmt.Sprintf("the stored graph of workflow %q version %s is damaged", ge.Workflow, ge.Version), err: ge.Err}
	}
	return storeError("", err)
}

// bumpReason says in a few words which version rule be broke, for the
// line that ends a refusal (its diagnostic says the rest).
func bumpReason(be *graph.BumpError) string {
	switch be.Reason {
	case graph.BumpLower:
		return fmt.Sprintf("lower than the stored version %s", be.Old)
	case graph.BumpSameVersion:
		return "already stored with a different graph"
	}
	return fmt.Sprintf("it declares a %s change from %s, but the changes need %s", be.Declared, be.Old, be.Required)
}

// startError classifies an error of StartRun.
func startError(workflow string, err error) error {
	var ie *interp.InputError
	if errors.As(err, &ie) {
		return usageErrorf("%s", ie.Error()).hint("Fix the --input or --inputs values and apply again; nothing was run.")
	}
	var ke *interp.KeyError
	if errors.As(err, &ke) {
		return usageErrorf("%s", ke.Error()).hint("Fix the inputs or the workflow's key expression and apply again; nothing was run.")
	}
	var ku *interp.KeyInUseError
	if errors.As(err, &ku) {
		return usageErrorf("%s", ku.Error()).hint(fmt.Sprintf(
			"Resume it as it is with: flowrun resume %s; or cancel it (flowrun cancel %s), or pass --new to start another run with these inputs.", ku.Run, ku.Run))
	}
	return storeError(fmt.Sprintf("starting a run of workflow %q", workflow), err)
}

// detached reports an enqueued run: its id on stdout (or the JSON view),
// how to follow it on stderr.
func (e *env) detached(ctx context.Context, eng *interp.Engine, run store.Run, asJSON bool) error {
	if asJSON {
		return e.printView(ctx, eng, run.ID, true)
	}
	fmt.Fprintln(e.stdout, run.ID)
	fmt.Fprintf(e.stderr, "flowrun %s: run %s is enqueued; a worker (flowrun worker) runs it. Follow it with: flowrun logs %s -f\n",
		e.verb, run.ID, run.ID)
	return nil
}

// finish prints a run's result and returns the exit code its status calls
// for.
func (e *env) finish(ctx context.Context, eng *interp.Engine, runID string, asJSON bool) error {
	run, err := eng.Store().RunGet(ctx, runID)
	if err != nil {
		return storeError("reading run "+runID, err)
	}
	if e.display.quiet && !asJSON {
		fmt.Fprintf(e.stdout, "%s %s\n", run.ID, run.Status)
		return e.withSignalHint(ctx, eng, run, exitForStatus(run))
	}
	if err := e.printView(ctx, eng, runID, asJSON); err != nil {
		return err
	}
	return e.withSignalHint(ctx, eng, run, exitForStatus(run))
}

// withSignalHint gives the exit of a run parked on a signal whose wait
// declares a type a hint with that type and a payload of it, ready to
// edit (graph.Example), instead of --data '{...}'.
func (e *env) withSignalHint(ctx context.Context, eng *interp.Engine, run store.Run, err error) error {
	name, ok := strings.CutPrefix(run.WaitReason, "signal:")
	var ee *exitError
	if !ok || run.Status != store.RunWaiting || !errors.As(err, &ee) {
		return err
	}
	g, gerr := eng.RunGraph(ctx, run)
	if gerr != nil {
		return err
	}
	if t, ex, ok := interp.SignalExample(g, name); ok {
		ee.hintText = fmt.Sprintf("Its data has type %s. Send it with, for example: flowrun signal %s %s --data '%s', then: flowrun resume %s",
			t, run.ID, name, ex, run.ID)
	}
	return err
}

// exitForStatus maps a run's status to the exit code, with a hint for the
// statuses that need the user.
func exitForStatus(run store.Run) error {
	switch run.Status {
	case store.RunCompleted:
		return nil
	case store.RunFailed, store.RunCanceled:
		return exitCode(ExitFailed)
	case store.RunBlocked:
		return (&exitError{code: ExitDecision,
			msg: fmt.Sprintf("run %s is blocked: a newer MAJOR version of %q is stored and a decision is needed", run.ID, run.Workflow)}).
			hint(fmt.Sprintf("Decide with: flowrun resume %s --choose old|new|migrate (or pass --on-major to apply).", run.ID))
	}
	// Waiting, or pending/running in another process: parked.
	reason := run.WaitReason
	msg := fmt.Sprintf("run %s is %s", run.ID, run.Status)
	if reason != "" {
		msg += " (" + reason + ")"
	}
	hint := fmt.Sprintf("It continues by itself under a worker (flowrun worker), or in the foreground with: flowrun resume %s", run.ID)
	if name, ok := strings.CutPrefix(reason, "signal:"); ok {
		hint = fmt.Sprintf("Send the signal with: flowrun signal %s %s --data '{...}', then: flowrun resume %s", run.ID, name, run.ID)
	}
	return (&exitError{code: ExitParked, msg: msg}).hint(hint)
}

// checkSecretLengths refuses, before anything is written, a run in the
// foreground whose secret is set to a value too short to hide (shorter
// than interp.MinSecretLen): the engine would refuse it to the steps that
// need it, and every occurrence of those characters would be masked.
func checkSecretLengths(g *graph.Graph, getenv func(string) string) error {
	for _, s := range g.Secrets {
		if n := len(getenv(s.Env)); n > 0 && n < interp.MinSecretLen {
			return usageErrorf("secret %q: %s holds %d characters, and flowrun refuses a secret shorter than %d: hiding it would mask every occurrence of those characters in the run's outputs, logs and errors", s.Name, s.Env, n, interp.MinSecretLen).
				hint(fmt.Sprintf("Set the real secret in %s, or unset it if no step needs it.", s.Env))
		}
	}
	return nil
}
