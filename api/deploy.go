package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Deployer stores workflow versions: apply of workflow files, on the
// store or through a server (apply --server).
type Deployer interface {
	// Deploy compiles the files together (a child workflow may be in any
	// of them or stored), checks each workflow's declared version against
	// the stored ones (spec/versioning.md) and, when every one holds,
	// stores them and activates their schedules. A file that does not
	// compile, or a version that breaks the version rules, is a
	// *DeployError and nothing is stored.
	Deploy(ctx context.Context, files []SourceFile) (*DeployResult, error)
}

// SourceFile is one workflow file, by its contents.
type SourceFile struct {
	// Name is the file's name as the client gave it, for diagnostics.
	Name   string `json:"name"`
	Source string `json:"source"`
}

// DeployResult says what Deploy stored, a workflow at a time in the order
// of the files.
type DeployResult struct {
	Workflows []DeployedWorkflow `json:"workflows"`
}

// DeployedWorkflow is one stored workflow version.
type DeployedWorkflow struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	// Revision is the revision stored; Replaced says it replaced the
	// stored graph of a development version (MAJOR 0) in place, whose
	// runs keep the revision they were bound to (Previous).
	Revision int  `json:"revision"`
	Replaced bool `json:"replaced"`
	Previous int  `json:"previous_revision"`
	// Blocked are the unfinished runs bound to an older MAJOR that this
	// new MAJOR version blocks until decided.
	Blocked []BlockedRun `json:"blocked"`
	// Schedules are the workflow's active schedules after the deploy.
	Schedules []interp.ScheduleJSON `json:"schedules"`
	// active are those schedules as stored (Local only).
	active []store.Schedule
}

// ActiveSchedules are the workflow's active schedules as the store holds
// them, when the deploy ran in this process (nil through a server).
func (d *DeployedWorkflow) ActiveSchedules() []store.Schedule { return d.active }

// BlockedRun is an unfinished run a new MAJOR version blocks.
type BlockedRun struct {
	RunID   string `json:"run_id"`
	Version string `json:"version"`
	Status  string `json:"status"`
}

// DeployError is a deploy refused before anything was stored: files that
// do not compile, or a version that breaks the version rules.
type DeployError struct {
	// Message says what was refused (file:line:col first when known) and
	// Hint how to fix it.
	Message, Hint string
	// Diagnostics are the compiler's, or the version check's, as text
	// (the file's lines quoted under each, no colour): what apply prints
	// above the message.
	Diagnostics string
	// diags and files are the diagnostics themselves, for a caller in
	// this process to print for its terminal (Local only).
	diags hcl.Diagnostics
	files map[string]*hcl.File
}

func (e *DeployError) Error() string { return e.Message }

// Diags returns the diagnostics and the files they quote when the error
// was made in this process; through a server, the diagnostics without
// their files (the caller quotes its own copies), or nil: use
// Diagnostics.
func (e *DeployError) Diags() (hcl.Diagnostics, map[string]*hcl.File) { return e.diags, e.files }

// newDeployError renders diags for DeployError.Diagnostics.
func newDeployError(msg, hint string, diags hcl.Diagnostics, files map[string]*hcl.File) *DeployError {
	var b bytes.Buffer
	if len(diags) > 0 {
		_ = lang.WriteDiagnostics(&b, files, diags, false, 100)
	}
	return &DeployError{Message: msg, Hint: hint, Diagnostics: b.String(), diags: diags, files: files}
}

// Deploy implements Deployer: the files compile here, and the versions'
// exec steps run in the Local's work directory (LocalOptions.WorkDir).
func (l *Local) Deploy(ctx context.Context, files []SourceFile) (*DeployResult, error) {
	mod, err := l.compile(ctx, files, "apply again; nothing was stored")
	if err != nil {
		return nil, err
	}
	return l.DeployModule(ctx, mod, func(*lang.Workflow) string { return l.opts.WorkDir })
}

