package flowrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/docfetch"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/backend"
)

// Options are the settings of Open. The zero value opens an existing
// database with the engine's defaults.
type Options struct {
	// Create creates a missing SQLite file (and its directory). Without
	// it a missing file is an error wrapping ErrNoDatabase.
	Create bool
	// Clock tells the time and makes timers; nil is the real clock. Tests
	// pass a fake one (package clock).
	Clock clock.Clock
	// Getenv reads the workflows' secrets; nil is os.Getenv.
	Getenv func(string) string
}

// ErrNoDatabase: the SQLite file does not exist and Options.Create is
// false. Nothing was created.
var ErrNoDatabase = backend.ErrNoDatabase

// Flow is an open flowrun database and the engine that works on it. It is
// safe for concurrent use. Close it when done.
type Flow struct {
	st  store.Store
	eng *interp.Engine
	clk clock.Clock
}

// Open opens (or with Options.Create, creates) the database dsn names:
// a postgres:// URL or a SQLite file path ("" is .flowrun/flowrun.db, as
// for the flowrun binary).
func Open(ctx context.Context, dsn string, opts Options) (*Flow, error) {
	o, err := backend.Open(ctx, dsn, backend.Options{CreateFile: opts.Create})
	if err != nil {
		return nil, fmt.Errorf("flowrun: open %q: %w", dsn, err)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	eng := interp.New(o.Store, interp.Options{Clock: clk, Getenv: opts.Getenv})
	return &Flow{st: o.Store, eng: eng, clk: clk}, nil
}

// Close closes the database.
func (f *Flow) Close() error { return f.st.Close() }

// Module is a set of loaded workflow files, compiled and ready to apply.
type Module struct {
	m *lang.Module
}

// Workflows returns the names of the module's workflows with their
// declared versions, in the order they were read.
func (m *Module) Workflows() []Workflow {
	out := make([]Workflow, 0, len(m.m.Workflows))
	for _, w := range m.m.Workflows {
		out = append(out, Workflow{Name: w.Name, Version: w.Graph.Version, File: w.File})
	}
	return out
}

// Workflow names one workflow of a Module, or one Apply stored.
type Workflow struct {
	Name    string
	Version string
	File    string
	// Revision is the revision of the version Apply stored: 1, or more
	// when a development version (MAJOR 0) was replaced in place
	// (spec/versioning.md §8). 0 in Module.Workflows.
	Revision int
}

// LoadError is a load that found errors in the files: Error renders every
// diagnostic (file:line:col, the problem, how to fix it).
type LoadError struct {
	// Diagnostics is the text of each error, in order.
	Diagnostics []string
}

func (e *LoadError) Error() string {
	s := "flowrun: the workflow files have errors:"
	for _, d := range e.Diagnostics {
		s += "\n" + d
	}
	return s
}

// Load reads and compiles workflow files, as `flowrun apply PATH...` does:
// each path is a file or a directory whose *.hcl files are read (not
// recursing). A workflow step's child is checked against the files and
// the versions stored in f. An OpenAPI document an openapi action names by
// URL is fetched under ctx (language.md §8.10). Errors in the files are a
// *LoadError.
func (f *Flow) Load(ctx context.Context, paths ...string) (*Module, error) {
	m, diags := lang.LoadPathsWith(paths, lang.LoadOptions{Stored: f.stored(ctx), FetchDocument: fetchDocuments(ctx)})
	return module(m, diags)
}

// LoadSource compiles one workflow file held in memory; name is the file
// name its diagnostics use.
func (f *Flow) LoadSource(ctx context.Context, name string, src []byte) (*Module, error) {
	m, diags := lang.LoadFileWith(name, src, lang.LoadOptions{Stored: f.stored(ctx), FetchDocument: fetchDocuments(ctx)})
	return module(m, diags)
}

// fetchDocuments fetches the OpenAPI documents a load's openapi actions
// name by URL, under ctx, as the command line does (docfetch's bounds).
func fetchDocuments(ctx context.Context) lang.DocumentFetcher {
	return docfetch.New(ctx, docfetch.Options{})
}

func (f *Flow) stored(ctx context.Context) func(string) ([]*graph.Graph, error) {
	return func(name string) ([]*graph.Graph, error) { return f.eng.StoredGraphs(ctx, name) }
}

func module(m *lang.Module, diags hcl.Diagnostics) (*Module, error) {
	if diags.HasErrors() {
		le := &LoadError{}
		for _, d := range diags.Errs() {
			le.Diagnostics = append(le.Diagnostics, d.Error())
		}
		return nil, le
	}
	return &Module{m: m}, nil
}

// VersionError refuses to store a workflow version: it breaks the version
// promise (spec/versioning.md §3), or would replace a development version
// an unfinished run is bound to (§8). Nothing of the Apply was stored.
type VersionError struct {
	Workflow, Version string
	Err               error // a *graph.BumpError or *store.VersionInUseError
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("flowrun: workflow %q version %s refused: %v", e.Workflow, e.Version, e.Err)
}

func (e *VersionError) Unwrap() error { return e.Err }

// Apply stores the versions of the module's workflows, after checking
// each against the stored versions (interp.Engine.CheckVersion): every
// workflow is checked before any is stored, so a refusal (*VersionError)
// stores nothing. Applying a stored version again with the same graph
// stores nothing and is not an error. It starts no run.
func (f *Flow) Apply(ctx context.Context, m *Module) ([]Workflow, error) {
	for _, w := range m.m.Workflows {
		c, err := f.eng.CheckVersion(ctx, interp.CheckVersionParams{Graph: w.Graph})
		if err != nil {
			return nil, fmt.Errorf("flowrun: check workflow %q: %w", w.Name, err)
		}
		if c.Refused != nil {
			return nil, &VersionError{Workflow: w.Name, Version: w.Graph.Version, Err: c.Refused}
		}
	}
	out := make([]Workflow, 0, len(m.m.Workflows))
	for _, w := range m.m.Workflows {
		v, err := f.eng.StoreGraph(ctx, w.Graph)
		if err != nil {
			var inUse *store.VersionInUseError
			if errors.As(err, &inUse) {
				return out, &VersionError{Workflow: w.Name, Version: w.Graph.Version, Err: inUse}
			}
			return out, fmt.Errorf("flowrun: store workflow %q: %w", w.Name, err)
		}
		out = append(out, Workflow{Name: w.Name, Version: v.Version, File: w.File, Revision: v.Revision})
	}
	return out, nil
}

// Status is a run's status: pending, running, waiting, blocked, completed,
// failed or canceled.
type Status string

// Ended reports whether a run with this status is finished for good.
func (s Status) Ended() bool { return store.RunStatus(s).Terminal() }

// Run is a run as stored.
type Run struct {
	ID       string
	Workflow string
	Version  string
	Key      string
	Status   Status
	// Outputs is the run's outputs as a JSON object once it completed.
	Outputs json.RawMessage
	// Error is {"kind","message","step"} for a failed or canceled run.
	Error json.RawMessage
	// WaitReason says, for people, what a waiting or blocked run waits for.
	WaitReason string
}

func runOf(r store.Run) Run {
	return Run{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Key: r.Key, Status: Status(r.Status),
		Outputs: r.Outputs, Error: r.Error, WaitReason: r.WaitReason}
}

// StartOptions are the settings of StartWith.
type StartOptions struct {
	// Version starts this stored version; "" the newest.
	Version string
	// New starts a new run even when a run with the same key exists
	// (language §2: by default an unfinished run with the key is returned,
	// and so is one completed on the same MAJOR.MINOR).
	New bool
	// Dir is the directory exec steps run in; "" the one recorded when the
	// version was applied, else the process's.
	Dir string
}

// Start starts a run of the newest stored version of workflow with
// inputs (checked against the workflow's declared inputs), or returns the
// run with the same key it continues (language §2). The run is pending
// until someone works on it: Wait, Drive, or a `flowrun worker`.
func (f *Flow) Start(ctx context.Context, workflow string, inputs map[string]any) (Run, error) {
	return f.StartWith(ctx, workflow, inputs, StartOptions{})
}

// StartWith is Start with options.
func (f *Flow) StartWith(ctx context.Context, workflow string, inputs map[string]any, o StartOptions) (Run, error) {
	r, _, err := f.eng.StartRun(ctx, interp.StartParams{Workflow: workflow, Version: o.Version, Inputs: inputs, New: o.New, WorkDir: o.Dir})
	if err != nil {
		return Run{}, fmt.Errorf("flowrun: %w", err)
	}
	return runOf(r), nil
}

// Get returns a run by id, unique id prefix or reference (@last,
// WORKFLOW@last, WORKFLOW/KEY).
func (f *Flow) Get(ctx context.Context, ref string) (Run, error) {
	r, err := f.eng.ResolveRun(ctx, ref)
	if err != nil {
		return Run{}, fmt.Errorf("flowrun: %w", err)
	}
	return runOf(r), nil
}

// Signal sends the signal name, with payload encoded as JSON (nil for
// none), to a run; a run waiting for it goes on when someone works on it.
func (f *Flow) Signal(ctx context.Context, runID, name string, payload any) error {
	var raw json.RawMessage
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return fmt.Errorf("flowrun: signal %s: encode the payload: %w", name, err)
		}
		raw = b
	}
	if _, err := f.eng.Signal(ctx, runID, name, raw); err != nil {
		return fmt.Errorf("flowrun: %w", err)
	}
	return nil
}

