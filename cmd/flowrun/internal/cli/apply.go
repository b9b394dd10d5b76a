package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
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
6 the blocked run was decided by someone else first.

With --server URL (or FLOWRUN_SERVER) apply sends the files to that flowrun
serve, which compiles and checks them again against its stored versions and
stores them (a token of scope deploy); the run then starts there, its
workers run it in the server's --work-dir, and apply follows its log until
it ends or parks, with the exit codes above (--detach returns at once;
spec/cli.md §9).`,
		store:  true,
		remote: true,
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
				if err := checkPairs(o.pairs, args); err != nil {
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
	if e.remote.url != "" {
		return e.applyRemote(ctx, paths, o) // applyremote.go
	}
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
		return startError(w, err)
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
	prog := e.newProgress()
	eng := e.engine(st, prog.event)
	res, err := e.storeVersions(ctx, eng, mod)
	if err != nil {
		return err
	}
	e.sayNextFires(res)
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
		return startError(w, err)
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
		e.cmdEngine.onEvent.Store(&onEvent)
	}
	if e.cmdEngine.eng == nil || e.cmdEngine.st != st {
		opts := interp.Options{
			Clock:    e.clock,
			Getenv:   e.getenv,
			OnEvent:  e.display.gate(e.eventSink(e.progress)),
			ExecUser: e.execUser,
		}
		if tr := e.commandTracer(); tr != nil {
			opts.Observer, opts.Traceparent, opts.TraceSampled = tr, true, tr.Sampled
		}
		e.cmdEngine.eng = interp.New(st, opts)
		e.cmdEngine.st = st
	}
	return e.cmdEngine.eng
}

// progress hands an event of the engine to the command's progress hook.
func (e *env) progress(ev store.Event) {
	if f := e.cmdEngine.onEvent.Load(); f != nil {
		(*f)(ev)
	}
}

// storeVersions stores every workflow of the module, so children resolve,
// through the one door (api.Local.DeployModule: the version checks, the
// runs a new MAJOR blocks, the store and the schedules), and says what it
// did: runs a new MAJOR blocks, versions replaced in place. Every
// workflow is checked before any is stored, so a refused apply writes
// nothing.
func (e *env) storeVersions(ctx context.Context, eng *interp.Engine, mod *lang.Module) (*api.DeployResult, error) {
	res, err := api.NewLocal(eng, api.LocalOptions{}).DeployModule(ctx, mod, api.WorkDirOf)
	if err != nil {
		return nil, e.deployError(err)
	}
	e.sayDeployed(res)
	return res, nil
}

// sayDeployed tells, on stderr, which unfinished runs each stored version
// blocks and which development versions it replaced in place.
func (e *env) sayDeployed(res *api.DeployResult) {
	for _, d := range res.Workflows {
		if n := len(d.Blocked); n > 0 {
			fmt.Fprintf(e.stderr, "flowrun %s: version %s of %q is a new MAJOR version; %s bound to an older MAJOR %s blocked until decided:\n",
				e.verb, d.Version, d.Workflow, plural(n, "unfinished run", "unfinished runs"), pluralWord(n, "is", "are"))
			for _, b := range d.Blocked {
				fmt.Fprintf(e.stderr, "  run %s (version %s, %s): flowrun resume %s --choose old|new|migrate%s\n", b.RunID, b.Version, b.Status, b.RunID, e.serverFlag())
			}
		}
		if d.Replaced {
			fmt.Fprintf(e.stderr, "flowrun %s: workflow %q version %s replaced in place as revision %d (a development version, MAJOR 0); runs of revision %d keep their graph\n",
				e.verb, d.Workflow, d.Version, d.Revision, d.Previous)
		}
	}
}

// deployError words a refused deploy (api.DeployError: its diagnostics
// above the message, exit 2) or a failure to read what is stored.
func (e *env) deployError(err error) error {
	var de *api.DeployError
	if !errors.As(err, &de) {
		return storedGraphError(err)
	}
	if diags, files := de.Diags(); len(diags) > 0 && files != nil {
		if werr := e.writeDiags(files, diags); werr != nil {
			return fmt.Errorf("writing diagnostics: %w", werr)
		}
	} else if de.Diagnostics != "" {
		// Through a server: its diagnostics, as text.
		fmt.Fprint(e.stderr, termtext.Lines(de.Diagnostics))
	}
	return usageErrorf("%s", de.Message).hint(de.Hint)
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
	if err := api.VersionRefusal(mod, w, c); err != nil {
		return c, e.deployError(err)
	}
	return c, nil
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

// startError classifies an error of StartRun.
func startError(w *lang.Workflow, err error) error {
	workflow := w.Name
	var ie *interp.InputError
	if errors.As(err, &ie) {
		return usageErrorf("%s", ie.Error()).hint("Fix the --input or --inputs values and apply again; nothing was run.")
	}
	var ke *interp.KeyError
	if errors.As(err, &ke) {
		// At the key attribute, as a diagnostic is: the expression is the
		// file's, the values the command line's.
		where := ""
		if w.Sources != nil {
			if r := w.Sources.Attr("workflow.key"); r.Filename != "" {
				where = fmt.Sprintf("%s:%d:%d: ", r.Filename, r.Start.Line, r.Start.Column)
			}
		}
		return usageErrorf("%s%s", where, ke.Error()).hint("Fix the inputs or the workflow's key expression and apply again; nothing was run.")
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
		return e.withSignalHint(ctx, eng, run, exitForStatus(run, ""))
	}
	if err := e.printView(ctx, eng, runID, asJSON); err != nil {
		return err
	}
	return e.withSignalHint(ctx, eng, run, exitForStatus(run, ""))
}

// withSignalHint gives the exit of a run parked on a signal whose wait
// declares a type a hint with that type and a payload of it, ready to
// edit (graph.Example), instead of --data '{...}'. A run parked on a
// child run that waits for a signal (however deep) gets the hint of that
// signal, sent to the child, then the resume of the run.
func (e *env) withSignalHint(ctx context.Context, eng *interp.Engine, run store.Run, err error) error {
	var ee *exitError
	if run.Status != store.RunWaiting || !errors.As(err, &ee) {
		return err
	}
	waiter, name, ok := eng.SignalWaiter(ctx, run)
	if !ok {
		return err
	}
	g, gerr := eng.RunGraph(ctx, waiter)
	if gerr != nil {
		return err
	}
	t, ex, typed := interp.SignalExample(g, name)
	switch {
	case waiter.ID == run.ID && typed:
		ee.hintText = fmt.Sprintf("Its data has type %s. Send it with, for example: flowrun signal %s %s --data '%s', then: flowrun resume %s",
			t, run.ID, name, ex, run.ID)
	case waiter.ID != run.ID:
		data, of := "{...}", ""
		if typed {
			data, of = string(ex), fmt.Sprintf(" (its data has type %s)", t)
		}
		ee.hintText = fmt.Sprintf("Its child run %s (%s) waits for signal %s%s. Send it with, for example: flowrun signal %s %s --data '%s', then: flowrun resume %s",
			waiter.ID, waiter.Workflow, name, of, waiter.ID, name, data, run.ID)
	}
	return err
}

// exitForDoorView is exitForView of a run read through the door (a
// server's, for wait, logs --exit-status and the verbs that follow a run
// there), with withSignalHint's payload: a run waiting for a signal whose
// wait declares a type gets that type and a value of it in the hint, ready
// to edit, instead of --data '{...}'.
func (e *env) exitForDoorView(ctx context.Context, d api.Service, v *interp.RunView) error {
	err := exitForView(v, e.remote.url)
	var ee *exitError
	name, waits := strings.CutPrefix(v.WaitReason, "signal:")
	if v.Status != store.RunWaiting || !waits || !errors.As(err, &ee) {
		return err
	}
	run, rerr := d.RunGet(ctx, v.RunID)
	if rerr != nil {
		return err
	}
	g, gerr := d.Graph(ctx, run.Workflow, run.GraphHash)
	if gerr != nil {
		return err
	}
	t, ex, typed := interp.SignalExample(g, name)
	if !typed {
		return err
	}
	if e.remote.url == "" {
		ee.hintText = fmt.Sprintf("Its data has type %s. Send it with, for example: flowrun signal %s %s --data '%s', then: flowrun resume %s",
			t, v.RunID, name, ex, v.RunID)
		return err
	}
	ee.hintText = fmt.Sprintf("Its data has type %s. Send it with, for example: flowrun signal %s %s --data '%s' --server %s; a worker of the server then goes on with it (follow it with: flowrun logs %s -f --server %s)",
		t, v.RunID, name, ex, e.remote.url, v.RunID, e.remote.url)
	return err
}

// exitForStatus maps a run's status to the exit code, with a hint for the
// statuses that need the user.
// exitForView is exitForStatus of a run's view (read through the one
// door).
func exitForView(v *interp.RunView, server string) error {
	return exitForStatus(store.Run{ID: v.RunID, Workflow: v.Workflow, Status: v.Status, WaitReason: v.WaitReason}, server)
}

// exitForStatus's server is the URL of the server the verb went through
// ("" for a store): there a worker of the server goes on with a parked
// run, and resume without --choose runs nothing, so the hints say what
// works through it.
func exitForStatus(run store.Run, server string) error {
	switch run.Status {
	case store.RunCompleted:
		return nil
	case store.RunFailed, store.RunCanceled:
		return exitCode(ExitFailed)
	case store.RunBlocked:
		return (&exitError{code: ExitDecision,
			msg: fmt.Sprintf("run %s is blocked: a newer MAJOR version of %q is stored and a decision is needed", run.ID, run.Workflow)}).
			hint(decideHint(run.ID, server))
	}
	// Waiting, or pending/running in another process: parked.
	reason := run.WaitReason
	msg := fmt.Sprintf("run %s is %s", run.ID, run.Status)
	if reason != "" {
		msg += " (" + reason + ")"
	}
	hint := fmt.Sprintf("It continues by itself under a worker (flowrun worker), or in the foreground with: flowrun resume %s", run.ID)
	if server != "" {
		hint = fmt.Sprintf("A worker of the server goes on with it by itself; follow it with: flowrun logs %s -f --server %s", run.ID, server)
	}
	if name, ok := strings.CutPrefix(reason, "signal:"); ok {
		hint = fmt.Sprintf("Send the signal with: flowrun signal %s %s --data '{...}', then: flowrun resume %s", run.ID, name, run.ID)
		if server != "" {
			hint = fmt.Sprintf("Send the signal with: flowrun signal %s %s --data '{...}' --server %s; a worker of the server then goes on with it (follow it with: flowrun logs %s -f --server %s)", run.ID, name, server, run.ID, server)
		}
	}
	return (&exitError{code: ExitParked, msg: msg}).hint(hint)
}

// decideHint says how to decide a blocked run, on the store or through
// server.
func decideHint(id, server string) string {
	if server != "" {
		return fmt.Sprintf("Decide with: flowrun resume %s --choose old|new|migrate --server %s", id, server)
	}
	return fmt.Sprintf("Decide with: flowrun resume %s --choose old|new|migrate (or pass --on-major to apply).", id)
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