// compile compiles the files of a deploy or a plan together, a child
// looked up among them and then among the stored versions: a file that
// does not compile, or files with no workflow, are a *DeployError whose
// hint ends with then (what to do once they are fixed).
func (l *Local) compile(ctx context.Context, files []SourceFile, then string) (*lang.Module, error) {
	srcs := make([]lang.Source, len(files))
	for i, f := range files {
		srcs[i] = lang.Source{Name: f.Name, Src: []byte(f.Source)}
	}
	var storeErr error
	mod, diags := lang.LoadSources(srcs, lang.LoadOptions{MaxFileSize: l.opts.MaxFileSize, NoDocuments: noDocumentsThroughAPI, Stored: func(name string) ([]*graph.Graph, error) {
		gs, err := l.eng.StoredGraphs(ctx, name)
		if err != nil && storeErr == nil {
			storeErr = err
		}
		return gs, err
	}})
	if storeErr != nil {
		return nil, storeErr
	}
	var modFiles map[string]*hcl.File
	if mod != nil {
		modFiles = mod.Files
	}
	if diags.HasErrors() {
		n := 0
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				n++
			}
		}
		return nil, newDeployError(fmt.Sprintf("%d error(s) in the workflow files", n), "Fix the errors above and "+then+".", diags, modFiles)
	}
	if mod == nil || len(mod.Workflows) == 0 {
		return nil, newDeployError("no workflow blocks found in the files", `A workflow file holds one or more blocks like: workflow "name" { version = "1.0.0" ... }.`, nil, nil)
	}
	return mod, nil
}

// noDocumentsThroughAPI is why a deploy through the API cannot compile an
// openapi action: its files are the workflow files the client sent, and a
// document beside them on the client is not among them (nor may the
// server read its own files by a name the client gives, or fetch a URL a
// client names from where it runs).
const noDocumentsThroughAPI = "a deploy through a server carries only the workflow files: the server reads no OpenAPI document beside them and fetches none by URL (language.md §8.10). Apply this workflow from a machine that has the document or can fetch it, without --server."

