package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/docfetch"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/hashicorp/hcl/v2"
)

// load compiles the workflow files and directories at paths. Diagnostics
// (warnings too) go to stderr; any error ends the verb with exit 2, after
// every diagnostic of every file was printed.
//
// A workflow step's child is looked up among the files and, when it is not
// there, among the versions stored in the database (opened read-only, and
// only then; a missing database holds none): validate, plan and apply
// report a child found nowhere, and so does diff when it compares a file
// with a stored version (the stored graph typed the child's output). graph,
// and diff of two files, which read one file of a family, use the files
// only and leave such a child unchecked. With --server the stored
// versions are the server's.
func (e *env) load(ctx context.Context, paths []string) (*lang.Module, error) {
	return e.loadWith(ctx, paths, true)
}

// loadFilesOnly is load without the database: a child in none of the files
// is left unchecked.
func (e *env) loadFilesOnly(ctx context.Context, paths []string) (*lang.Module, error) {
	return e.loadWith(ctx, paths, false)
}

func (e *env) loadWith(ctx context.Context, paths []string, stored bool) (*lang.Module, error) {
	if len(paths) == 0 {
		return nil, usageErrorf("no workflow files given").
			hint(fmt.Sprintf("Name one or more .hcl files or directories: flowrun %s PATH...", e.verb))
	}
	if err := notRecursive(e.verb, paths); err != nil {
		return nil, err
	}
	if e.verb != "validate" {
		// A test file holds test blocks, which only validate and test
		// read: "Blocks of type "test" are not expected here" said what
		// was wrong with the file, not with the command.
		for _, p := range paths {
			if strings.HasSuffix(p, lang.TestFileSuffix) {
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
					return nil, usageErrorf("%s is a test file: it holds tests of workflows, not workflows", p).
						hint(fmt.Sprintf("Run its tests with: flowrun test %s; or %s the workflow file beside it.", p, e.verb))
				}
			}
		}
	}
	// A command compiles its files once: collecting after decoding them
	// keeps a long file's peak memory to what its compile holds.
	opts := e.loadOptions(ctx)
	opts.CollectAfterDecode = true
	var storeErr error
	if stored {
		opts.Stored = func(name string) ([]*graph.Graph, error) {
			gs, err := e.storedGraphs(ctx, name)
			if err != nil && storeErr == nil {
				storeErr = err
			}
			return gs, err
		}
	}
	mod, diags := lang.LoadPathsWith(paths, opts)
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if mod != nil {
			files = mod.Files
		}
		if err := e.writeDiags(files, diags); err != nil {
			return nil, fmt.Errorf("writing diagnostics: %w", err)
		}
	}
	if storeErr != nil {
		// The database could not be read: a store fault (exit 5), not a
		// mistake in the files.
		return nil, storeErr
	}
	if diags.HasErrors() {
		return nil, compileError(diags, paths)
	}
	if mod == nil || len(mod.Workflows) == 0 {
		return nil, usageErrorf("no workflow blocks found in %s", strings.Join(paths, ", ")).
			hint(`A workflow file holds one or more blocks like: workflow "name" { version = "1.0.0" ... }.`)
	}
	return mod, nil
}

// loadOptions are the settings every load of the command shares: the
// workflow file limit, and the fetcher of the OpenAPI documents named by
// URL (language.md §8.10), fetched under ctx at most once per command, so
// that every load of a command (its workflows, its test files') compiles
// against the same document.
func (e *env) loadOptions(ctx context.Context) lang.LoadOptions {
	if e.documents == nil {
		e.documents = docfetch.NewCache(docfetch.New(ctx, docfetch.Options{}), nil, 0)
	}
	return lang.LoadOptions{MaxFileSize: e.workflowFileLimit(), FetchDocument: e.documents.Fetch}
}

