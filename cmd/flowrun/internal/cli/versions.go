package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/store"
)

func versionsCommand() *command {
	return &command{
		name:  "versions",
		args:  "WORKFLOW [--json]",
		short: "list a workflow's stored versions with their hashes and run counts",
		long: `Versions lists every stored version of a workflow, oldest first, with the
hash of its graph, how many runs are bound to it (with their statuses) and
when it was stored. --json prints an array, oldest first, of objects with
the fields workflow, version, revision, hash (and graph_hash, the same),
created_at, runs and runs_by_status.`,
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print a JSON array of the stored versions")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usageErrorf("versions takes one WORKFLOW name, got %s", plural(len(args), "argument", "arguments")).
						hint("Run: flowrun versions WORKFLOW; flowrun workflows lists the stored workflows")
				}
				name := args[0]
				d, err := e.door(ctx)
				if errors.Is(err, errNoDatabase) {
					return e.noDatabase(fmt.Sprintf("no version of workflow %q is stored", name))
				}
				if err != nil {
					return err
				}
				vs, err := d.Versions(ctx, name)
				if err != nil {
					return controlError(err)
				}
				if *asJSON {
					return e.writeJSON(vs)
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "VERSION\tHASH\tRUNS\tSTORED")
				for _, v := range vs {
					row(tw, v.Version+revisionCell(v.Revision), shortHash(v.GraphHash), runCounts(v.Runs, v.RunsByStatus), formatStamp(v.CreatedAt))
				}
				return tw.Flush()
			}
		},
	}
}

// runCounts renders a version's run count with its statuses, in the order
// of a run's life: "3 (1 waiting, 2 completed)".
func runCounts(n int, by map[string]int) string {
	if n == 0 {
		return "0"
	}
	var parts []string
	for _, s := range []store.RunStatus{store.RunPending, store.RunRunning, store.RunWaiting, store.RunBlocked,
		store.RunCompleted, store.RunFailed, store.RunCanceled} {
		if by[string(s)] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", by[string(s)], s))
		}
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}

// revisionCell is what versions adds to a version replaced in place
// (spec/versioning.md §8): its current revision. Runs are counted per
// version, whatever revision they ran.
func revisionCell(rev int) string {
	if rev <= 1 {
		return ""
	}
	return fmt.Sprintf(" (revision %d)", rev)
}
