package testrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
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
// for the outside), possibly dropped at a crash point and resumed by a new
// engine.
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
	// crashAfter is the commit after which the first engine is dropped
	// (-1: never); dead marks the incarnations dropped.
	crashAfter int
	dead       map[int]bool
	unmocked   map[string]bool
	// index is the result each call took, by run/step key#attempt; next
	// the next result of each mocked step.
	index map[string]int
	next  map[string]int
	// hold answers the engine's HoldTimer hook: whether the run may wait
	// for its next timer in place, the virtual clock moved to it (set by
	// execute before the run is first driven).
	hold func(wake time.Time) bool
}

// engine builds an engine over st for incarnation inc. x, when set, gets
// the mock and commit hooks.
func (s *session) engine(st store.Store, clk clock.Clock, inc int, x *execution) *interp.Engine {
	o := interp.Options{
		Clock:    clk,
		Owner:    store.Owner{Host: "flowrun-test", PID: deadPID(inc), Worker: "t"},
		Rand:     rand.New(rand.NewPCG(1, 2+uint64(inc))), // a restarted engine draws other ids
		ParkWait: -1,
		Getenv:   s.o.Getenv,
		Environ:  s.o.Environ,
	}
	if x != nil {
		o.Mock = func(c interp.MockCall) (interp.MockResult, bool) { return s.mock(x, c) }
		o.BeforeCommit = func(ts []store.Transition) error { return x.beforeCommit(inc, ts) }
		o.HoldTimer = func(wake time.Time) bool { return x.hold != nil && x.hold(wake) }
	}
	return interp.New(st, o)
}

// beforeCommit counts commits and drops incarnation 0 after crashAfter of
// them.
func (x *execution) beforeCommit(inc int, ts []store.Transition) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dead[inc] {
		return errCrash
	}
	if inc == 0 && x.crashAfter >= 0 && len(x.commits) == x.crashAfter {
		x.dead[inc] = true
		return errCrash
	}
	x.commits = append(x.commits, describeCommit(ts))
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

// mock answers the engine's Mock hook from the test's mock blocks.
func (s *session) mock(x *execution, c interp.MockCall) (interp.MockResult, bool) {
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
			return interp.MockResult{}, false
		}
		if !x.unmocked[c.Workflow+"/"+c.Step] {
			x.unmocked[c.Workflow+"/"+c.Step] = true
			x.problems = append(x.problems, Failure{Pos: pos(s.t.Range), What: "mock-all",
				Message: fmt.Sprintf("step %q of workflow %q would run its %s action, and --mock-all forbids an unmocked side effect; add mock %q { output = ... } to the test", c.Step, c.Workflow, c.Kind, c.Step)})
		}
		return interp.MockResult{Error: &interp.MockError{Kind: "unmocked", Message: "not mocked under --mock-all"}}, true
	}
	x.calls[c.Step]++
	if side {
		x.side[c.RunID+"/"+c.StepKey]++
	}
	// One result per call, in order: each attempt, foreach item and until
	// iteration is a call. A call repeated for the same attempt (asked
	// again by a new engine after a crash) takes the same result.
	k := c.RunID + "/" + c.StepKey + "#" + strconv.Itoa(c.Attempt)
	i, seen := x.index[k]
	if !seen {
		i = x.next[c.Step]
		x.next[c.Step]++
		x.index[k] = i
	}
	if i >= len(m.Results) {
		i = len(m.Results) - 1
	}
	r := m.Results[i]
	st := testfile.MockedStep(s.t, c.Step)
	var ty *graph.Type
	if st != nil {
		ty = st.OutputType
	}
	out := jsonLike(testfile.Fill(r.Output, ty))
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

// signalDue is a signal of the test and when it is due.
type signalDue struct {
	sig  *testfile.Signal
	at   time.Time
	sent bool
}