// DeployModule is Deploy of a compiled module: every workflow's version is
// checked first, so a refused deploy stores nothing; then each is stored
// with the directory dirOf gives it (where its runs' exec steps start)
// and its schedules are activated there.
func (l *Local) DeployModule(ctx context.Context, mod *lang.Module, dirOf func(*lang.Workflow) string) (*DeployResult, error) {
	res := &DeployResult{}
	checks := make([]interp.VersionCheck, len(mod.Workflows))
	for i, w := range mod.Workflows {
		c, err := l.eng.CheckVersion(ctx, interp.CheckVersionParams{Graph: w.Graph})
		if err != nil {
			return nil, err
		}
		if err := VersionRefusal(mod, w, c); err != nil {
			return nil, err
		}
		checks[i] = c
		d := DeployedWorkflow{Workflow: w.Name, Version: w.Graph.Version, Blocked: []BlockedRun{}}
		if c.NewMajor {
			plans, err := l.eng.PlanRuns(ctx, interp.PlanRunsParams{Workflow: w.Name, Version: w.Graph.Version})
			if err != nil {
				return nil, err
			}
			for _, p := range plans {
				if p.Binding.Block {
					d.Blocked = append(d.Blocked, BlockedRun{RunID: p.Run.ID, Version: p.Run.Version, Status: string(p.Run.Status)})
				}
			}
		}
		res.Workflows = append(res.Workflows, d)
	}
	for i, w := range mod.Workflows {
		dir := dirOf(w)
		var src []byte
		if f := mod.Files[w.File]; f != nil {
			src = f.Bytes
		}
		v, err := l.eng.StoreGraphFrom(ctx, w.Graph, dir, filepath.Base(w.File), src)
		if err != nil {
			var inUse *store.VersionInUseError
			if errors.As(err, &inUse) { // a run started since the check
				return nil, versionInUse(w, checks[i].Against, graph.RequiredBump(checks[i].Changes), inUse)
			}
			if errors.Is(err, store.ErrVersionConflict) {
				return nil, newDeployError(fmt.Sprintf("workflow %q version %s was stored with a different graph by another process", w.Name, w.Graph.Version),
					"Raise the version in "+w.File+" and apply again.", nil, nil)
			}
			return nil, err
		}
		d := &res.Workflows[i]
		d.Revision = v.Revision
		if checks[i].Replace {
			d.Replaced, d.Previous = true, checks[i].Against.Revision
		}
		scs, err := l.eng.ActivateSchedules(ctx, w.Graph, dir)
		if err != nil {
			return nil, err
		}
		d.active = scs
		if d.Schedules, err = interp.Schedules(ctx, l.st, scs); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// VersionRefusal is the *DeployError of a version check that refused the
// workflow's version (nil when it holds): a bump that does not cover the
// changes is a diagnostic on the version attribute (apply, plan).
func VersionRefusal(mod *lang.Module, w *lang.Workflow, c interp.VersionCheck) error {
	var be *graph.BumpError
	var inUse *store.VersionInUseError
	switch {
	case errors.As(c.Refused, &be):
		d := w.BumpDiagnostic(be)
		at := versionAt(w)
		if d.Subject != nil {
			at = fmt.Sprintf("%s:%d:%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		return newDeployError(fmt.Sprintf("%s: workflow %q version %s refused: %s", at, w.Name, w.Graph.Version, bumpReason(be)),
			fmt.Sprintf("Set version = %q in %s (or check the changes with: flowrun diff %s@%s %s), then apply again.",
				be.Suggested().String(), w.File, c.Against.Workflow, c.Against.Version, w.File),
			hcl.Diagnostics{d}, mod.Files)
	case errors.As(c.Refused, &inUse):
		return versionInUse(w, c.Against, graph.RequiredBump(c.Changes), inUse)
	case c.Refused != nil:
		return newDeployError(fmt.Sprintf("%s: %v", versionAt(w), c.Refused), "Fix the workflow's version and apply again.", nil, nil)
	}
	return nil
}

// versionAt is where w's version attribute is, FILE:LINE:COL, for a
// refusal of the version (the file alone when it has no position).
func versionAt(w *lang.Workflow) string {
	r := w.VersionRange()
	if r.Filename == "" || r.Start.Line == 0 {
		return w.File
	}
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// versionInUse refuses to replace development version v of w while
// unfinished runs are bound to it (spec/versioning.md §8); need is the
// bump the changes from v's current revision need, for the version to
// suggest instead.
func versionInUse(w *lang.Workflow, v store.Version, need graph.Bump, in *store.VersionInUseError) error {
	others := ""
	if in.Runs > 1 {
		others = fmt.Sprintf(" (and %d other unfinished run%s)", in.Runs-1, map[bool]string{true: "s"}[in.Runs > 2])
	}
	next := graph.SemVer{Major: v.Major, Minor: v.Minor, Patch: v.Patch}.Next(max(need, graph.BumpPatch))
	return newDeployError(fmt.Sprintf("%s: workflow %q version %s is stored with another graph and cannot be replaced: run %s%s is bound to it and is still %s",
		versionAt(w), w.Name, v.Version, in.Run, others, in.Status),
		fmt.Sprintf("A development version is replaced only when no unfinished run is bound to it. Let the run finish or cancel it (flowrun cancel %s), then apply again; or set version = %q in %s to store a new version beside it.",
			in.Run, next.String(), w.File), nil, nil)
}

// bumpReason says in a few words which version rule be broke.
func bumpReason(be *graph.BumpError) string {
	switch be.Reason {
	case graph.BumpLower:
		return fmt.Sprintf("lower than the stored version %s", be.Old)
	case graph.BumpSameVersion:
		return "already stored with a different graph"
	}
	return fmt.Sprintf("it declares a %s change from %s, but the changes need %s", be.Declared, be.Old, be.Required)
}

// DeployProblemJSON is the wire form of a DeployError: the problem's
// "deploy" member (its detail is the message).
type DeployProblemJSON struct {
	Hint        string `json:"hint"`
	Diagnostics string `json:"diagnostics"`
	// Diags are the diagnostics themselves (absent for a version
	// refusal, which has none).
	Diags []DiagnosticJSON `json:"diags,omitempty"`
}

// Deploy implements Deployer: the server compiles and checks the files
// (POST /v1/versions, scope deploy).
func (c *Client) Deploy(ctx context.Context, files []SourceFile) (*DeployResult, error) {
	res := &DeployResult{}
	if err := c.call(ctx, http.MethodPost, "/v1/versions", nil, struct {
		Files []SourceFile `json:"files"`
	}{files}, res); err != nil {
		return nil, err
	}
	return res, nil
}

// WorkDirOf is the directory a workflow loaded from disk runs its exec
// steps in: its file's (language.md §9).
func WorkDirOf(w *lang.Workflow) string {
	dir, err := filepath.Abs(filepath.Dir(w.File))
	if err != nil {
		return filepath.Dir(w.File)
	}
	return dir
}
