package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Planner says what a deploy would do, writing nothing: flowrun plan and
// diff, on the store or through a server (--server).
type Planner interface {
	// Plan compiles the files as Deploy does (the same front end, a
	// child looked up among the stored versions) and checks each
	// workflow's version against the stored ones with the same rules,
	// but stores nothing: per workflow, the version check, the newest
	// stored graph the changes are classified against and what storing
	// the version would do to each unfinished run. A file that does not
	// compile is a *DeployError; a version the rules refuse is not an
	// error here but the check's refusal (PlannedWorkflow.Check).
	Plan(ctx context.Context, files []SourceFile) (*PlanResult, error)
	// VersionGraph is the stored graph of a workflow's version (diff
	// WORKFLOW@VERSION); store.ErrNotFound when it is not stored.
	VersionGraph(ctx context.Context, workflow, version string) (*graph.Graph, error)
}

// PlanResult is a plan, a workflow at a time in the order of the files
// (POST /v1/versions/plan).
type PlanResult struct {
	Workflows []PlannedWorkflow `json:"workflows"`
}

// PlannedWorkflow is the plan of one workflow: what flowrun plan prints
// about it beside its own graph.
type PlannedWorkflow struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	// GraphHash is the hash of the graph the files compile to.
	GraphHash string           `json:"graph_hash"`
	Check     VersionCheckJSON `json:"check"`
	// NewestGraph is the graph of Check.Newest when the version is a new
	// one (neither the first, nor stored, nor a replacement, nor
	// refused): the graph its changes are classified against.
	NewestGraph json.RawMessage `json:"newest_graph,omitempty"`
	// Runs says what storing the version would do to each unfinished run
	// of the workflow (none when it is refused or the first).
	Runs []RunPlanJSON `json:"runs"`
}

// VersionCheckJSON is the wire form of an interp.VersionCheck.
type VersionCheckJSON struct {
	// Against and Newest are null when the workflow has no stored
	// version.
	Against  *StoredVersionJSON `json:"against"`
	Newest   *StoredVersionJSON `json:"newest"`
	NewMajor bool               `json:"new_major"`
	Replace  bool               `json:"replace"`
	Revision int                `json:"revision"`
	Changes  []ChangeJSON       `json:"changes"`
	// Refused is why the version rules refuse the version, null when
	// they hold.
	Refused *RefusalJSON `json:"refused"`
}

// StoredVersionJSON names a stored version of a workflow.
type StoredVersionJSON struct {
	Workflow  string `json:"workflow"`
	Version   string `json:"version"`
	Revision  int    `json:"revision"`
	GraphHash string `json:"graph_hash"`
}

// ChangeJSON is one classified change between two graphs, as plan --json
// and diff --json print it: bump is none, patch, minor or major.
type ChangeJSON struct {
	Path string `json:"path"`
	What string `json:"what"`
	Bump string `json:"bump"`
}

// RefusalJSON is why a version is refused: kind "bump" (a graph.BumpError:
// reason lower, same_version or too_small), "in_use" (a development
// version with an unfinished run bound to it) or "other" (message only).
type RefusalJSON struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Bump: the stored version, the declared one, the bump declared and
	// the one the changes need.
	Reason   string       `json:"reason,omitempty"`
	Old      string       `json:"old,omitempty"`
	New      string       `json:"new,omitempty"`
	Declared string       `json:"declared,omitempty"`
	Required string       `json:"required,omitempty"`
	Changes  []ChangeJSON `json:"changes,omitempty"`
	// In use: the oldest unfinished run bound to the version, its status
	// and how many are bound.
	Run    string `json:"run,omitempty"`
	Status string `json:"status,omitempty"`
	Runs   int    `json:"runs,omitempty"`
}

// RunPlanJSON is the wire form of an interp.RunPlan.
type RunPlanJSON struct {
	RunID   string      `json:"run_id"`
	Version string      `json:"version"`
	Status  string      `json:"status"`
	Binding BindingJSON `json:"binding"`
}

// BindingJSON is the wire form of an interp.Binding.
type BindingJSON struct {
	Bound      string `json:"bound"`
	MoveTo     string `json:"move_to"`
	Newest     string `json:"newest"`
	Block      bool   `json:"block"`
	DecidedOld bool   `json:"decided_old"`
}