// execute runs the test once; crashAfter >= 0 drops the engine after that
// many commits and resumes the run with a new one.
func (s *session) execute(ctx context.Context, crashAfter int) (*execution, error) {
	st, done, err := s.sc.store(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	x := &execution{calls: map[string]int{}, side: map[string]int{}, crashAfter: crashAfter, dead: map[int]bool{}, unmocked: map[string]bool{},
		index: map[string]int{}, next: map[string]int{}}
	clk := clock.NewFake(Epoch)
	inc := 0
	eng := s.engine(st, clk, inc, x)
	// restart drops a crashed engine for a new one on the same store.
	restart := func(err error) bool {
		x.mu.Lock()
		dead := x.dead[inc]
		x.mu.Unlock()
		if !dead && !errors.Is(err, errCrash) {
			return false
		}
		inc++
		eng = s.engine(st, clk, inc, x)
		return true
	}
	inputs, _ := jsonLike(s.t.Inputs).(map[string]any)
	if inputs == nil {
		inputs = map[string]any{}
	}
	run, _, err := eng.StartRun(ctx, interp.StartParams{Workflow: s.t.Graph.Workflow, Version: s.t.Graph.Version,
		Inputs: inputs, New: true, WorkDir: s.o.WorkDir})
	if err != nil {
		return nil, fmt.Errorf("start the run: %w", err)
	}
	id := run.ID
	start := clk.Now()
	var sigs []*signalDue
	for _, sg := range s.t.Signals {
		sigs = append(sigs, &signalDue{sig: sg, at: start.Add(time.Duration(sg.AfterMS) * time.Millisecond)})
	}
	sort.SliceStable(sigs, func(i, j int) bool { return sigs[i].at.Before(sigs[j].at) })
	up := s.t.Upgrade
	upApplied, upDecided := up == nil, up == nil
	upAt := start.Add(time.Duration(0))
	if up != nil {
		upAt = start.Add(time.Duration(up.AfterMS) * time.Millisecond)
	}
	parked := false
	// A run that only its own timers move on waits for them inside Drive
	// (interp Options.HoldTimer): the clock moves to its next timer there,
	// unless a signal or the upgrade is due first, which the loop below
	// brings when the run parks. Each such move counts as a round.
	round, holds := 0, 0
	x.hold = func(wake time.Time) bool {
		if round+holds >= maxRounds {
			return false
		}
		if !upApplied && (!up.HasAfter || !upAt.After(wake)) {
			return false
		}
		for _, sd := range sigs {
			if !sd.sent && !sd.at.After(wake) {
				return false
			}
		}
		holds++
		clk.Set(wake)
		return true
	}
	for ; ; round++ {
		if round+holds > maxRounds {
			x.problems = append(x.problems, Failure{Pos: pos(s.t.Range), What: "run", Message: fmt.Sprintf("the run did not settle after %d rounds of virtual time", maxRounds)})
			break
		}
		now := clk.Now()
		for _, sd := range sigs {
			if sd.sent || sd.at.After(now) {
				continue
			}
			sd.sent = true
			if _, err := eng.Signal(ctx, id, sd.sig.Name, mustJSON(jsonLike(sd.sig.Data))); err != nil {
				when := "when the run started"
				if sd.sig.HasAfter {
					when = fmt.Sprintf("%s after the run started", time.Duration(sd.sig.AfterMS)*time.Millisecond)
				}
				x.problems = append(x.problems, Failure{Pos: pos(sd.sig.Range), What: "signal " + sd.sig.Name,
					Message: fmt.Sprintf("the signal sent %s was refused: %v", when, err)})
			}
		}
		if !upApplied && ((up.HasAfter && !upAt.After(now)) || (!up.HasAfter && parked)) {
			upApplied = true
			if _, err := eng.StoreGraph(ctx, up.Graph); err != nil {
				x.problems = append(x.problems, Failure{Pos: pos(up.Range), What: "upgrade", Message: fmt.Sprintf("storing %s: %v", up.File, err)})
			} else if r, err := eng.Rebind(ctx, id); restart(err) {
				upApplied = false
				continue
			} else if err != nil {
				x.problems = append(x.problems, Failure{Pos: pos(up.Range), What: "upgrade", Message: err.Error()})
			} else if r.Status != store.RunBlocked {
				upDecided = true // a MINOR or PATCH: nothing to decide
			}
		}
		got, err := eng.Drive(ctx, id)
		if restart(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("drive the run: %w", err)
		}
		if got.Status == store.RunBlocked && upApplied && !upDecided {
			d, err := eng.Decide(ctx, interp.DecideParams{RunID: id, Choice: interp.Choice(up.Choose), By: "flowrun test"})
			if restart(err) {
				continue
			}
			if err != nil {
				x.problems = append(x.problems, Failure{Pos: pos(up.Range), What: "upgrade", Message: fmt.Sprintf("choose %s: %v", up.Choose, err)})
				break
			}
			upDecided = true
			id = d.Run.ID
			continue
		}
		if got.Status.Terminal() || got.Status == store.RunBlocked {
			break
		}
		parked = true
		// The run waits: move the clock to the next thing due.
		var next time.Time
		consider := func(t time.Time) {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		at, ok, err := st.RunNextAvailable(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("read when the run is due: %w", err)
		}
		if ok && at.Before(Epoch.AddDate(50, 0, 0)) {
			consider(at)
		}
		for _, sd := range sigs {
			if !sd.sent {
				consider(sd.at)
			}
		}
		if !upApplied {
			if up.HasAfter {
				consider(upAt)
			} else {
				consider(clk.Now())
			}
		}
		if next.IsZero() {
			break // it waits for nothing the test brings
		}
		clk.Set(next)
	}
	for _, sd := range sigs {
		if !sd.sent {
			x.problems = append(x.problems, Failure{Pos: pos(sd.sig.Range), What: "signal " + sd.sig.Name,
				Message: fmt.Sprintf("the signal was never sent: it is due %s after the run started, and the run settled before, after %s",
					time.Duration(sd.sig.AfterMS)*time.Millisecond, clk.Now().Sub(start))})
		}
	}
	var err2 error
	x.run, err2 = st.RunGet(ctx, id)
	if err2 != nil {
		return nil, fmt.Errorf("read the run: %w", err2)
	}
	if crashAfter >= 0 {
		// A crash replay is compared by status and outputs only (its
		// steps are not read), and by the side effects the store recorded.
		if err := x.checkSide(ctx, st); err != nil {
			return nil, err
		}
		return x, nil
	}
	x.view, err2 = eng.Show(ctx, id)
	if err2 != nil {
		return nil, fmt.Errorf("read the run's steps: %w", err2)
	}
	return x, nil
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
			x.problems = append(x.problems, Failure{What: "crash", Message: fmt.Sprintf("the mock of step %s ran %d times, but the store recorded %d attempts: a side effect ran without its attempt being recorded", stepKey, n, len(as))})
		}
	}
	return nil
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
