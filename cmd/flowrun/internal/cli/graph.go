package cli

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/termtext"
)

func graphCommand() *command {
	return &command{
		name:  "graph",
		args:  "PATH [--format text|mermaid|dot] [--run RUN] [--workflow NAME]",
		short: "print a workflow's step graph as text, Mermaid or Graphviz DOT",
		long: `Graph compiles the workflow at PATH and prints its step graph: as text for a
terminal (the steps in layers, each in a box, with the steps it waits for
under it; the default on a terminal), in Mermaid (the default otherwise) or
Graphviz DOT. With --format text, --run RUN shows each step's status in
that run (a run of the same workflow), coloured on a terminal unless
NO_COLOR is set. When PATH defines several workflows,
--workflow picks one. Without --run it does not touch the database.`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			format := &choiceFlag{choices: []string{"text", "mermaid", "dot"}}
			fs.Var(format, "format", "the output format: text (the default on a terminal), mermaid (the default otherwise) or dot")
			name := fs.String("workflow", "", "the workflow to draw when PATH defines several")
			runRef := fs.String("run", "", "with --format text: show each step's status in this run")
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
				f := format.value
				if f == "" {
					f = "mermaid"
					if isTerminal(e.stdout) {
						f = "text"
					}
				}
				if *runRef != "" && f != "text" {
					if format.value == "" {
						// The user chose no format: say why it is not text.
						return usageErrorf("--run goes with --format text, and the output is not a terminal, where the default is mermaid").
							hint("Run: flowrun graph " + args[0] + " --format text --run " + *runRef)
					}
					return usageErrorf("--run goes with --format text").hint("Run: flowrun graph " + args[0] + " --format text --run " + *runRef)
				}
				var out string
				switch f {
				case "dot":
					out = graph.DOT(w.Graph)
				case "mermaid":
					out = graph.Mermaid(w.Graph)
				default:
					var status func(string) string
					if *runRef != "" {
						_, view, err := e.viewRun(ctx, *runRef)
						if err != nil {
							return err
						}
						if view.Workflow != w.Name {
							return usageErrorf("run %s is a run of workflow %q, not %q", view.RunID, view.Workflow, w.Name).
								hint("Pass a run of the workflow drawn, such as: --run " + w.Name + "@last")
						}
						status = func(step string) string {
							if sv := view.Steps[step]; sv != nil {
								return string(sv.Status)
							}
							return ""
						}
					}
					out = termtext.Lines(graph.Text(w.Graph, status))
					if status != nil && e.useColor(e.stdout) {
						out = colorStatuses(out)
					}
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

// boxStatus finds a step's status at the end of the first line of its
// box in graph.Text's drawing ("│ name  completed │").
var boxStatus = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)  (completed|failed|canceled|running|pending|waiting|blocked|skipped)( *│)$`)
})

// statusColors are the terminal colours of the statuses, as flowtui's.
var statusColors = map[string]string{
	"completed": "32", "failed": "31", "canceled": "31", "running": "34", "pending": "34",
	"waiting": "33", "blocked": "33", "skipped": "90",
}

// colorStatuses colours the status words of a run's graph for a terminal.
// The codes take no columns, so the boxes stay aligned; the text was
// escaped before (termtext), so the only codes in it are these.
func colorStatuses(text string) string {
	re := boxStatus()
	return re.ReplaceAllStringFunc(text, func(m string) string {
		sub := re.FindStringSubmatch(m)
		return "  \x1b[" + statusColors[sub[1]] + "m" + sub[1] + "\x1b[0m" + sub[2]
	})
}
