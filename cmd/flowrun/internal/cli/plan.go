package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

func planCommand() *command {
	return &command{
		name:  "plan",
		args:  "PATH... [--workflow NAME]",
		short: "show what applying would store and do to the runs in flight, without doing it",
		long: `Plan compiles the workflow files like apply and, for each workflow (or the
one --workflow names), prints its graph, the version change against the
newest stored version with each classified change and the bump it needs,
and what applying would do to each unfinished run of the workflow: move to a
newer PATCH, finish on its own version, or block for a decision. It reads
the database only when it exists and never writes. It exits 2 when the
version would be refused (the same rules as apply), 0 otherwise.`,
		store: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			name := fs.String("workflow", "", "the workflow to plan when the files define several")
			return func(ctx context.Context, args []string) error {
				mod, err := e.load(ctx, args)
				if err != nil {
					return err
				}
				ws := mod.Workflows
				if *name != "" {
					w, err := pickWorkflow(mod, *name)
					if err != nil {
						return err
					}
					ws = []*lang.Workflow{w}
				}
				var eng *interp.Engine // nil: there is no database
				st, err := e.openStore(ctx, false)
				if err == nil {
					eng = e.engine(st, nil)
				} else if !errors.Is(err, errNoDatabase) {
					return err
				}
				var refused error
				for i, w := range ws {
					if i > 0 {
						fmt.Fprintln(e.stdout)
					}
					if err := e.planWorkflow(ctx, eng, mod, w); err != nil {
						var xe *exitError
						if !errors.As(err, &xe) || xe.code != ExitInvalid {
							return err
						}
						if refused == nil {
							refused = err
						}
					}
				}
				return refused
			}
		},
	}
}

// planWorkflow prints the plan of one workflow; eng is nil when there is
// no database. A version apply would refuse is printed and returned as the
// exit-2 error.
func (e *env) planWorkflow(ctx context.Context, eng *interp.Engine, mod *lang.Module, w *lang.Workflow) error {
	g := w.Graph
	h, err := graph.Hash(g)
	if err != nil {
		return fmt.Errorf("hashing workflow %q: %w", w.Name, err)
	}
	fmt.Fprintf(e.stdout, "workflow %q version %s (graph %s, %s) from %s\n", w.Name, g.Version, shortHash(h), plural(len(g.Steps), "step", "steps"), w.File)
	for _, s := range g.Steps {
		line := fmt.Sprintf("  step %-14s %s", s.Name, s.Action.Kind)
		if len(s.Needs) > 0 {
			line += "  after " + strings.Join(s.Needs, ", ")
		}
		fmt.Fprintln(e.stdout, line)
	}
	if eng == nil {
		fmt.Fprintf(e.stdout, "version: %s would be the first stored version (there is no database at %s yet)\n", g.Version, e.dsn)
		return nil
	}
	c, cerr := e.checkVersion(ctx, eng, mod, w)
	if c.Newest.Version == "" && cerr == nil {
		fmt.Fprintf(e.stdout, "version: %s would be the first stored version of %q\n", g.Version, w.Name)
		return nil
	}
	if cerr != nil {
		if c.Newest.Version != "" {
			fmt.Fprintf(e.stdout, "version: %s would be refused\n", g.Version)
		}
		return cerr
	}
	if c.Against.Version == g.Version && c.Against.Hash == h {
		fmt.Fprintf(e.stdout, "version: %s is already stored with this graph; applying stores nothing\n", g.Version)
	} else {
		newest := c.Newest
		og, err := eng.Graph(ctx, newest.Workflow, newest.Hash)
		if err != nil {
			return storedGraphError(err)
		}
		changes := graph.Diff(og, g)
		ov, _ := graph.ParseVersion(newest.Version)
		nv, _ := graph.ParseVersion(g.Version)
		fmt.Fprintf(e.stdout, "version: %s → %s declares %s; the changes need %s\n", newest.Version, g.Version, ov.BumpTo(nv), graph.RequiredBump(changes))
		for _, c := range changes {
			fmt.Fprintf(e.stdout, "  %s\n", termtext.Line(c.String()))
		}
	}
	return e.planRuns(ctx, eng, w.Name, g.Version)
}

// planRuns prints what applying version would do to each unfinished run
// of the workflow (interp.Engine.PlanRuns).
func (e *env) planRuns(ctx context.Context, eng *interp.Engine, workflow, version string) error {
	plans, err := eng.PlanRuns(ctx, interp.PlanRunsParams{Workflow: workflow, Version: version})
	if err != nil {
		return storeError("", err)
	}
	if len(plans) == 0 {
		fmt.Fprintf(e.stdout, "runs in flight: none\n")
		return nil
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "  RUN\tVERSION\tSTATUS\tWHEN APPLIED")
	for _, p := range plans {
		run := p.Run
		what := p.Binding.String()
		if run.Status == store.RunBlocked {
			what = fmt.Sprintf("stays blocked until decided: flowrun resume %s --choose old|new|migrate", run.ID)
		}
		row(tw, "  "+run.ID, run.Version, string(run.Status), what)
	}
	blocks := 0
	for _, p := range plans {
		if p.Binding.Block {
			blocks++
		}
	}
	fmt.Fprintf(e.stdout, "runs in flight: %d\n", len(plans))
	if err := tw.Flush(); err != nil {
		return err
	}
	if blocks > 0 {
		fmt.Fprintf(e.stdout, "applying %s blocks %s until decided (old, new or migrate)\n", version, plural(blocks, "run", "runs"))
	}
	return nil
}

// checkStoredVersions checks every workflow's version against the stored
// versions when the database exists (validate), reading only.
func (e *env) checkStoredVersions(ctx context.Context, mod *lang.Module) error {
	st, err := e.openStore(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return nil
	}
	if err != nil {
		return err
	}
	eng := e.engine(st, nil)
	for _, w := range mod.Workflows {
		if _, err := e.checkVersion(ctx, eng, mod, w); err != nil {
			return err
		}
	}
	return nil
}