// BumpWord is a bump as the JSON forms write it: none, patch, minor,
// major.
func BumpWord(b graph.Bump) string { return strings.ToLower(b.String()) }

// bumpOf is the bump a BumpWord names.
func bumpOf(s string) (graph.Bump, error) {
	for _, b := range []graph.Bump{graph.BumpNone, graph.BumpPatch, graph.BumpMinor, graph.BumpMajor} {
		if BumpWord(b) == s {
			return b, nil
		}
	}
	return graph.BumpNone, fmt.Errorf("unknown bump %q", s)
}

// ChangesJSON is the JSON form of changes (never null).
func ChangesJSON(changes []graph.Change) []ChangeJSON {
	out := make([]ChangeJSON, 0, len(changes))
	for _, c := range changes {
		out = append(out, ChangeJSON{Path: c.Path, What: c.What, Bump: BumpWord(c.Bump)})
	}
	return out
}

func changesOf(js []ChangeJSON) ([]graph.Change, error) {
	var out []graph.Change
	for _, c := range js {
		b, err := bumpOf(c.Bump)
		if err != nil {
			return nil, err
		}
		out = append(out, graph.Change{Path: c.Path, What: c.What, Bump: b})
	}
	return out, nil
}

// bumpReasons are the wire words of the bump refusals' reasons. A table of
// pairs, not a map, is data in the binary rather than work at start-up.
var bumpReasons = [...]struct {
	reason graph.BumpReason
	word   string
}{{graph.BumpLower, "lower"}, {graph.BumpSameVersion, "same_version"}, {graph.BumpTooSmall, "too_small"}}

// bumpReasonWord is the wire word of r ("" for a reason without one).
func bumpReasonWord(r graph.BumpReason) string {
	for _, b := range bumpReasons {
		if b.reason == r {
			return b.word
		}
	}
	return ""
}

func storedVersionJSON(v store.Version) *StoredVersionJSON {
	if v.Version == "" {
		return nil
	}
	return &StoredVersionJSON{Workflow: v.Workflow, Version: v.Version, Revision: v.Revision, GraphHash: v.Hash}
}

func storedVersionOf(js *StoredVersionJSON) (store.Version, error) {
	if js == nil {
		return store.Version{}, nil
	}
	sv, err := graph.ParseVersion(js.Version)
	if err != nil {
		return store.Version{}, err
	}
	return store.Version{Workflow: js.Workflow, Version: js.Version, Major: sv.Major, Minor: sv.Minor, Patch: sv.Patch, Hash: js.GraphHash, Revision: js.Revision}, nil
}

// VersionCheckOf is the wire form of c.
func VersionCheckOf(c interp.VersionCheck) VersionCheckJSON {
	j := VersionCheckJSON{Against: storedVersionJSON(c.Against), Newest: storedVersionJSON(c.Newest), NewMajor: c.NewMajor,
		Replace: c.Replace, Revision: c.Revision, Changes: ChangesJSON(c.Changes)}
	var be *graph.BumpError
	var inUse *store.VersionInUseError
	switch {
	case errors.As(c.Refused, &be):
		j.Refused = &RefusalJSON{Kind: "bump", Message: be.Error(), Reason: bumpReasonWord(be.Reason), Old: be.Old.String(), New: be.New.String(),
			Declared: BumpWord(be.Declared), Required: BumpWord(be.Required), Changes: ChangesJSON(be.Changes)}
	case errors.As(c.Refused, &inUse):
		j.Refused = &RefusalJSON{Kind: "in_use", Message: inUse.Error(), Run: inUse.Run, Status: string(inUse.Status), Runs: inUse.Runs}
	case c.Refused != nil:
		j.Refused = &RefusalJSON{Kind: "other", Message: c.Refused.Error()}
	}
	return j
}

