package testrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/flowrun/flowrun/store"
)

// errCrash is what the commits of an engine dropped at a crash point fail
// with: nothing it does after that commit is written.
var errCrash = errors.New("the engine was dropped at the crash point")

// maxRounds bounds how often one execution drives its run: a run that
// keeps parking on timers beyond it is reported, not waited on for ever.
const maxRounds = 200000

// deadPID is the process id of an engine incarnation: no such process
// exists (it is beyond any pid_max), so a new incarnation's claim loop
// takes over the leases of a dropped one at once, as a worker restarted
// on the same host does after a crash.
func deadPID(incarnation int) int { return 1<<30 + incarnation }

// execution is one run of a test from start to end (or to where it waits
// for the outside): the uninterrupted one, or a crash replay resumed by a
// new engine from a checkpoint of it (crash.go).
type execution struct {
	run      store.Run
	view     *interp.RunView
	problems []Failure

	mu sync.Mutex
	// calls counts the mock calls by step name (every incarnation).
	calls map[string]int
	// side counts the mocked exec and http calls by run id + "/" + step key.
	side map[string]int
	// commits describes each commit applied, in order.
	commits []string
	// dead marks the incarnations dropped: their commits fail with
	// errCrash.
	dead     map[int]bool
	unmocked map[string]bool
	// index is the result each call took, by run/step key#attempt; next
	// the next result of each mocked step.
	index map[string]int
	next  map[string]int
	// onCommit, when set, is called (with mu held) before each commit with
	// the number of commits applied so far: the uninterrupted execution
	// takes its checkpoints there.
	onCommit func(applied int) error
	// hold answers the engine's HoldTimer hook: whether the run may wait
	// for its next timer in place, the virtual clock moved to it (set by
	// the driver before the run is first driven).
	hold func(wake time.Time) bool
	// converged is set when a crash replay reached a state of the
	// uninterrupted execution (crash.go): its engine was stopped there.
	converged *point
	// crashAfter, on a full crash replay, is the commit after which
	// incarnation 0 is dropped (-1: never).
	crashAfter int
	// real is set when an exec or http action ran for real (unmocked).
	real bool
	// test is the test; ord orders its mocked attempts' calls (order.go).
	test *testfile.Test
	ord  *order
}

func newExecution(t *testfile.Test) *execution {
	x := &execution{calls: map[string]int{}, side: map[string]int{}, dead: map[int]bool{}, unmocked: map[string]bool{},
		index: map[string]int{}, next: map[string]int{}, crashAfter: -1, test: t}
	x.ord = newOrder(&x.mu)
	return x
}

// engine builds an engine over st for incarnation inc, drawing from src.
// x, when set, gets the mock and commit hooks.
func (s *session) engine(st store.Store, clk clock.Clock, inc int, x *execution, src *pcgSource) *interp.Engine {
	o := interp.Options{
		Clock: clk,
		// The virtual clock stands still while a real program runs: its
		// timeout is measured in real time.
		ActionClock: s.o.Wall,
		Owner:       store.Owner{Host: "flowrun-test", PID: deadPID(inc), Worker: "t"},
		Rand:        rand.New(src),
		ParkWait:    -1,
		Getenv:      s.o.Getenv,
		Environ:     s.o.Environ,
	}
	if x != nil {
		o.Mock = func(c interp.MockCall) (interp.MockResult, bool) { return s.mock(x, inc, c) }
		o.BeforeCommit = func(ts []store.Transition) error { return x.beforeCommit(inc, ts) }
		o.HoldTimer = func(wake time.Time) bool { return x.hold != nil && x.hold(wake) }
	}
	return interp.New(st, o)
}

// beforeCommit counts commits, lets onCommit take a checkpoint, and
// refuses the commits of a dropped incarnation.
func (x *execution) beforeCommit(inc int, ts []store.Transition) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dead[inc] {
		return errCrash
	}
	if inc == 0 && x.crashAfter >= 0 && len(x.commits) == x.crashAfter {
		x.dead[inc] = true
		x.ord.dropped()
		return errCrash
	}
	if x.onCommit != nil {
		if err := x.onCommit(len(x.commits)); err != nil {
			return err
		}
	}
	x.commits = append(x.commits, describeCommit(ts))
	x.ord.committing(x.test, inc, ts)
	return nil
}

