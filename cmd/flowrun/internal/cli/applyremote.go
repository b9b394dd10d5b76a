package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// applyRemote is apply --server: the files compile here first (their
// mistakes are found without the network, a child in none of them left
// to the server), then the server compiles and checks them again with the
// same front end and version rules against its stored versions, and
// stores them (scope deploy). The run then starts on the server, whose
// workers run it, in the server's --work-dir (spec/cli.md §9): apply
// follows it as it follows a run it drives here (followRemote), or
// returns once it is started with --detach.
func (e *env) applyRemote(ctx context.Context, paths []string, o *applyOptions) error {
	switch {
	case e.execUser != nil:
		return usageErrorf("--exec-user does not apply with --server: the server's workers run the steps as their own user").
			hint("Leave --exec-user out, or set it on the server's flowrun worker.")
	case o.onMajor != "":
		return usageErrorf("--on-major does not apply with --server: apply --server starts the run and returns").
			hint("Decide a blocked run with: flowrun resume RUN --choose old|new|migrate --server URL")
	}
	mod, err := e.loadFilesOnly(ctx, paths)
	if err != nil {
		return err
	}
	w, err := e.pickWorkflow(mod, o.workflow)
	if err != nil {
		return err
	}
	starts := !(len(w.Graph.Schedules) > 0 || len(w.Graph.Webhooks) > 0) || o.run
	if !starts && (len(o.pairs) > 0 || o.inputsFile != "" || o.newRun || o.detach) {
		return usageErrorf("this workflow has %s: apply %s and starts no run, so --input, --inputs, --new and --detach do not apply", startersOf(mod), startersDo(mod)).
			hint("Pass --run to also start a run now with these inputs.")
	}
	var inputs map[string]any
	if starts {
		if inputs, err = readInputs(ctx, w.Graph, o.pairs, o.inputsFile, e.inputsFileLimit()); err != nil {
			return err
		}
		if err := interp.CheckStart(ctx, w.Graph, inputs); err != nil {
			return startError(w, err)
		}
	}
	files := make([]api.SourceFile, 0, len(mod.Files))
	for name, f := range mod.Files {
		files = append(files, api.SourceFile{Name: name, Source: string(f.Bytes)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	d, err := e.door(ctx)
	if err != nil {
		return err
	}
	res, err := d.Deploy(ctx, files)
	if err != nil {
		return e.deployError(err)
	}
	e.sayDeployed(res)
	for _, dw := range res.Workflows {
		for _, sc := range dw.Schedules {
			next := "never (paused)"
			if sc.NextFire != nil {
				next = stampInZone(*sc.NextFire, sc.Timezone)
			}
			fmt.Fprintf(e.stderr, "flowrun apply: schedule %s/%s (%s %q in %s) is active on %s; it next fires at %s\n",
				sc.Workflow, sc.Name, sc.Kind, sc.Spec, sc.Timezone, e.remote.url, next)
		}
	}
	if !starts {
		e.printWebhooks(mod)
		return nil
	}
	view, created, err := d.Start(ctx, api.StartRequest{Workflow: w.Name, Inputs: inputs, Version: w.Graph.Version, New: o.newRun})
	if err != nil {
		return startError(w, err)
	}
	switch {
	case !created && view.Status == store.RunCompleted:
		fmt.Fprintf(e.stderr, "flowrun apply: run %s with key %q already completed (on version %s); it was not run again. Pass --new to start another run.\n", view.RunID, view.Key, view.Version)
	case !created:
		fmt.Fprintf(e.stderr, "flowrun apply: run %s with key %q is %s on %s; its workers go on with it. Follow it with: flowrun logs %s -f --server %s\n",
			view.RunID, view.Key, view.Status, e.remote.url, view.RunID, e.remote.url)
	case o.detach:
		fmt.Fprintf(e.stderr, "flowrun apply: run %s is enqueued on %s; its workers run it. Follow it with: flowrun logs %s -f --server %s\n",
			view.RunID, e.remote.url, view.RunID, e.remote.url)
	default:
		return e.followRemote(ctx, d, view, o.json,
			fmt.Sprintf("flowrun apply: run %s is enqueued on %s; its workers run it, and its log follows.", view.RunID, e.remote.url))
	}
	if o.json {
		return e.writeJSON(view)
	}
	fmt.Fprintln(e.stdout, view.RunID)
	return nil
}