// Drive works on a run (and its child runs) in this process until it
// ends, is blocked on a version decision, or waits for something only the
// outside brings (a signal, a queue slot), and returns it then. Timers
// (sleep, retry backoff) are waited out.
func (f *Flow) Drive(ctx context.Context, runID string) (Run, error) {
	r, err := f.eng.Drive(ctx, runID)
	if err != nil {
		return runOf(r), fmt.Errorf("flowrun: %w", err)
	}
	return f.Get(ctx, r.ID)
}

// Wait works on a run until it ends (completed, failed or canceled) or is
// blocked on a version decision, and returns it then. While the run waits
// for the outside (a signal) it waits for the store to change and works
// on it again. It returns with ctx's error when ctx ends first; the run
// is then left safely parked.
func (f *Flow) Wait(ctx context.Context, runID string) (Run, error) {
	for {
		r, err := f.Drive(ctx, runID)
		if err != nil {
			return r, err
		}
		if r.Status.Ended() || r.Status == Status(store.RunBlocked) {
			return r, nil
		}
		if err := interp.WaitForChange(ctx, f.clk, f.st, 10*time.Millisecond, time.Second); err != nil {
			return r, err
		}
	}
}

// Event is one event of a run's history (spec/semantics.md: run_created,
// step_completed, run_completed, ...).
type Event struct {
	ID    int64 // increasing across the database
	RunID string
	At    time.Time
	Kind  string
	Step  string // the step's key, "" for a run event
	Data  json.RawMessage
}

