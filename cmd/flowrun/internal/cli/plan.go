package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/schedule"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

func planCommand() *command {
	return &command{
		name:  "plan",
		args:  "PATH... [--workflow NAME] [--json]",
		short: "show what applying would store and do to the runs in flight, without doing it",
		long: `Plan compiles the workflow files like apply and, for each workflow (or the
one --workflow names), prints its graph, the version change against the
newest stored version with each classified change and the bump it needs,
and what applying would do to each unfinished run of the workflow: move to a
newer PATCH, finish on its own version, or block for a decision. It reads
the database only when it exists and never writes. With --server it plans
against the server's stored versions and runs, writing nothing there
either (a token of scope read is enough). It exits 2 when the
version would be refused (the same rules as apply), 0 otherwise. --json
prints one object with valid, workflows (each with its steps, version_change
and runs) and diagnostics instead.`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			name := fs.String("workflow", "", "the workflow to plan when the files define several")
			asJSON := fs.Bool("json", false, "print the plan as one JSON object")
			return func(ctx context.Context, args []string) error {
				var out *planJSON
				if *asJSON {
					out = &planJSON{Workflows: []*planWorkflowJSON{}, Diagnostics: []diagJSON{}}
					e.diags = &out.Diagnostics
					defer func() { e.diags = nil }()
				}
				// With --server a child in none of the files is read from
				// the server, which compiles the files again with it: the
				// graph here is the one the server plans.
				mod, err := e.load(ctx, args)
				if err != nil && out != nil {
					var xe *exitError
					if errors.As(err, &xe) && xe.code == ExitInvalid {
						if len(out.Diagnostics) == 0 {
							out.Diagnostics = append(out.Diagnostics, errorDiagJSON(xe))
						}
						if werr := e.writeJSON(out); werr != nil {
							return werr
						}
						return usageErrorf("%s", xe.msg).hint("The diagnostics are in the JSON on standard output.")
					}
				}
				if err != nil {
					return err
				}
				ws := mod.Workflows
				if *name != "" {
					w, err := e.pickWorkflow(mod, *name)
					if err != nil {
						return err
					}
					ws = []*lang.Workflow{w}
				}
				planned, err := e.planOf(ctx, mod, args)
				if err != nil && out != nil {
					var xe *exitError
					if errors.As(err, &xe) && xe.code == ExitInvalid {
						// The server's compile refused the files.
						if len(out.Diagnostics) == 0 {
							out.Diagnostics = append(out.Diagnostics, errorDiagJSON(xe))
						}
						if werr := e.writeJSON(out); werr != nil {
							return werr
						}
						return usageErrorf("%s", xe.msg).hint("The diagnostics are in the JSON on standard output.")
					}
				}
				if err != nil {
					return err
				}
				var refused error
				for i, w := range ws {
					var js *planWorkflowJSON
					if out != nil {
						js = &planWorkflowJSON{Steps: []planStepJSON{}, Runs: []planRunJSON{}}
						out.Workflows = append(out.Workflows, js)
					} else if i > 0 {
						fmt.Fprintln(e.stdout)
					}
					if err := e.planWorkflow(planned, mod, w, js); err != nil {
						var xe *exitError
						if !errors.As(err, &xe) || xe.code != ExitInvalid {
							return err
						}
						if refused == nil {
							refused = err
						}
					}
				}
				if out != nil {
					out.Valid = refused == nil
					if err := e.writeJSON(out); err != nil {
						return err
					}
					if refused != nil {
						var xe *exitError
						errors.As(refused, &xe)
						return usageErrorf("%s", xe.message()).hint("The diagnostics are in the JSON on standard output.")
					}
				}
				return refused
			}
		},
	}
}

