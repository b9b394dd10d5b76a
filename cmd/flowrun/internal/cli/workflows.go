package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"
)

func workflowsCommand() *command {
	return &command{
		name:  "workflows",
		args:  "[--json]",
		short: "list the stored workflows with their newest version",
		long: `Workflows lists every workflow a version of which is stored, by name: its
newest version, how many versions are stored, and when the newest was
stored. flowrun versions WORKFLOW lists one workflow's versions. --json
prints an array of objects with the fields workflow, newest, versions and
updated_at, as GET /v1/workflows answers.`,
		store:  true,
		remote: true,
		reads:  true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "print a JSON array of the workflows")
			return func(ctx context.Context, args []string) error {
				if len(args) > 0 {
					return usageErrorf("workflows takes no arguments, got %q", args[0]).
						hint("Run: flowrun workflows, or flowrun versions " + args[0] + " for one workflow's versions")
				}
				d, err := e.door(ctx)
				if errors.Is(err, errNoDatabase) {
					return e.noDatabase("")
				}
				if err != nil {
					return err
				}
				wfs, err := d.Workflows(ctx)
				if err != nil {
					return storeError("listing the workflows", err)
				}
				if *asJSON {
					return e.writeJSON(wfs)
				}
				if len(wfs) == 0 {
					fmt.Fprintln(e.stderr, "flowrun workflows: no workflow is stored; apply one with: flowrun apply FILE.hcl")
					return nil
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "WORKFLOW\tNEWEST\tVERSIONS\tUPDATED")
				for _, w := range wfs {
					row(tw, w.Workflow, w.Newest, strconv.Itoa(w.Versions), formatStamp(w.UpdatedAt))
				}
				return tw.Flush()
			}
		},
	}
}

// formatStamp renders a JSON time (RFC 3339) for people as formatTime
// does; text that is not one stays as it is.
func formatStamp(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return formatTime(t)
}