// VersionCheck rebuilds the interp.VersionCheck of a planned workflow,
// its refusal included, so that a plan through a server words it as one
// on the store does (VersionRefusal).
func (p *PlannedWorkflow) VersionCheck() (interp.VersionCheck, error) {
	j := p.Check
	var c interp.VersionCheck
	var err error
	if c.Against, err = storedVersionOf(j.Against); err != nil {
		return c, fmt.Errorf("the plan of workflow %q: %w", p.Workflow, err)
	}
	if c.Newest, err = storedVersionOf(j.Newest); err != nil {
		return c, fmt.Errorf("the plan of workflow %q: %w", p.Workflow, err)
	}
	c.NewMajor, c.Replace, c.Revision = j.NewMajor, j.Replace, j.Revision
	if c.Changes, err = changesOf(j.Changes); err != nil {
		return c, fmt.Errorf("the plan of workflow %q: %w", p.Workflow, err)
	}
	r := j.Refused
	if r == nil {
		return c, nil
	}
	switch r.Kind {
	case "bump":
		be := &graph.BumpError{Workflow: p.Workflow}
		for _, b := range bumpReasons {
			if b.word == r.Reason {
				be.Reason = b.reason
			}
		}
		var errs [5]error
		be.Old, errs[0] = graph.ParseVersion(r.Old)
		be.New, errs[1] = graph.ParseVersion(r.New)
		be.Declared, errs[2] = bumpOf(r.Declared)
		be.Required, errs[3] = bumpOf(r.Required)
		be.Changes, errs[4] = changesOf(r.Changes)
		if err := errors.Join(errs[:]...); err != nil || be.Reason == 0 {
			return c, fmt.Errorf("the plan of workflow %q: a refusal that cannot be read (%v, reason %q)", p.Workflow, err, r.Reason)
		}
		c.Refused = be
	case "in_use":
		c.Refused = &store.VersionInUseError{Workflow: p.Workflow, Version: p.Version, Run: r.Run, Status: store.RunStatus(r.Status), Runs: r.Runs}
	default:
		c.Refused = errors.New(r.Message)
	}
	return c, nil
}

// Graph is the newest stored graph the plan compares with (nil when there
// is none to compare with).
func (p *PlannedWorkflow) Graph() (*graph.Graph, error) {
	if len(p.NewestGraph) == 0 {
		return nil, nil
	}
	g, err := graph.Decode(p.NewestGraph)
	if err != nil {
		return nil, fmt.Errorf("the stored graph of workflow %q in the plan: %w", p.Workflow, err)
	}
	return g, nil
}

// RunPlans rebuilds the interp.RunPlans of a planned workflow (the run's
// id, version and status; nothing else of the run).
func (p *PlannedWorkflow) RunPlans() []interp.RunPlan {
	out := make([]interp.RunPlan, 0, len(p.Runs))
	for _, r := range p.Runs {
		b := r.Binding
		out = append(out, interp.RunPlan{
			Run:     store.Run{ID: r.RunID, Workflow: p.Workflow, Version: r.Version, Status: store.RunStatus(r.Status)},
			Binding: interp.Binding{Bound: b.Bound, MoveTo: b.MoveTo, Newest: b.Newest, Block: b.Block, DecidedOld: b.DecidedOld},
		})
	}
	return out
}

// Plan implements Planner: the files compile here, as Deploy compiles
// them.
func (l *Local) Plan(ctx context.Context, files []SourceFile) (*PlanResult, error) {
	mod, err := l.compile(ctx, files, "plan again")
	if err != nil {
		return nil, err
	}
	return l.PlanModule(ctx, mod)
}

// PlanModule is Plan of a compiled module.
func (l *Local) PlanModule(ctx context.Context, mod *lang.Module) (*PlanResult, error) {
	res := &PlanResult{Workflows: []PlannedWorkflow{}}
	for _, w := range mod.Workflows {
		h, err := graph.Hash(w.Graph)
		if err != nil {
			return nil, fmt.Errorf("hashing workflow %q: %w", w.Name, err)
		}
		c, err := l.eng.CheckVersion(ctx, interp.CheckVersionParams{Graph: w.Graph})
		if err != nil {
			return nil, err
		}
		p := PlannedWorkflow{Workflow: w.Name, Version: w.Graph.Version, GraphHash: h, Check: VersionCheckOf(c), Runs: []RunPlanJSON{}}
		if c.Refused == nil && c.Newest.Version != "" {
			if !c.Replace && (c.Against.Version != w.Graph.Version || c.Against.Hash != h) {
				og, err := l.eng.Graph(ctx, c.Newest.Workflow, c.Newest.Hash)
				if err != nil {
					return nil, err
				}
				if p.NewestGraph, err = graph.Encode(og); err != nil {
					return nil, fmt.Errorf("encoding the stored graph of workflow %q version %s: %w", c.Newest.Workflow, c.Newest.Version, err)
				}
			}
			plans, err := l.eng.PlanRuns(ctx, interp.PlanRunsParams{Workflow: w.Name, Version: w.Graph.Version})
			if err != nil {
				return nil, err
			}
			for _, rp := range plans {
				b := rp.Binding
				p.Runs = append(p.Runs, RunPlanJSON{RunID: rp.Run.ID, Version: rp.Run.Version, Status: string(rp.Run.Status),
					Binding: BindingJSON{Bound: b.Bound, MoveTo: b.MoveTo, Newest: b.Newest, Block: b.Block, DecidedOld: b.DecidedOld}})
			}
		}
		res.Workflows = append(res.Workflows, p)
	}
	return res, nil
}

