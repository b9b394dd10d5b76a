package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
)

func graphCommand() *command {
	return &command{
		name:  "graph",
		args:  "PATH [--format mermaid|dot] [--workflow NAME]",
		short: "print a workflow's step graph as Mermaid or Graphviz DOT",
		long: `Graph compiles the workflow at PATH and prints its step graph, in Mermaid
(the default) or Graphviz DOT. When PATH defines several workflows, --workflow
picks one. It does not touch the database.`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			format := &choiceFlag{value: "mermaid", choices: []string{"mermaid", "dot"}}
			fs.Var(format, "format", "the output format: mermaid or dot")
			name := fs.String("workflow", "", "the workflow to draw when PATH defines several")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usageErrorf("graph takes one PATH, got %d", len(args)).
						hint("Run: flowrun graph FILE.hcl [--format mermaid|dot].")
				}
				mod, err := e.loadFilesOnly(ctx, args)
				if err != nil {
					return err
				}
				w, err := e.pickWorkflow(mod, *name)
				if err != nil {
					return err
				}
				var out string
				if format.value == "dot" {
					out = graph.DOT(w.Graph)
				} else {
					out = graph.Mermaid(w.Graph)
				}
				fmt.Fprint(e.stdout, out)
				if !strings.HasSuffix(out, "\n") {
					fmt.Fprintln(e.stdout)
				}
				return nil
			}
		},
	}
}
