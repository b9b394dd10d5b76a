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
		args:  "A B [--workflow NAME]",
		short: "classify the changes between two versions of a workflow and the bump they need",
		long: `Diff compares two versions of a workflow and prints each change with the
version bump it requires, then the bump the whole change requires. A and B
are workflow files (or directories), or stored versions written
WORKFLOW@VERSION (hello@1.0.0). When a file defines several workflows,
--workflow picks one. Diff exits 0 whatever it finds.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			name := fs.String("workflow", "", "the workflow to compare when a file defines several")
			return func(ctx context.Context, args []string) error {
				if len(args) != 2 {
					return usageErrorf("diff takes two arguments, A and B, got %d", len(args)).
						hint("Run: flowrun diff OLD.hcl NEW.hcl, or flowrun diff WORKFLOW@1.0.0 WORKFLOW@1.1.0.")
				}
				// Resolve both sides before touching the store, so a bad
				// file never opens the database.
				var graphs [2]*graph.Graph
				var refs [2]string
				for i, a := range args {
					if isStoredRef(a) {
						refs[i] = a
						continue
					}
					mod, err := e.loadFilesOnly(ctx, []string{a})
					if err != nil {
						return err
					}
					w, err := pickWorkflow(mod, *name)
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
				if len(changes) == 0 {
					fmt.Fprintf(e.stdout, "no changes: %s and %s compile to the same graph\n", args[0], args[1])
					return nil
				}
				for _, c := range changes {
					fmt.Fprintln(e.stdout, termtext.Line(c.String()))
				}
				fmt.Fprintf(e.stdout, "required bump: %s\n", graph.RequiredBump(changes))
				return nil
			}
		},
	}
}

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
	st, err := e.openStore(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return nil, usageErrorf("version %s of workflow %q is not stored: there is no database at %s", ver, wf, e.dsn).
			hint("Apply the workflow first, or pass --db with the database that holds it.")
	}
	if err != nil {
		return nil, err
	}
	_, g, err := e.engine(st, nil).VersionGraph(ctx, wf, ver)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usageErrorf("version %s of workflow %q is not stored", ver, wf).
			hint(fmt.Sprintf("Run `flowrun versions %s` to list the stored versions.", wf))
	}
	var ge *interp.GraphError
	if errors.As(err, &ge) {
		return nil, &exitError{code: ExitStore, msg: fmt.Sprintf("the stored graph of %s is damaged", ref), err: ge.Err}
	}
	if err != nil {
		return nil, storeError(fmt.Sprintf("reading version %s of workflow %q", ver, wf), err)
	}
	return g, nil
}