// planOf is the plan of mod's workflows (api.Planner) from the store, or
// through the server with --server (the files sent as they are); nil when
// there is no database, so nothing is stored yet.
func (e *env) planOf(ctx context.Context, mod *lang.Module, paths []string) (map[string]*api.PlannedWorkflow, error) {
	d, err := e.door(ctx)
	if errors.Is(err, errNoDatabase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var res *api.PlanResult
	if l, ok := d.(*api.Local); ok {
		// Compiled already: plan the module itself.
		res, err = l.PlanModule(ctx, mod)
	} else {
		res, err = d.Plan(ctx, moduleFiles(mod))
	}
	var de *api.DeployError
	if errors.As(err, &de) {
		if diags, files := de.Diags(); files == nil && diags.HasErrors() {
			// The server's compile found errors the files alone do not
			// have (a child it does not store): its diagnostics, quoting
			// these files, as a compile here words them (its warnings
			// were printed here already).
			var errs hcl.Diagnostics
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if werr := e.writeDiags(mod.Files, errs); werr != nil {
				return nil, fmt.Errorf("writing diagnostics: %w", werr)
			}
			return nil, compileError(errs, paths)
		}
	}
	switch {
	case de != nil:
		return nil, e.deployError(err)
	case err != nil && e.remote.url == "":
		return nil, storedGraphError(err)
	case err != nil:
		return nil, err
	}
	out := make(map[string]*api.PlannedWorkflow, len(res.Workflows))
	for i := range res.Workflows {
		out[res.Workflows[i].Workflow] = &res.Workflows[i]
	}
	for _, w := range mod.Workflows {
		if out[w.Name] == nil {
			return nil, fmt.Errorf("the plan of %s holds no workflow %q: its files compile to other workflows there", e.remote.url, w.Name)
		}
	}
	return out, nil
}

// moduleFiles are mod's files as a deploy or a plan sends them, by name.
func moduleFiles(mod *lang.Module) []api.SourceFile {
	files := make([]api.SourceFile, 0, len(mod.Files))
	for name, f := range mod.Files {
		files = append(files, api.SourceFile{Name: name, Source: string(f.Bytes)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files
}

// planWorkflow prints the plan of one workflow, or fills js with it
// (plan --json); planned is nil when there is no database. A version
// apply would refuse is printed and returned as the exit-2 error.
func (e *env) planWorkflow(planned map[string]*api.PlannedWorkflow, mod *lang.Module, w *lang.Workflow, js *planWorkflowJSON) error {
	g := w.Graph
	h, err := graph.Hash(g)
	if err != nil {
		return fmt.Errorf("hashing workflow %q: %w", w.Name, err)
	}
	say := func(format string, args ...any) {
		if js == nil {
			fmt.Fprintf(e.stdout, format, args...)
		}
	}
	say("workflow %q version %s (graph %s, %s) from %s\n", w.Name, g.Version, shortHash(h), plural(len(g.Steps), "step", "steps"), w.File)
	if js != nil {
		js.Workflow, js.File, js.Version, js.GraphHash = w.Name, w.File, g.Version, h
	}
	for _, s := range g.Steps {
		if js != nil {
			js.Steps = append(js.Steps, planStepJSON{Name: s.Name, Kind: string(s.Action.Kind), Needs: append([]string{}, s.Needs...)})
			continue
		}
		line := fmt.Sprintf("  step %-14s %s", s.Name, s.Action.Kind)
		if len(s.Needs) > 0 {
			line += "  after " + strings.Join(s.Needs, ", ")
		}
		fmt.Fprintln(e.stdout, line)
	}
	e.planSchedules(g, js)
	change := func(result string) *versionChangeJSON {
		if js == nil {
			return &versionChangeJSON{}
		}
		js.VersionChange = versionChangeJSON{Result: result, Changes: []changeJSON{}}
		return &js.VersionChange
	}
	if planned == nil {
		change("first")
		say("version: %s would be the first stored version (there is no database at %s yet)\n", g.Version, e.dsn)
		return nil
	}
	pw := planned[w.Name]
	c, err := pw.VersionCheck()
	if err != nil {
		return err
	}
	var cerr error
	if err := api.VersionRefusal(mod, w, c); err != nil {
		cerr = e.deployError(err)
	}
	if c.Newest.Version == "" && cerr == nil {
		change("first")
		say("version: %s would be the first stored version of %q\n", g.Version, w.Name)
		return nil
	}
	if cerr != nil {
		vc := change("refused")
		if c.Newest.Version != "" {
			from := c.Newest.Version
			vc.From = &from
			say("version: %s would be refused\n", g.Version)
		}
		return cerr
	}
	if c.Against.Version == g.Version && c.Against.Hash == h {
		vc := change("stored")
		from := c.Against.Version
		vc.From = &from
		say("version: %s is already stored with this graph; applying stores nothing\n", g.Version)
	} else if c.Replace {
		vc := change("replace")
		from, required, rev := c.Against.Version, bumpJSON(graph.RequiredBump(c.Changes)), c.Revision
		vc.From, vc.RequiredBump, vc.Revision, vc.Changes = &from, &required, &rev, changesJSON(c.Changes)
		say("version: %s is stored with another graph (revision %d); applying replaces it in place as revision %d (a development version, MAJOR 0: no unfinished run is bound to it)\n",
			g.Version, c.Against.Revision, c.Revision)
		if js == nil {
			for _, c := range c.Changes {
				fmt.Fprintf(e.stdout, "  %s\n", termtext.Line(c.String()))
			}
		}
	} else {
		newest := c.Newest
		og, err := pw.Graph()
		if err != nil {
			return err
		}
		if og == nil {
			return fmt.Errorf("the plan of workflow %q holds no stored graph of version %s to compare with", w.Name, newest.Version)
		}
		changes := graph.Diff(og, g)
		ov, _ := graph.ParseVersion(newest.Version)
		nv, _ := graph.ParseVersion(g.Version)
		vc := change("new")
		from, declared, required := newest.Version, bumpJSON(ov.BumpTo(nv)), bumpJSON(graph.RequiredBump(changes))
		vc.From, vc.DeclaredBump, vc.RequiredBump, vc.Changes = &from, &declared, &required, changesJSON(changes)
		say("version: %s → %s declares %s; the changes need %s\n", newest.Version, g.Version, ov.BumpTo(nv), graph.RequiredBump(changes))
		if js == nil {
			for _, c := range changes {
				fmt.Fprintf(e.stdout, "  %s\n", termtext.Line(c.String()))
			}
		}
	}
	return e.planRuns(pw.RunPlans(), g.Version, js)
}

// planSchedules prints a workflow's schedules with their next fires from
// now, each in its zone with UTC beside it, or fills js with them.
func (e *env) planSchedules(g *graph.Graph, js *planWorkflowJSON) {
	now := e.clock.Now()
	for _, sc := range g.Schedules {
		spec, err := schedule.Parse(schedule.Params{Cron: sc.Cron, Every: sc.Every, Timezone: sc.Timezone})
		if err != nil {
			continue // the compiler checked it
		}
		j := planScheduleJSON{Name: sc.Name, Kind: string(spec.Kind()), Spec: spec.Text(), Timezone: spec.Location().String(), NextFires: []string{}}
		var fires []time.Time
		for t, i := now, 0; i < 3; i++ {
			if t = spec.Next(t); t.IsZero() {
				break
			}
			j.NextFires = append(j.NextFires, interp.JSONTime(t))
			fires = append(fires, t)
		}
		words := schedule.AllInZone(fires, j.Timezone)
		if js != nil {
			js.Schedules = append(js.Schedules, j)
			continue
		}
		fmt.Fprintf(e.stdout, "  schedule %s  %s %q in %s: next fires at %s\n", termtext.Line(sc.Name), j.Kind, j.Spec, j.Timezone, strings.Join(words, ", "))
	}
}

// planRuns prints what applying version would do to each unfinished run
// of the workflow (interp.Engine.PlanRuns), or fills js with it.
func (e *env) planRuns(plans []interp.RunPlan, version string, js *planWorkflowJSON) error {
	if js != nil {
		for _, p := range plans {
			js.Runs = append(js.Runs, planRunJSONOf(p))
			if p.Binding.Block {
				js.Blocks++
			}
		}
		return nil
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
			what = fmt.Sprintf("stays blocked until decided: flowrun resume %s --choose old|new|migrate%s", run.ID, e.serverFlag())
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

// planJSON is plan --json (spec/semantics.md §16).
type planJSON struct {
	Valid       bool                `json:"valid"`
	Workflows   []*planWorkflowJSON `json:"workflows"`
	Diagnostics []diagJSON          `json:"diagnostics"`
}

type planWorkflowJSON struct {
	Workflow      string            `json:"workflow"`
	File          string            `json:"file"`
	Version       string            `json:"version"`
	GraphHash     string            `json:"graph_hash"`
	Steps         []planStepJSON    `json:"steps"`
	VersionChange versionChangeJSON `json:"version_change"`
	Runs          []planRunJSON     `json:"runs"`
	Blocks        int               `json:"blocks"`
	// Schedules are the workflow's schedule blocks with their next fires
	// from now (absent when it has none).
	Schedules []planScheduleJSON `json:"schedules,omitempty"`
}

// planScheduleJSON is one schedule of a planned workflow.
type planScheduleJSON struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Spec      string   `json:"spec"`
	Timezone  string   `json:"timezone"`
	NextFires []string `json:"next_fires"`
}

type planStepJSON struct {
	Name  string   `json:"name"`
	Kind  string   `json:"kind"`
	Needs []string `json:"needs"`
}

type versionChangeJSON struct {
	// Result: first, stored, new, replace or refused.
	Result       string       `json:"result"`
	From         *string      `json:"from"`
	DeclaredBump *string      `json:"declared_bump"`
	RequiredBump *string      `json:"required_bump"`
	Changes      []changeJSON `json:"changes"`
	// Revision is the revision a replace stores (null otherwise).
	Revision *int `json:"revision"`
}

type planRunJSON struct {
	RunID   string  `json:"run_id"`
	Version string  `json:"version"`
	Status  string  `json:"status"`
	Action  string  `json:"action"`
	MoveTo  *string `json:"move_to"`
	Newest  *string `json:"newest"`
	Detail  string  `json:"detail"`
}

// planRunJSONOf says what applying does to one run: action is
// stays_blocked, block, move, finish or unchanged.
func planRunJSONOf(p interp.RunPlan) planRunJSON {
	b := p.Binding
	j := planRunJSON{RunID: p.Run.ID, Version: p.Run.Version, Status: string(p.Run.Status), Detail: b.String()}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	j.MoveTo, j.Newest = opt(b.MoveTo), opt(b.Newest)
	switch {
	case p.Run.Status == store.RunBlocked:
		j.Action, j.Detail = "stays_blocked", "stays blocked until decided (old, new or migrate)"
	case b.Block:
		j.Action = "block"
	case b.MoveTo != "":
		j.Action = "move"
	case b.Finishes():
		j.Action = "finish"
	default:
		j.Action = "unchanged"
	}
	return j
}

// checkStoredVersions checks the version of each of ws (workflows of mod)
// against the stored versions when the database exists (validate), reading
// only.
func (e *env) checkStoredVersions(ctx context.Context, mod *lang.Module, ws []*lang.Workflow) error {
	st, err := e.openStore(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return nil
	}
	if err != nil {
		return err
	}
	eng := e.engine(st, nil)
	for _, w := range ws {
		if _, err := e.checkVersion(ctx, eng, mod, w); err != nil {
			return err
		}
	}
	return nil
}
