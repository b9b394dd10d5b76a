package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/flowrun/flowrun/lang/graph"
)

func validateCommand() *command {
	return &command{
		name:  "validate",
		args:  "PATH...",
		short: "check workflow files and print their diagnostics",
		long: `Validate compiles the workflow files (and every *.hcl file of each directory)
and prints every problem with its file, line and column, the source line and
how to fix it. It exits 2 when there is an error, 0 otherwise, and prints one
line per valid workflow with its version and graph hash. When the database
exists it also checks each version against the stored versions, as apply does
(reading only; it never creates the database). The test files (*.test.hcl)
of each directory, and those named, are checked against the workflows of
their directory (spec/testing.md).`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			return func(ctx context.Context, args []string) error {
				args, tests, err := splitTestArgs(args)
				if err != nil {
					return err
				}
				mod, err := e.load(ctx, args)
				if err != nil {
					return err
				}
				if err := e.checkStoredVersions(ctx, mod); err != nil {
					return err
				}
				for _, w := range mod.Workflows {
					h, err := graph.Hash(w.Graph)
					if err != nil {
						return fmt.Errorf("hashing workflow %q: %w", w.Name, err)
					}
					fmt.Fprintf(e.stdout, "%s: workflow %q version %s is valid (graph %s)\n",
						w.File, w.Name, w.Graph.Version, shortHash(h))
				}
				return e.validateTests(tests)
			}
		},
	}
}