// Events calls fn with each event of a run, in order, from its first,
// following new ones as they are committed (by this process or any
// other) until the run has ended and its last event was handed over, ctx
// ends, or fn returns an error, which Events returns. It does not work on
// the run: call Wait (or run a worker) for that.
func (f *Flow) Events(ctx context.Context, runID string, fn func(Event) error) error {
	run, err := f.eng.ResolveRun(ctx, runID)
	if err != nil {
		return fmt.Errorf("flowrun: %w", err)
	}
	var after int64
	for {
		// Read the status before the events: an ended run has all its
		// events by then.
		r, err := f.st.RunGetHead(ctx, run.ID)
		if err != nil {
			return fmt.Errorf("flowrun: read run %s: %w", run.ID, err)
		}
		evs, err := f.st.EventList(ctx, store.EventListParams{RunID: run.ID, AfterID: after})
		if err != nil {
			return fmt.Errorf("flowrun: read the events of run %s: %w", run.ID, err)
		}
		for _, ev := range evs {
			if err := fn(Event{ID: ev.ID, RunID: ev.RunID, At: ev.At, Kind: ev.Kind, Step: ev.StepKey, Data: ev.Data}); err != nil {
				return err
			}
			after = ev.ID
		}
		if r.Status.Terminal() {
			return nil
		}
		if err := interp.WaitForChange(ctx, f.clk, f.st, 10*time.Millisecond, time.Second); err != nil {
			return err
		}
	}
}
