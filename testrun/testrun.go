package testrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/flowrun/flowrun/store/sqlite"
	"github.com/hashicorp/hcl/v2"
)

// Options configure Run.
type Options struct {
	// MockAll makes an exec or http step without a mock a test failure
	// instead of running it.
	MockAll bool
	// Crash runs the test again once per commit point (spec/testing.md).
	Crash bool
	// Wall measures each test's duration and times what a real
	// (unmocked) exec or http action does: its timeout (the CLI passes
	// clock.Real; nil is the real clock).
	Wall clock.Clock
	// TempDir holds the scratch stores (removed when Run returns).
	TempDir string
	// WorkDir is the absolute directory of the workflow files: exec
	// paths resolve there.
	WorkDir string
	// Workflows are every workflow of the test's directory, stored
	// before the run so that workflow steps find their children. Unused
	// when Scratch is set (it holds them).
	Workflows []*graph.Graph
	// Scratch, when set, is the template store the executions copy
	// (NewScratch, shared by the tests of a directory); when nil, Run
	// makes its own.
	Scratch *Scratch
	// Getenv and Environ are the engine's (secrets, exec environment).
	Getenv  func(string) string
	Environ func() []string
}

// Epoch is where every test's virtual clock starts, so that run.started_at
// and timestamps are the same on every run of a test. (A function, as a
// time.Date variable would be work at every flowrun process's start.)
func Epoch() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }

// Result is the outcome of one test.
type Result struct {
	Name     string
	Pass     bool
	Failures []Failure
	Elapsed  time.Duration
	// Status is the run's final status (of the uninterrupted execution).
	Status string
	// Replays is how many crash replays ran (Crash).
	Replays int
	// Stopped is how many of them stopped early, at a state the
	// uninterrupted execution passed through (crash.go).
	Stopped int
	// Steps says, per step of the tested workflow, what happened to it in
	// the uninterrupted execution, for coverage.
	Steps map[string]StepCover
}

// StepCover is what one step did in a test.
type StepCover struct {
	Status string // completed, failed, skipped, pending, ...
	// Branch is the branch a switch step took (its output), "" otherwise.
	Branch string
}

// Failure is one failed expectation.
type Failure struct {
	// Pos is where the expectation is written (file:line:col).
	Pos string `json:"pos,omitempty"`
	// What names what was checked: "status", "outputs.url",
	// "steps.rollout.attempts", "calls.charge", "assert", "crash", ...
	What     string `json:"what"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	// Message explains a failure that is not a comparison.
	Message string `json:"message,omitempty"`
}

func pos(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// Run runs one test.
func Run(ctx context.Context, t *testfile.Test, o Options) Result {
	wall := o.Wall
	if wall == nil {
		wall = clock.Real{}
	}
	o.Wall = wall // also what times a real program (session.engine)
	began := wall.Now()
	res := Result{Name: t.Name}
	sc := o.Scratch
	if sc == nil {
		var err error
		sc, err = NewScratch(ctx, o.TempDir, o.Workflows)
		if err != nil {
			res.Failures = append(res.Failures, Failure{Pos: pos(t.Range), What: "setup", Message: err.Error()})
			res.Elapsed = wall.Now().Sub(began)
			return res
		}
		defer sc.Close()
	}
	s := &session{t: t, o: o, sc: sc}
	res.Failures = s.run(ctx, &res)
	res.Pass = len(res.Failures) == 0
	res.Elapsed = wall.Now().Sub(began)
	return res
}

// session is one test being run.
type session struct {
	t  *testfile.Test
	o  Options
	sc *Scratch
}

// Scratch is a directory of scratch stores and the template they copy: a
// migrated store holding the workflows of a directory. It is safe for
// use by one test at a time.
type Scratch struct {
	dir      string
	template string
	n        atomic.Int64 // stores made so far, for their names
}

// NewScratch makes a scratch directory under tempDir ("" for the
// system's) and its template store holding workflows.
func NewScratch(ctx context.Context, tempDir string, workflows []*graph.Graph) (*Scratch, error) {
	dir, err := os.MkdirTemp(tempDir, "flowrun-test-*")
	if err != nil {
		return nil, fmt.Errorf("create a scratch directory: %w", err)
	}
	sc := &Scratch{dir: dir, template: filepath.Join(dir, "template.db")}
	if err := sc.makeTemplate(ctx, workflows); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return sc, nil
}

// Close removes the scratch directory.
func (sc *Scratch) Close() error { return os.RemoveAll(sc.dir) }

func (s *session) run(ctx context.Context, res *Result) []Failure {
	base, rec, err := s.execute(ctx, s.o.Crash, -1)
	defer rec.close()
	if err != nil {
		return []Failure{{Pos: pos(s.t.Range), What: "run", Message: err.Error()}}
	}
	res.Status = string(base.run.Status)
	res.Steps = base.cover(s.t.Graph)
	fails := append([]Failure(nil), base.problems...)
	fails = append(fails, s.expect(ctx, base)...)
	if s.o.Crash && len(fails) == 0 {
		n, stopped, cf := s.crash(ctx, base, rec)
		res.Replays, res.Stopped = n, stopped
		fails = append(fails, cf...)
	}
	return fails
}

// makeTemplate creates a store with the schema and every workflow of the
// directory, copied for each execution.
func (sc *Scratch) makeTemplate(ctx context.Context, workflows []*graph.Graph) error {
	st, err := sqlite.Open(ctx, sc.template, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		return fmt.Errorf("open a scratch store: %w", err)
	}
	eng := interp.New(st, interp.Options{Clock: clock.NewFake(Epoch())})
	for _, g := range workflows {
		if _, err := eng.StoreGraph(ctx, g); err != nil {
			st.Close()
			return fmt.Errorf("store workflow %q: %w", g.Workflow, err)
		}
	}
	return st.Close()
}

// scratch copies the template to a new store file and opens it.
// It returns the store, its file and what closes and removes it.
func (sc *Scratch) store(ctx context.Context) (*sqlite.Store, string, func(), error) {
	path := filepath.Join(sc.dir, fmt.Sprintf("run-%d.db", sc.n.Add(1)))
	b, err := os.ReadFile(sc.template)
	if err != nil {
		return nil, "", nil, fmt.Errorf("read the scratch template: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, "", nil, fmt.Errorf("write a scratch store: %w", err)
	}
	st, done, err := openScratch(ctx, path)
	return st, path, done, err
}

// openScratch opens a scratch store file; done closes it and removes its
// files.
func openScratch(ctx context.Context, path string) (*sqlite.Store, func(), error) {
	st, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		removeDB(path)
		return nil, nil, fmt.Errorf("open a scratch store: %w", err)
	}
	return st, func() {
		st.Close()
		removeDB(path)
	}, nil
}

// removeDB removes an SQLite database file and its WAL and shared memory.
func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

// jsonLike turns literal values (json.Number) into the values a run
// decodes from JSON (float64), as inputs and outputs are.
func jsonLike(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}