// describeCommit names a commit point by its steps and transitions:
// `step "rollout": step_started`.
func describeCommit(ts []store.Transition) string {
	var parts []string
	seen := map[string]bool{}
	for _, t := range ts {
		for _, ev := range t.Events {
			if ev.Kind == "claimed" {
				continue
			}
			p := ev.Kind
			if ev.StepKey != "" {
				p = fmt.Sprintf("step %q %s", ev.StepKey, ev.Kind)
			}
			if !seen[p] {
				seen[p] = true
				parts = append(parts, p)
			}
		}
	}
	if len(parts) == 0 {
		return "the run claimed"
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("and %d more", len(parts)-4))
	}
	return strings.Join(parts, ", ")
}

// mocked reports whether the test mocks the step of the workflow (its
// action needs no secret then).
func (s *session) mocked(workflow, step string) bool {
	if workflow != s.t.Graph.Workflow {
		return false
	}
	for _, m := range s.t.Mocks {
		if m.Step == step {
			return true
		}
	}
	return false
}

// mock answers the engine's Mock hook from the test's mock blocks, for
// engine incarnation inc.
func (s *session) mock(x *execution, inc int, c interp.MockCall) (interp.MockResult, bool) {
	if c.Probe {
		return interp.MockResult{}, s.mocked(c.Workflow, c.Step)
	}
	if c.Alert != "" {
		// Alerts are not steps: a test neither mocks nor sends them (an
		// alert's failure never fails a run; the run records it).
		return interp.MockResult{Error: &interp.MockError{Kind: "test", Message: "alerts are not sent by flowrun test"}}, true
	}
	var m *testfile.Mock
	if c.Workflow == s.t.Graph.Workflow {
		for _, mm := range s.t.Mocks {
			if mm.Step == c.Step {
				m = mm
			}
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	side := c.Kind == graph.KindExec || c.Kind == graph.KindHTTP
	if m == nil {
		if !s.o.MockAll || !side {
			x.real = x.real || side
			return interp.MockResult{}, false
		}
		if !x.unmocked[c.Workflow+"/"+c.Step] {
			x.unmocked[c.Workflow+"/"+c.Step] = true
			x.problems = append(x.problems, Failure{Pos: pos(s.t.Range), What: "mock-all",
				Message: fmt.Sprintf("step %q of workflow %q would run its %s action, and --mock-all forbids an unmocked side effect; add mock %q { output = ... } to the test", c.Step, c.Workflow, c.Kind, c.Step)})
		}
		return interp.MockResult{Error: &interp.MockError{Kind: "unmocked", Message: "not mocked under --mock-all"}}, true
	}
	// One result per call, in order: each attempt, foreach item and until
	// iteration is a call, taken in the order the engine started them
	// (order.go). A call repeated for the same attempt (asked again by a
	// new engine after a crash) takes the same result.
	k := callKey(c.RunID, c.StepKey, c.Attempt)
	i, seen := x.index[k]
	if !seen {
		if side && !x.ord.turn(c.Context, k, x.dead) {
			return interp.MockResult{Error: &interp.MockError{Kind: "canceled", Message: "the attempt was stopped before it ran"}}, true
		}
		i = x.next[c.Step]
		x.next[c.Step]++
		x.index[k] = i
	}
	x.calls[c.Step]++
	if side {
		x.side[c.RunID+"/"+c.StepKey]++
	}
	if i >= len(m.Results) {
		i = len(m.Results) - 1
	}
	r := m.Results[i]
	st := testfile.MockedStep(s.t, c.Step)
	var ty *graph.Type
	if st != nil {
		ty = graph.StepOutput(st)
	}
	out := jsonLike(testfile.Fill(withSent(r.Output, c.Sent), ty))
	if r.Error == nil {
		return interp.MockResult{Output: out}, true
	}
	me := &interp.MockError{}
	me.Kind, _ = r.Error["kind"].(string)
	me.Message, _ = r.Error["message"].(string)
	if v, ok := intOf(r.Error["exit_code"]); ok {
		me.ExitCode = &v
	}
	if v, ok := intOf(r.Error["status"]); ok {
		me.Status = &v
	}
	if r.Output == nil {
		out = nil
	}
	return interp.MockResult{Output: out, Error: me}, true
}

// withSent gives a mocked http attempt's output the parts the engine knew
// before the request (its request, an emit step's event) that the mock
// leaves out, as a real attempt's output would have them. The mock's own
// output is not changed: it serves every call.
func withSent(output any, sent map[string]any) any {
	if len(sent) == 0 {
		return output
	}
	m, ok := output.(map[string]any)
	if output == nil {
		m, ok = map[string]any{}, true
	}
	if !ok {
		return output
	}
	out := maps.Clone(m)
	for k, v := range sent {
		if _, given := out[k]; !given {
			out[k] = v
		}
	}
	return out
}

// execute runs the test once, uninterrupted. With crash it also records
// the checkpoints and points its crash replays start from and stop at
// (crash.go). With crashAfter >= 0 (a full crash replay) it drops the
// engine after that many commits and resumes with a new one.
func (s *session) execute(ctx context.Context, crash bool, crashAfter int) (*execution, *record, error) {
	st, path, done, err := s.sc.store(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	x := newExecution(s.t)
	x.crashAfter = crashAfter
	clk := clock.NewFake(Epoch())
	d := newDriver(ctx, s, x, st, clk, clk.Now())
	d.src = newPCG(1, 2)
	if crash {
		d.rec = &record{dir: filepath.Dir(path), name: strings.TrimSuffix(filepath.Base(path), ".db"), points: map[string]*point{}}
		x.onCommit = func(applied int) error { return d.checkpoint(applied) }
	}
	d.eng = s.engine(st, clk, 0, x, d.src)
	inputs, _ := jsonLike(s.t.Inputs).(map[string]any)
	if inputs == nil {
		inputs = map[string]any{}
	}
	run, _, err := d.eng.StartRun(ctx, interp.StartParams{Workflow: s.t.Graph.Workflow, Version: s.t.Graph.Version,
		Inputs: inputs, New: true, WorkDir: s.o.WorkDir})
	if err != nil {
		return nil, d.rec, fmt.Errorf("start the run: %w", err)
	}
	d.update(func(ds *driverState) { ds.ID = run.ID })
	x.mu.Lock()
	x.ord.runs[run.ID] = true
	x.mu.Unlock()
	if err := d.loop(); err != nil {
		return nil, d.rec, err
	}
	d.unsent()
	x.run, err = st.RunGet(ctx, d.ds.ID)
	if err != nil {
		return nil, d.rec, fmt.Errorf("read the run: %w", err)
	}
	if crashAfter >= 0 {
		// A full crash replay is compared by status and outputs only (its
		// steps are not read), and by the side effects the store recorded.
		return x, nil, x.checkSide(ctx, st)
	}
	x.view, err = d.eng.Show(ctx, d.ds.ID)
	if err != nil {
		return nil, d.rec, fmt.Errorf("read the run's steps: %w", err)
	}
	if crash {
		if err := d.finish(); err != nil {
			return nil, d.rec, err
		}
	}
	return x, d.rec, nil
}

// checkSide compares the mocked side effects with the attempts the store
// recorded: no mocked exec or http may have run more often.
func (x *execution) checkSide(ctx context.Context, st store.Store) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	keys := make([]string, 0, len(x.side))
	for k := range x.side {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		runID, stepKey, _ := strings.Cut(k, "/")
		as, err := st.AttemptList(ctx, runID, stepKey)
		if err != nil {
			return fmt.Errorf("read the attempts of %s: %w", stepKey, err)
		}
		if n := x.side[k]; n > len(as) {
			x.problems = append(x.problems, sideFailure(k, n, len(as)))
		}
	}
	return nil
}

// sideFailure says that the mock of run id + "/" + step key k ran n times
// for attempts recorded attempts.
func sideFailure(k string, n, attempts int) Failure {
	_, stepKey, _ := strings.Cut(k, "/")
	return Failure{What: "crash", Message: fmt.Sprintf("the mock of step %s ran %d times, but the store recorded %d attempts: a side effect ran without its attempt being recorded", stepKey, n, attempts)}
}

// cover says what each step of the tested workflow did.
func (x *execution) cover(g *graph.Graph) map[string]StepCover {
	out := map[string]StepCover{}
	if x.view == nil {
		return out
	}
	for name, sv := range x.view.Steps {
		var st *graph.Step
		if i, ok := g.StepIndex(name); ok {
			st = g.Steps[i]
		}
		out[name] = StepCover{Status: string(sv.Status), Branch: switchBranch(st, sv.Output)}
	}
	return out
}

func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case interface{ Int64() (int64, error) }:
		i, err := n.Int64()
		return int(i), err == nil
	case float64:
		return int(n), true
	}
	return 0, false
}