// pickWorkflow returns the workflow named name, or, when name is empty,
// the only one of the files, or else the only one no other workflow of the
// files calls (a parent given with its children: cli.md §4 †), telling
// e's stderr which it took. Several workflows that nothing calls, without
// a name, are bad input: the message names them and how to choose.
func (e *env) pickWorkflow(mod *lang.Module, name string) (*lang.Workflow, error) {
	var names []string
	for _, w := range mod.Workflows {
		if name != "" && w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	sort.Strings(names)
	if name != "" {
		return nil, usageErrorf("no workflow named %q in the given files; they define %s", name, quoteList(names)).
			hint("Pass --workflow with one of those names.")
	}
	if len(mod.Workflows) == 1 {
		return mod.Workflows[0], nil
	}
	top := uncalled(mod)
	if len(top) == 1 {
		fmt.Fprintf(e.stderr, "flowrun %s: using workflow %q, the one of the given files that no other calls (pass --workflow NAME for another)\n", e.verb, top[0].Name)
		return top[0], nil
	}
	if len(top) > 1 && len(top) < len(names) {
		var topNames []string
		for _, w := range top {
			topNames = append(topNames, w.Name)
		}
		sort.Strings(topNames)
		return nil, usageErrorf("the given files define %d workflows that no other calls (%s) and it is not clear which one to use", len(topNames), quoteList(topNames)).
			hint(fmt.Sprintf("Pass --workflow NAME, for example --workflow %s, or give only that workflow's files.", topNames[0]))
	}
	return nil, usageErrorf("the given files define %d workflows (%s) and it is not clear which one to use", len(names), quoteList(names)).
		hint(fmt.Sprintf("Pass --workflow NAME, for example --workflow %s.", names[0]))
}

// uncalled returns the workflows of mod that no step or alert of another
// workflow of mod starts as a child run, in file order.
func uncalled(mod *lang.Module) []*lang.Workflow {
	called := map[string]bool{}
	note := func(w *lang.Workflow, a graph.Action) {
		if a.Kind == graph.KindWorkflow && a.Workflow != nil && a.Workflow.Name != w.Name {
			called[a.Workflow.Name] = true
		}
	}
	for _, w := range mod.Workflows {
		for _, s := range w.Graph.Steps {
			note(w, s.Action)
		}
		for _, a := range w.Graph.Alerts {
			note(w, a.Action)
		}
	}
	var out []*lang.Workflow
	for _, w := range mod.Workflows {
		if !called[w.Name] {
			out = append(out, w)
		}
	}
	return out
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// shortHash is the prefix of a graph hash people see.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// storedGraphs returns the stored versions of workflow name, opening the
// database read-only on first use; a missing database holds none. With
// --server they are the server's, so that a file compiles here to the
// graph the server compiles it to (its children typed alike).
func (e *env) storedGraphs(ctx context.Context, name string) ([]*graph.Graph, error) {
	if e.remote.url != "" {
		return e.serverGraphs(ctx, name)
	}
	st, err := e.openStore(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	gs, err := e.engine(st, nil).StoredGraphs(ctx, name)
	var ge *interp.GraphError
	if errors.As(err, &ge) {
		return nil, &exitError{code: ExitStore, err: fmt.Errorf("workflow %q version %s in the database: %w", name, ge.Version, ge.Err)}
	}
	if err != nil {
		return nil, &exitError{code: ExitStore, err: err}
	}
	return gs, nil
}

// compileError is the exit-2 error of diagnostics with errors, printed
// already: how many, in which files (else paths).
func compileError(diags hcl.Diagnostics, paths []string) error {
	n := 0
	var files []string
	seen := map[string]bool{}
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		n++
		if d.Subject != nil && !seen[d.Subject.Filename] {
			seen[d.Subject.Filename] = true
			files = append(files, d.Subject.Filename)
		}
	}
	where := strings.Join(files, ", ")
	if where == "" {
		where = strings.Join(paths, ", ")
	}
	return usageErrorf("%s in %s", plural(n, "error", "errors"), where).
		hint("Fix the errors above and run the command again.")
}

// serverGraphs is storedGraphs through the server: the graph of each
// version it stores of workflow name (none when it stores no version).
func (e *env) serverGraphs(ctx context.Context, name string) ([]*graph.Graph, error) {
	d, err := e.door(ctx)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("reading the stored versions of workflow %q", name)
	vs, err := d.Versions(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, remoteError(fmt.Errorf("%s: %w", what, err))
	}
	out := make([]*graph.Graph, 0, len(vs))
	for _, v := range vs {
		g, err := d.VersionGraph(ctx, name, v.Version)
		if err != nil {
			return nil, remoteError(fmt.Errorf("%s: version %s: %w", what, v.Version, err))
		}
		out = append(out, g)
	}
	return out, nil
}