// VersionGraph implements Planner.
func (l *Local) VersionGraph(ctx context.Context, workflow, version string) (*graph.Graph, error) {
	_, g, err := l.eng.VersionGraph(ctx, workflow, version)
	return g, err
}

// Plan implements Planner: the server compiles and checks the files (POST
// /v1/versions/plan, scope read).
func (c *Client) Plan(ctx context.Context, files []SourceFile) (*PlanResult, error) {
	res := &PlanResult{}
	if err := c.call(ctx, http.MethodPost, "/v1/versions/plan", nil, struct {
		Files []SourceFile `json:"files"`
	}{files}, res); err != nil {
		return nil, err
	}
	return res, nil
}

// VersionGraph implements Planner (GET
// /v1/workflows/{workflow}/versions/{version}/graph, scope read).
func (c *Client) VersionGraph(ctx context.Context, workflow, version string) (*graph.Graph, error) {
	var raw json.RawMessage
	path := "/v1/workflows/" + url.PathEscape(workflow) + "/versions/" + url.PathEscape(version) + "/graph"
	if err := c.call(ctx, http.MethodGet, path, nil, nil, &raw); err != nil {
		return nil, err
	}
	g, err := graph.Decode(raw)
	if err != nil {
		return nil, &ServerError{Server: c.Server(), Op: http.MethodGet + " " + path, Err: fmt.Errorf("the answer is not a graph: %w", err)}
	}
	return g, nil
}

// DiagnosticJSON is a compiler diagnostic on the wire (a refused deploy's
// or plan's, DeployProblemJSON.Diags): a client that holds the same files
// prints it, text or JSON, as it would print its own.
type DiagnosticJSON struct {
	Severity string     `json:"severity"` // error or warning
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	Subject  *RangeJSON `json:"subject,omitempty"`
	Context  *RangeJSON `json:"context,omitempty"`
}

// RangeJSON is a source range of a file: lines and columns count from 1,
// bytes from 0; end is not included.
type RangeJSON struct {
	Filename string  `json:"filename"`
	Start    PosJSON `json:"start"`
	End      PosJSON `json:"end"`
}

// PosJSON is a position in a file.
type PosJSON struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

func rangeJSON(r *hcl.Range) *RangeJSON {
	if r == nil {
		return nil
	}
	return &RangeJSON{Filename: r.Filename, Start: PosJSON(r.Start), End: PosJSON(r.End)}
}

func rangeOf(r *RangeJSON) *hcl.Range {
	if r == nil {
		return nil
	}
	return &hcl.Range{Filename: r.Filename, Start: hcl.Pos(r.Start), End: hcl.Pos(r.End)}
}

// DiagnosticsJSON is the wire form of diags.
func DiagnosticsJSON(diags hcl.Diagnostics) []DiagnosticJSON {
	out := make([]DiagnosticJSON, 0, len(diags))
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		out = append(out, DiagnosticJSON{Severity: sev, Summary: d.Summary, Detail: d.Detail, Subject: rangeJSON(d.Subject), Context: rangeJSON(d.Context)})
	}
	return out
}

// diagnosticsOf rebuilds the diagnostics of their wire form.
func diagnosticsOf(js []DiagnosticJSON) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range js {
		sev := hcl.DiagError
		if d.Severity == "warning" {
			sev = hcl.DiagWarning
		}
		out = append(out, &hcl.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Subject: rangeOf(d.Subject), Context: rangeOf(d.Context)})
	}
	return out
}
