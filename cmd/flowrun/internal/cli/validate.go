package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
)

func validateCommand() *command {
	return &command{
		name:  "validate",
		args:  "PATH... [--json]",
		short: "check workflow files and print their diagnostics",
		long: `Validate compiles the workflow files (and every *.hcl file of each directory)
and prints every problem with its file, line and column, the source line and
how to fix it. It exits 2 when there is an error, 0 otherwise, and prints one
line per valid workflow with its version and graph hash. When the database
exists it also checks each version against the stored versions, as apply does
(reading only; it never creates the database). The test files (*.test.hcl)
of each directory, and those named, are checked against the workflows of
their directory (spec/testing.md); for a test file named, it lists the
workflows its tests need, not every workflow of its directory. DIR/... validates DIR and every directory
below it, each on its own as validate DIR does. --json prints one object
with valid, workflows, tests and diagnostics (with their ranges) instead.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			asJSON := fs.Bool("json", false, "print the result and the diagnostics as one JSON object")
			return func(ctx context.Context, args []string) error {
				groups, err := validateGroups(args)
				if err != nil {
					return err
				}
				out := validateJSON{Workflows: []validWorkflowJSON{}, Tests: []validTestsJSON{}, Diagnostics: []diagJSON{}}
				if *asJSON {
					e.diags = &out.Diagnostics
					defer func() { e.diags = nil }()
				}
				var failed []string
				var first error
				for _, g := range groups {
					before := len(out.Diagnostics)
					err := e.validateGroup(ctx, g, *asJSON, &out)
					var xe *exitError
					switch {
					case err == nil:
					case errors.As(err, &xe) && xe.code == ExitInvalid:
						failed = append(failed, strings.Join(g, " "))
						if first == nil {
							first = err
						}
						if *asJSON && len(out.Diagnostics) == before {
							// A mistake that is no diagnostic of a file
							// (no files given, none found) is one too.
							out.Diagnostics = append(out.Diagnostics, errorDiagJSON(xe))
						}
					default:
						return err // the store failed: exit 5
					}
				}
				if *asJSON {
					out.Valid = len(failed) == 0
					if err := e.writeJSON(out); err != nil {
						return err
					}
					switch {
					case len(failed) == 1:
						var xe *exitError
						errors.As(first, &xe)
						return usageErrorf("%s", xe.message()).hint("The diagnostics are in the JSON on standard output.")
					case len(failed) > 1:
						return usageErrorf("%s invalid: %s", plural(len(failed), "workflow set is", "workflow sets are"), strings.Join(failed, ", ")).
							hint("The diagnostics are in the JSON on standard output.")
					}
					return nil
				}
				switch {
				case len(failed) == 0:
					return nil
				case len(groups) == 1:
					return first
				}
				return usageErrorf("%d of %d directories %s errors: %s", len(failed), len(groups),
					pluralWord(len(failed), "has", "have"), strings.Join(failed, ", ")).
					hint("Fix the errors above and run the command again.")
			}
		},
	}
}

// validateGroups splits validate's arguments into what is validated
// together: the files and directories named (one set, as apply reads
// them), then each directory found by a DIR/... argument on its own.
func validateGroups(args []string) ([][]string, error) {
	var plain []string
	var groups [][]string
	for _, a := range args {
		root, ok := recursiveRoot(a)
		if !ok {
			plain = append(plain, a)
			continue
		}
		dirs, err := hclDirs(a, root, true)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			groups = append(groups, []string{d})
		}
	}
	if len(plain) > 0 || len(groups) == 0 {
		groups = append([][]string{plain}, groups...)
	}
	return groups, nil
}

// validateGroup validates one set of paths: compiles them, checks the
// versions against the stored ones, and checks their test files. When
// only test files are named, what is checked and listed is those files
// and the workflows their tests need (the workflows they test and the
// children those call), not every workflow of their directories.
func (e *env) validateGroup(ctx context.Context, paths []string, asJSON bool, out *validateJSON) error {
	args, tests, err := splitTestArgs(paths)
	if err != nil {
		return err
	}
	// The test files named bring their directories' workflows in, but
	// only those the tests need are checked against the store and listed,
	// with the workflows of the other paths named.
	var named []string
	testNamed := false
	for _, p := range paths {
		if lang.IsTestFile(p) {
			testNamed = true
		} else {
			named = append(named, p)
		}
	}
	mod, err := e.load(ctx, args)
	if err != nil {
		return err
	}
	type validTests struct {
		name      string
		n         int
		workflows []string
	}
	var valid []validTests
	testErr := e.validateTests(ctx, tests, func(name string, n int, workflows []string) {
		valid = append(valid, validTests{name, n, workflows})
	})
	workflows := mod.Workflows
	if testNamed {
		var tested []string
		for _, v := range valid {
			tested = append(tested, v.workflows...)
		}
		workflows = needed(mod, tested, named)
	}
	if err := e.checkStoredVersions(ctx, mod, workflows); err != nil {
		return err
	}
	for _, w := range workflows {
		h, err := graph.Hash(w.Graph)
		if err != nil {
			return fmt.Errorf("hashing workflow %q: %w", w.Name, err)
		}
		if asJSON {
			out.Workflows = append(out.Workflows, validWorkflowJSON{File: w.File, Name: w.Name, Version: w.Graph.Version, GraphHash: h})
			continue
		}
		fmt.Fprintf(e.stdout, "%s: workflow %q version %s is valid (graph %s)\n",
			w.File, w.Name, w.Graph.Version, shortHash(h))
	}
	for _, v := range valid {
		if asJSON {
			out.Tests = append(out.Tests, validTestsJSON{File: v.name, Tests: v.n, Workflows: v.workflows})
			continue
		}
		if len(v.workflows) == 0 { // a file without tests
			fmt.Fprintf(e.stdout, "%s: %s valid\n", v.name, plural(v.n, "test is", "tests are"))
			continue
		}
		fmt.Fprintf(e.stdout, "%s: %s of %s %s %s valid\n", v.name, plural(v.n, "test", "tests"),
			pluralWord(len(v.workflows), "workflow", "workflows"), quoteList(v.workflows), pluralWord(v.n, "is", "are"))
	}
	return testErr
}

// needed returns, in mod's order, the workflows of mod that come from the
// paths named (a file, or a directory's files) and those the workflows
// tested need: the tested ones and, through their workflow steps, every
// child they call in mod. (A child stored but not in mod is the store's,
// not a file's.)
func needed(mod *lang.Module, tested, paths []string) []*lang.Workflow {
	want := map[string]bool{}
	todo := append([]string(nil), tested...)
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if want[name] {
			continue
		}
		want[name] = true
		w := mod.Workflow(name)
		if w == nil || w.Graph == nil {
			continue
		}
		for _, s := range w.Graph.Steps {
			if c := s.Action.Workflow; c != nil && !want[c.Name] {
				todo = append(todo, c.Name)
			}
		}
	}
	fromPath := func(file string) bool {
		f := filepath.Clean(file)
		for _, p := range paths {
			if p = filepath.Clean(p); f == p || filepath.Dir(f) == p {
				return true
			}
		}
		return false
	}
	var out []*lang.Workflow
	for _, w := range mod.Workflows {
		if want[w.Name] || fromPath(w.File) {
			out = append(out, w)
		}
	}
	return out
}

// validateJSON is validate --json (spec/semantics.md §16).
type validateJSON struct {
	Valid       bool                `json:"valid"`
	Workflows   []validWorkflowJSON `json:"workflows"`
	Tests       []validTestsJSON    `json:"tests"`
	Diagnostics []diagJSON          `json:"diagnostics"`
}

type validWorkflowJSON struct {
	File      string `json:"file"`
	Name      string `json:"name"`
	Version   string `json:"version"`
	GraphHash string `json:"graph_hash"`
}

type validTestsJSON struct {
	File      string   `json:"file"`
	Tests     int      `json:"tests"`
	Workflows []string `json:"workflows"` // the workflows its tests test
}
