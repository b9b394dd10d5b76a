package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

func diffCommand() *command {
	return &command{
		name:  "diff",
		args:  "A B [--workflow NAME] [--exit-code] [--json]",
		short: "classify the changes between two versions of a workflow and the bump they need",
		long: `Diff compares two versions of a workflow and prints each change with the
version bump it requires, then the bump the whole change requires. A and B
are workflow files (or directories), or stored versions written
WORKFLOW@VERSION (hello@1.0.0), read from the server with --server. When a file defines several workflows,
--workflow picks one. Diff exits 0 whatever it finds; with --exit-code it
exits 1 when there are changes and 0 when there are none, like git diff.
--json prints one object: a, b, workflow, from_version, to_version,
changes (each {path, what, bump}) and required_bump (none, patch, minor or
major).`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			name := fs.String("workflow", "", "the workflow to compare when a file defines several")
			exitCodeFlag := fs.Bool("exit-code", false, "exit 1 when there are changes, 0 when there are none (like git diff)")
			asJSON := fs.Bool("json", false, "print the changes as one JSON object")
			return func(ctx context.Context, args []string) error {
				if len(args) != 2 {
					return usageErrorf("diff takes two arguments, A and B, got %d", len(args)).
						hint("Run: flowrun diff OLD.hcl NEW.hcl, or flowrun diff WORKFLOW@1.0.0 WORKFLOW@1.1.0.")
				}
				// Resolve both sides before touching the store, so a bad
				// file never opens the database.
				var graphs [2]*graph.Graph
				var refs [2]string
				load := e.loadFilesOnly
				for i, a := range args {
					if isStoredRef(a) {
						refs[i] = a
						// A file compared with a stored version types a
						// child in none of its files as the stored graph
						// did: from the stored versions (else its output
						// would be any, a change that is not there).
						load = e.load
					}
				}
				if refs != [2]string{} && e.remote.url == "" {
					if _, err := e.openStore(ctx, false); errors.Is(err, errNoDatabase) {
						// Nothing is stored: the stored side says so
						// below, rather than the file's child unknown.
						load = e.loadFilesOnly
					}
				}
				for i, a := range args {
					if refs[i] != "" {
						continue
					}
					mod, err := load(ctx, []string{a})
					if err != nil {
						return err
					}
					w, err := e.pickWorkflow(mod, *name)
					if err != nil {
						return err
					}
					graphs[i] = w.Graph
				}
				for i, ref := range refs {
					if ref == "" {
						continue
					}
					g, err := e.storedGraph(ctx, ref)
					if err != nil {
						return err
					}
					graphs[i] = g
				}
				if graphs[0].Workflow != graphs[1].Workflow {
					fmt.Fprintf(e.stderr, "flowrun diff: note: comparing two different workflows, %q and %q.\n",
						graphs[0].Workflow, graphs[1].Workflow)
				}
				changes := graph.Diff(graphs[0], graphs[1])
				if *asJSON {
					if err := e.writeJSON(diffJSONOf(args, graphs, changes)); err != nil {
						return err
					}
				} else if len(changes) == 0 {
					fmt.Fprintf(e.stdout, "no changes: %s and %s compile to the same graph\n", args[0], args[1])
				} else {
					for _, c := range changes {
						fmt.Fprintln(e.stdout, termtext.Line(c.String()))
					}
					fmt.Fprintf(e.stdout, "required bump: %s\n", graph.RequiredBump(changes))
				}
				if *exitCodeFlag && len(changes) > 0 {
					return exitCode(ExitFailed)
				}
				return nil
			}
		},
	}
}

// diffJSON is diff --json (spec/semantics.md §16).
type diffJSON struct {
	A            string       `json:"a"`
	B            string       `json:"b"`
	Workflow     string       `json:"workflow"`
	FromVersion  string       `json:"from_version"`
	ToVersion    string       `json:"to_version"`
	Changes      []changeJSON `json:"changes"`
	RequiredBump string       `json:"required_bump"`
}

type changeJSON struct {
	Path string `json:"path"`
	What string `json:"what"`
	Bump string `json:"bump"`
}

func diffJSONOf(args []string, graphs [2]*graph.Graph, changes []graph.Change) diffJSON {
	d := diffJSON{A: args[0], B: args[1], Workflow: graphs[1].Workflow, FromVersion: graphs[0].Version,
		ToVersion: graphs[1].Version, Changes: changesJSON(changes), RequiredBump: bumpJSON(graph.RequiredBump(changes))}
	return d
}

func changesJSON(changes []graph.Change) []changeJSON {
	out := make([]changeJSON, 0, len(changes))
	for _, c := range changes {
		out = append(out, changeJSON{Path: c.Path, What: c.What, Bump: bumpJSON(c.Bump)})
	}
	return out
}

// bumpJSON is a bump as the JSON outputs write it: none, patch, minor,
// major.
func bumpJSON(b graph.Bump) string { return strings.ToLower(b.String()) }

// isStoredRef reports whether a diff argument names a stored version
// (WORKFLOW@VERSION) rather than a file.
func isStoredRef(a string) bool {
	if !strings.Contains(a, "@") {
		return false
	}
	_, err := os.Stat(a)
	return errors.Is(err, os.ErrNotExist)
}

// storedGraph loads a stored version named WORKFLOW@VERSION.
func (e *env) storedGraph(ctx context.Context, ref string) (*graph.Graph, error) {
	wf, ver, _ := strings.Cut(ref, "@")
	if wf == "" || ver == "" {
		return nil, usageErrorf("%q is neither a file nor a stored version", ref).
			hint("Name a workflow file, or a stored version as WORKFLOW@VERSION, such as hello@1.0.0.")
	}
	if _, err := graph.ParseVersion(ver); err != nil {
		return nil, usageErrorf("%s", err).hint("Write a stored version as WORKFLOW@MAJOR.MINOR.PATCH, such as hello@1.0.0.")
	}
	d, err := e.door(ctx)
	if errors.Is(err, errNoDatabase) {
		return nil, usageErrorf("version %s of workflow %q is not stored: there is no database at %s", ver, wf, e.dsn).
			hint("Apply the workflow first, or pass --db with the database that holds it.")
	}
	if err != nil {
		return nil, err
	}
	g, err := d.VersionGraph(ctx, wf, ver)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usageErrorf("version %s of workflow %q is not stored", ver, wf).
			hint(fmt.Sprintf("Run `flowrun versions %s` to list the stored versions.", wf))
	}
	var ge *interp.GraphError
	if errors.As(err, &ge) {
		return nil, &exitError{code: ExitStore, msg: fmt.Sprintf("the stored graph of %s is damaged", ref), err: ge.Err}
	}
	if x := remoteExit(fmt.Sprintf("reading version %s of workflow %q", ver, wf), err); x != nil {
		return nil, x
	}
	if err != nil {
		return nil, storeError(fmt.Sprintf("reading version %s of workflow %q", ver, wf), err)
	}
	return g, nil
}
