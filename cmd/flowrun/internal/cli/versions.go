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
the fields workflow, version, graph_hash, created_at, runs and
runs_by_status.`,
		store: true,
		reads: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print a JSON array of the stored versions")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usageErrorf("versions takes one WORKFLOW name, got %s", plural(len(args), "argument", "arguments")).
						hint("Run: flowrun versions WORKFLOW; flowrun workflows lists the stored workflows")
				}
				name := args[0]
				notStored := usageErrorf("no version of workflow %q is stored", name).
					hint("Apply its file first (flowrun apply FILE.hcl), or check the name and --db.")
				st, err := e.openStore(ctx, false)
				if errors.Is(err, errNoDatabase) {
					return e.noDatabase(fmt.Sprintf("no version of workflow %q is stored", name))
				}
				if err != nil {
					return err
				}
				vs, err := st.VersionHeads(ctx, name)
				if err != nil {
					return storeError(fmt.Sprintf("listing the versions of workflow %q", name), err)
				}
				if len(vs) == 0 {
					if _, nearest, err := e.engine(st, nil).NearestWorkflows(ctx, name); err == nil && len(nearest) > 0 {
						notStored.msg += "; the nearest stored workflows are " + strings.Join(quoteAll(nearest), ", ")
					}
					return notStored
				}
				runs, err := st.RunList(ctx, store.RunListParams{Workflow: name})
				if err != nil {
					return storeError(fmt.Sprintf("listing the runs of workflow %q", name), err)
				}
				counts := map[string]int{}
				byStatus := map[string]map[store.RunStatus]int{}
				for _, r := range runs {
					counts[r.Version]++
					if byStatus[r.Version] == nil {
						byStatus[r.Version] = map[store.RunStatus]int{}
					}
					byStatus[r.Version][r.Status]++
				}
				if *asJSON {
					out := make([]versionJSON, 0, len(vs))
					for _, v := range vs {
						by := map[string]int{}
						for st, n := range byStatus[v.Version] {
							by[string(st)] = n
						}
						out = append(out, versionJSON{Workflow: v.Workflow, Version: v.Version, Revision: v.Revision, GraphHash: v.Hash,
							CreatedAt: jsonTime(v.CreatedAt), Runs: counts[v.Version], RunsByStatus: by})
					}
					return e.writeJSON(out)
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "VERSION\tHASH\tRUNS\tSTORED")
				for _, v := range vs {
					row(tw, v.Version+revisionCell(v.Revision), shortHash(v.Hash), runCounts(counts[v.Version], byStatus[v.Version]), formatTime(v.CreatedAt))
				}
				return tw.Flush()
			}
		},
	}
}

// runCounts renders a version's run count with its statuses, in the order
// of a run's life: "3 (1 waiting, 2 completed)".
func runCounts(n int, by map[store.RunStatus]int) string {
	if n == 0 {
		return "0"
	}
	var parts []string
	for _, s := range []store.RunStatus{store.RunPending, store.RunRunning, store.RunWaiting, store.RunBlocked,
		store.RunCompleted, store.RunFailed, store.RunCanceled} {
		if by[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", by[s], s))
		}
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}

// versionJSON is one element of versions --json (spec/semantics.md §16).
type versionJSON struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	// Revision is the version's current revision: 1, or more for a
	// development version replaced in place (spec/versioning.md §8).
	Revision  int    `json:"revision"`
	GraphHash string `json:"graph_hash"`
	CreatedAt string `json:"created_at"`
	// Runs counts the runs bound to the version; RunsByStatus by status
	// (only the statuses that occur).
	Runs         int            `json:"runs"`
	RunsByStatus map[string]int `json:"runs_by_status"`
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
