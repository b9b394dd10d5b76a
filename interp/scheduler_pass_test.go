package interp

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// The scheduler alone: each row is a small workflow, a starting state
// (the run's step rows, as a rebuild reads them), an event, an instant,
// and the decisions expected. No store, no clock, no goroutine: the
// outside the scheduler asks is a fake (fakeOutside).

// fakeOutside answers a scheduler's questions from memory: the child
// workflows of the test's source, a fixed jitter, no breaker, no mock.
type fakeOutside struct {
	graphs map[string]*loaded
	jit    int64
	asked  []int64 // the bounds jitter was asked for
}

func (o *fakeOutside) mocked(string, string) (bool, bool) { return false, false }

func (o *fakeOutside) getenv(string) string { return "" }

func (o *fakeOutside) childGraph(_ context.Context, workflow, pin string) (store.Version, *loaded, error) {
	l := o.graphs[workflow]
	if l == nil {
		return store.Version{}, nil, fmt.Errorf("no stored version of workflow %q matches version %q: %w", workflow, pin, store.ErrNotFound)
	}
	return store.Version{Workflow: workflow, Version: l.g.Version, Hash: l.hash}, l, nil
}

func (o *fakeOutside) childRun(_ *loaded, v store.Version, inputs map[string]any, key string) store.RunInsertParams {
	return store.RunInsertParams{ID: "child-of-" + key, Workflow: v.Workflow, Version: v.Version, GraphHash: v.Hash, Key: key, Inputs: mustJSON(inputs)}
}

func (o *fakeOutside) breakerAcquire(context.Context, store.BreakerAcquireParams) (store.Breaker, bool, error) {
	return store.Breaker{}, true, nil
}

func (o *fakeOutside) mock(MockCall) (any, *stepError, bool) { return nil, nil, false }

func (o *fakeOutside) jitter(n int64) int64 {
	o.asked = append(o.asked, n)
	return min(o.jit, max(n-1, 0))
}

func (o *fakeOutside) environ() []string                         { return nil }
func (o *fakeOutside) execUser() *ExecUser                       { return nil }
func (o *fakeOutside) leaseFor() time.Duration                   { return 30 * time.Second }
func (o *fakeOutside) traceparent(store.Run, string, int) string { return "" }

// testScheduler compiles src (its first workflow is the run's, the others
// are children the fake resolves) and makes a scheduler over the rows, as
// a rebuild leaves them: every row set, the finished steps settled, the
// running exec and http keys in flight.
func testScheduler(t testing.TB, src string, rows []store.Step, deadline time.Time, jitter int64) (*scheduler, *fakeOutside) {
	t.Helper()
	m, diags := lang.LoadFile("test.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("compile: %s", diags.Error())
	}
	out := &fakeOutside{graphs: map[string]*loaded{}, jit: jitter}
	var l *loaded
	for i, w := range m.Workflows {
		prog, err := expr.Load(w.Graph)
		if err != nil {
			t.Fatalf("load %s: %v", w.Graph.Workflow, err)
		}
		wl := &loaded{g: w.Graph, prog: prog, hash: "hash-" + w.Graph.Workflow}
		if i == 0 {
			l = wl
		} else {
			out.graphs[w.Graph.Workflow] = wl
		}
	}
	run := store.Run{ID: "r1", Workflow: l.g.Workflow, Version: l.g.Version, GraphHash: l.hash, Status: store.RunRunning,
		Inputs: []byte("{}"), DeadlineAt: deadline, Lease: store.Lease{Owner: "me", Epoch: 1}}
	env := &runEnv{l: l, run: run, lease: run.Lease, owner: "me", conv: expr.NewConvCache(),
		secrets: map[string]string{}, red: newRedactor(nil), info: expr.RunInfo{ID: run.ID, Workflow: run.Workflow, Version: run.Version}}
	st := &runState{rows: map[string]*store.Step{}, states: map[string]*rowState{}, lastAtt: map[string]int{}, failures: map[string]int{},
		results: map[string]expr.StepResult{}, noted: map[string]bool{}, children: map[string]store.Run{}, inFlight: map[string]*launch{}}
	sc := &scheduler{runEnv: env, runState: st, decisions: &decisions{tx: newTxb(run.ID, run.Lease)}, out: out}
	for i := range rows {
		row := rows[i]
		row.RunID = run.ID
		sc.restore(&row)
		if row.Attempts > 0 {
			sc.lastAtt[row.Key] = row.Attempts
		}
		if s := l.step(row.Step); row.Status == store.StepRunning && s != nil && (s.Action.Kind == graph.KindExec || s.Action.Kind == graph.KindHTTP) &&
			(s.Foreach == nil || row.Index >= 0) && (s.Until == nil || row.Iteration >= 0) {
			sc.inFlight[row.Key] = &launch{u: unit{s: s, key: row.Key, idx: row.Index, iter: row.Iteration}, attempt: row.Attempts,
				started: row.StartedAt, idem: run.ID + "/" + row.Key}
		}
	}
	sc.forgetStale()
	return sc, out
}

// A row of the starting state: key (NAME, NAME[i], NAME#n), status, and
// options.
func stepRow(key string, status store.StepStatus, opts ...func(*store.Step)) store.Step {
	row := store.Step{Key: key, Step: key, Index: -1, Iteration: -1, Status: status}
	if i := strings.IndexAny(key, "[#"); i >= 0 {
		row.Step = key[:i]
		rest := key[i:]
		if strings.HasPrefix(rest, "[") {
			j := strings.Index(rest, "]")
			fmt.Sscanf(rest[1:j], "%d", &row.Index)
			rest = rest[j+1:]
		}
		if strings.HasPrefix(rest, "#") {
			fmt.Sscanf(rest[1:], "%d", &row.Iteration)
		}
	}
	if status.Terminal() || status == store.StepRunning || status == store.StepWaiting {
		row.Attempts = 1
		row.StartedAt = t0.Add(-time.Minute)
	}
	if status.Terminal() {
		row.FinishedAt = t0.Add(-time.Second)
	}
	for _, o := range opts {
		o(&row)
	}
	return row
}

func withOutput(js string) func(*store.Step)  { return func(r *store.Step) { r.Output = []byte(js) } }
func withAttempts(n int) func(*store.Step)    { return func(r *store.Step) { r.Attempts = n } }
func withWake(at time.Time) func(*store.Step) { return func(r *store.Step) { r.WakeAt = at } }
func withState(st rowState) func(*store.Step) {
	return func(r *store.Step) { r.State = mustJSON(&st) }
}

// schedEvent is what happens before the pass.
type schedEvent struct {
	kind   string // pass, cancel, halt, end (an attempt's end), signal, child, claim (a rebuild's attempts)
	key    string // end: the step key whose attempt ended
	out    any
	err    *stepError
	signal store.Signal
	child  store.Run
	atts   []store.Attempt // claim: the attempts of the unfinished keys
}

// passWant is what the pass decided, in words.
type passWant struct {
	steps    string // the transition's step writes: key=status, in the order written
	events   string // the transition's events: kind:key
	launches string // key#attempt
	stops    string // key#attempt of the actions to stop
	run      string // the run's status in the transition ("" when untouched)
	wake     time.Time
	external bool // something waits on a signal or a child
	children string
	// park is the park the pass decided, "REASON at +D" (the wait reason,
	// and available_at after t0); "" when the run is not parked.
	park string
	// hold is the instant the pass decided the supervisor holds the run
	// until (decisions.holdUntil); zero when it does not hold.
	hold time.Time
}

func decided(sc *scheduler) passWant {
	var w passWant
	var parts []string
	for _, s := range sc.tx.t.Steps {
		parts = append(parts, s.Key+"="+string(s.Status))
	}
	w.steps = strings.Join(parts, " ")
	parts = nil
	for _, e := range sc.tx.t.Events {
		k := e.Kind
		if e.StepKey != "" {
			k += ":" + e.StepKey
		}
		parts = append(parts, k)
	}
	w.events = strings.Join(parts, " ")
	parts = nil
	for _, l := range sc.launches {
		parts = append(parts, fmt.Sprintf("%s#%d", l.u.key, l.attempt))
	}
	w.launches = strings.Join(parts, " ")
	parts = nil
	for _, l := range sc.stops {
		parts = append(parts, fmt.Sprintf("%s#%d", l.u.key, l.attempt))
	}
	w.stops = strings.Join(parts, " ")
	if u := sc.tx.t.Run; u != nil && u.Status != nil {
		w.run = string(*u.Status)
	}
	w.wake, w.external = sc.wake()
	parts = nil
	for _, c := range sc.tx.t.Children {
		parts = append(parts, c.Workflow+":"+c.ParentStepKey)
	}
	w.children = strings.Join(parts, " ")
	if u := sc.tx.t.Run; u != nil && u.Release && u.AvailableAt != nil && u.WaitReason != nil {
		w.park = fmt.Sprintf("%s at +%s", *u.WaitReason, u.AvailableAt.Sub(t0))
	}
	w.hold = sc.holdUntil
	return w
}

// written returns the transition's write of a step key.
func written(t *testing.T, sc *scheduler, key string) store.StepWrite {
	t.Helper()
	for _, w := range sc.tx.t.Steps {
		if w.Key == key {
			return w
		}
	}
	t.Fatalf("the transition writes no step %s", key)
	return store.StepWrite{}
}

func TestDecisionPass(t *testing.T) {
	now := t0
	ms := func(n int64) time.Time { return now.Add(time.Duration(n) * time.Millisecond) }
	exitErr := func(code int) *stepError {
		return &stepError{Kind: "exec", Message: fmt.Sprintf("exited with status %d", code), ExitCode: &code}
	}
	// A run that only its sleep moves on, begun or waiting until ms(5):
	// the rows about holding it (passEvent.hold) start from it.
	napSrc := `workflow "w" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "10m" }
  }
}`
	napping := []store.Step{stepRow("nap", store.StepWaiting, withWake(ms(5)), withState(rowState{Wait: waitSleep}))}
	for _, tc := range []struct {
		name     string
		src      string
		rows     []store.Step
		deadline time.Time
		draining bool
		hold     bool // the supervisor can hold the run (passEvent.hold)
		jitter   int64
		prep     func(sc *scheduler) // changes the rebuilt state before the event
		ev       schedEvent
		now      time.Time // zero: now
		want     passWant
		check    func(t *testing.T, sc *scheduler)
	}{
		{
			name: "a chain starts: set completes, the exec after it launches",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
  step "b" {
    depends_on = [step.a]
    exec { command = ["true"] }
  }
  step "c" {
    depends_on = [step.b]
    set { y = 2 }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "a=completed b=running", events: "step_completed:a step_started:b", launches: "b#1"},
		},
		{
			name: "the end of the chain's exec completes it and the run",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
  step "b" {
    depends_on = [step.a]
    exec { command = ["true"] }
  }
  step "c" {
    depends_on = [step.b]
    set { y = "{{ steps.a.output.x }}" }
  }
  output "y" { value = "{{ steps.c.output.y }}" }
}`,
			rows: []store.Step{stepRow("a", store.StepCompleted, withOutput(`{"x":1}`)), stepRow("b", store.StepRunning)},
			ev:   schedEvent{kind: "end", key: "b", out: map[string]any{"exit_code": 0}},
			want: passWant{steps: "b=completed c=completed", events: "step_completed:b step_completed:c run_completed", run: "completed"},
			check: func(t *testing.T, sc *scheduler) {
				if len(sc.tx.t.Attempts) != 1 || sc.tx.t.Attempts[0].Status != store.AttemptCompleted {
					t.Fatalf("attempt writes = %+v, want b's attempt 1 completed", sc.tx.t.Attempts)
				}
				wantJSON(t, "run outputs", sc.tx.t.Run.Outputs, `{"y":1}`)
			},
		},
		{
			name: "when = false skips the step, and a step that needs it",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    when = "1 > 2"
    set { x = 1 }
  }
  step "b" {
    depends_on = [step.a]
    set { y = 1 }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "a=skipped b=skipped", events: "step_skipped:a step_skipped:b run_completed", run: "completed"},
			check: func(t *testing.T, sc *scheduler) {
				if d := written(t, sc, "b").Detail; d != `its dependency "a" was skipped` {
					t.Fatalf("b's skip reason = %q", d)
				}
			},
		},
		{
			name: "join any: a step none of whose needs completed is skipped; join all runs past a failed need that continues",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
  step "f" {
    on_error = "continue"
    exec { command = ["false"] }
  }
  step "any" {
    depends_on = [step.f, step.s]
    join       = "any"
    set { x = 1 }
  }
  step "s" {
    when = "false"
    set { x = 1 }
  }
  step "all" {
    depends_on = [step.a, step.f]
    set { x = 2 }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepCompleted, withOutput(`{"x":1}`)), stepRow("f", store.StepRunning)},
			ev:   schedEvent{kind: "end", key: "f", err: exitErr(1)},
			want: passWant{steps: "f=failed all=completed s=skipped any=skipped",
				events: "step_failed:f step_completed:all step_skipped:s step_skipped:any run_completed", run: "completed"},
			check: func(t *testing.T, sc *scheduler) {
				if d := written(t, sc, "any").Detail; d != `none of its dependencies completed (join = "any")` {
					t.Fatalf("any's skip reason = %q", d)
				}
			},
		},
		{
			name: "a failed attempt with a retry policy backs off by backoff plus the jitter drawn",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    retry {
      attempts = 3
      backoff  = "2s"
      jitter   = "500ms"
    }
    exec { command = ["false"] }
  }
}`,
			rows:   []store.Step{stepRow("a", store.StepRunning)},
			jitter: 123,
			ev:     schedEvent{kind: "end", key: "a", err: exitErr(1)},
			want:   passWant{steps: "a=waiting", events: "retry_scheduled:a run_parked", run: "waiting", park: "retry at +2.123s", wake: ms(2123)},
			check: func(t *testing.T, sc *scheduler) {
				st := sc.state("a")
				if st.Wait != waitRetry || st.Attempt != 2 || st.DelayMS != 2000 || st.JitterMS != 123 {
					t.Fatalf("a's State = %+v, want a retry of attempt 2 after 2000 ms + 123 ms", st)
				}
				if o := sc.out.(*fakeOutside); len(o.asked) != 1 || o.asked[0] != 501 {
					t.Fatalf("jitter asked for %v, want [501]", o.asked)
				}
			},
		},
		{
			name: "a retry whose wake came launches the next attempt",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    retry { attempts = 3 }
    exec { command = ["false"] }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepWaiting, withWake(ms(-1)), withState(rowState{Wait: waitRetry, Attempt: 2}))},
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "a=running", events: "step_started:a", launches: "a#2"},
		},
		{
			name: "a retry whose wake has not come waits: the run parks until it",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    retry { attempts = 3 }
    exec { command = ["false"] }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepWaiting, withWake(ms(5)), withState(rowState{Wait: waitRetry, Attempt: 2}))},
			ev:   schedEvent{kind: "pass"},
			want: passWant{events: "run_parked", run: "waiting", park: "retry at +5ms", wake: ms(5)},
		},
		{
			name: "a passed deadline fails the run, stops the attempt in flight and names its step",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    exec { command = ["sleep", "100"] }
  }
}`,
			rows:     []store.Step{stepRow("a", store.StepRunning)},
			deadline: ms(0),
			ev:       schedEvent{kind: "pass"},
			want:     passWant{steps: "a=canceled", events: "run_failed:a", stops: "a#1", run: "failed", wake: ms(0)},
			check: func(t *testing.T, sc *scheduler) {
				wantJSON(t, "run error", sc.tx.t.Run.Error, `{"kind":"deadline","message":"the run passed its deadline (`+ms(0).Format(time.RFC3339)+`)","step":"a","type":"urn:flowrun:error:deadline"}`)
			},
		},
		{
			name: "foreach fans out up to the run's parallel limit",
			src: `workflow "w" {
  version = "1.0.0"
  limits { parallel = 2 }
  step "each" {
    foreach {
      items       = "[1, 2, 3]"
      concurrency = 2
    }
    exec { command = ["echo", "{{ item }}"] }
  }
  step "other" {
    exec { command = ["true"] }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "each=running each[0]=running each[1]=running", events: "step_started:each step_started:each[0] step_started:each[1]", launches: "each[0]#1 each[1]#1"},
			check: func(t *testing.T, sc *scheduler) {
				if !sc.blocked {
					t.Fatal("the step held back by the parallel limit did not mark the pass blocked")
				}
			},
		},
		{
			name: "an item's end frees a slot for the next item",
			src: `workflow "w" {
  version = "1.0.0"
  step "each" {
    foreach {
      items       = "[1, 2, 3]"
      concurrency = 2
    }
    exec { command = ["echo", "{{ item }}"] }
  }
}`,
			rows: []store.Step{stepRow("each", store.StepRunning, withAttempts(0), withState(rowState{Items: recordedItems(`[1,2,3]`)})),
				stepRow("each[0]", store.StepRunning), stepRow("each[1]", store.StepRunning)},
			ev:   schedEvent{kind: "end", key: "each[0]", out: "1"},
			want: passWant{steps: "each[0]=completed each[2]=running", events: "step_completed:each[0] step_started:each[2]", launches: "each[2]#1"},
		},
		{
			name: "until: an iteration that leaves the condition false starts the next after the interval",
			src: `workflow "w" {
  version = "1.0.0"
  step "count" {
    until          = "steps.count.output.n >= 3"
    interval       = "1s"
    max_iterations = 5
    set { n = "{{ iteration == 0 ? 1 : steps.count.output.n + 1 }}" }
  }
}`,
			rows: []store.Step{stepRow("count", store.StepWaiting, withWake(ms(0)), withState(rowState{Wait: waitInterval, Iteration: 1})),
				stepRow("count#0", store.StepCompleted, withOutput(`{"n":1}`))},
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "count=waiting count#1=completed", events: "step_completed:count#1 run_parked", run: "waiting", park: "timer at +1s", wake: ms(1000)},
			check: func(t *testing.T, sc *scheduler) {
				if st := sc.state("count"); st.Iteration != 2 || st.Wait != waitInterval {
					t.Fatalf("count's State = %+v, want iteration 2, waiting for the interval", st)
				}
				wantJSON(t, "iteration 1's output", written(t, sc, "count#1").Output, `{"n":2}`)
			},
		},
		{
			name: "until: the condition true ends the loop with the last iteration's output",
			src: `workflow "w" {
  version = "1.0.0"
  step "count" {
    until          = "steps.count.output.n >= 2"
    max_iterations = 5
    set { n = "{{ iteration == 0 ? 1 : steps.count.output.n + 1 }}" }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "count=completed count#0=completed count#1=completed", events: "step_completed:count#0 step_completed:count#1 step_completed:count run_completed", run: "completed"},
		},
		{
			name: "switch: the first true case is taken and the other branch is skipped",
			src: `workflow "w" {
  version = "1.0.0"
  step "route" {
    switch {
      case {
        when = "1 > 2"
        next = [step.slow]
      }
      case {
        when = "2 > 1"
        next = [step.fast]
      }
    }
  }
  step "fast" {
    set { v = "fast" }
  }
  step "slow" {
    set { v = "slow" }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "route=completed fast=completed slow=skipped", events: "step_completed:route step_completed:fast step_skipped:slow run_completed", run: "completed"},
			check: func(t *testing.T, sc *scheduler) {
				wantJSON(t, "route's output", written(t, sc, "route").Output, `"case1"`)
			},
		},
		{
			name: "sleep: starting records the wake time",
			src: `workflow "w" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "10m" }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "nap=waiting", events: "step_started:nap run_parked", run: "waiting", park: "timer at +10m0s", wake: now.Add(10 * time.Minute)},
		},
		{
			name: "sleep: the wake time come completes the step",
			src: `workflow "w" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "10m" }
  }
}`,
			rows: []store.Step{stepRow("nap", store.StepWaiting, withWake(ms(0)), withState(rowState{Wait: waitSleep}))},
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "nap=completed", events: "step_completed:nap run_completed", run: "completed"},
			check: func(t *testing.T, sc *scheduler) {
				wantJSON(t, "nap's output", written(t, sc, "nap").Output, `{"woke_at":"`+now.Format(time.RFC3339Nano)+`"}`)
			},
		},
		{
			name: "wait: no signal pending, the step waits on it",
			src: `workflow "w" {
  version = "1.0.0"
  step "approve" {
    wait { signal = "approval" }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "approve=waiting", events: "step_started:approve run_parked", run: "waiting", park: "signal:approval at +876000h0m0s", external: true},
		},
		{
			name: "wait: a signal that arrived is consumed and completes the step",
			src: `workflow "w" {
  version = "1.0.0"
  step "approve" {
    wait { signal = "approval" }
  }
  output "by" { value = "{{ steps.approve.output.by }}" }
}`,
			rows: []store.Step{stepRow("approve", store.StepWaiting, withState(rowState{Wait: waitSignal, Signal: "approval"}))},
			ev:   schedEvent{kind: "signal", signal: store.Signal{ID: 7, Name: "approval", Payload: []byte(`{"by":"ann"}`)}},
			want: passWant{steps: "approve=completed", events: "signal_consumed:approve step_completed:approve run_completed", run: "completed"},
			check: func(t *testing.T, sc *scheduler) {
				if c := sc.tx.t.ConsumeSignals; len(c) != 1 || c[0].SignalID != 7 || c[0].StepKey != "approve" {
					t.Fatalf("consumed signals = %+v, want signal 7 by approve", c)
				}
				wantJSON(t, "run outputs", sc.tx.t.Run.Outputs, `{"by":"ann"}`)
			},
		},
		{
			name: "workflow: the child run is inserted in the transition that sets the step waiting",
			src: `workflow "parent" {
  version = "1.0.0"
  step "kid" {
    timeout = "1h"
    workflow {
      name    = "child"
      version = "1"
      input   = { n = 21 }
    }
  }
}
workflow "child" {
  version = "1.0.0"
  input "n" { type = number }
  step "double" {
    set { v = "{{ input.n * 2 }}" }
  }
}`,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "kid=waiting", events: "child_started:kid run_parked", run: "waiting", park: "child at +1h0m0s", children: "child:kid", wake: now.Add(time.Hour), external: true},
			check: func(t *testing.T, sc *scheduler) {
				c := sc.tx.t.Children[0]
				if c.ParentRunID != "r1" || c.RootRunID != "r1" || c.Key != "r1/kid" {
					t.Fatalf("child insert = %+v, want parent and root r1, key r1/kid", c)
				}
				wantJSON(t, "child inputs", c.Inputs, `{"n":21}`)
			},
		},
		{
			name: "workflow: the child's end completes the step with its outputs",
			src: `workflow "parent" {
  version = "1.0.0"
  step "kid" {
    workflow {
      name    = "child"
      version = "1"
    }
  }
}
workflow "child" {
  version = "1.0.0"
  step "s" {
    set { v = 1 }
  }
}`,
			rows: []store.Step{stepRow("kid", store.StepWaiting, withState(rowState{Wait: waitChild, Child: "c1"}))},
			ev:   schedEvent{kind: "child", child: store.Run{ID: "c1", Workflow: "child", Status: store.RunCompleted, Outputs: []byte(`{"v":1}`)}},
			want: passWant{steps: "kid=completed", events: "step_completed:kid run_completed", run: "completed"},
		},
		{
			name: "draining: no step key of any kind begins",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
  step "b" {
    exec { command = ["true"] }
  }
}`,
			draining: true,
			ev:       schedEvent{kind: "pass"},
			want:     passWant{events: "run_parked", run: "pending", park: " at +0s"},
			check: func(t *testing.T, sc *scheduler) {
				if !sc.blocked {
					t.Fatal("a draining pass with ready steps is not blocked")
				}
			},
		},
		{
			name: "on_error = continue: a failed step lets the steps after it run",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    on_error = "continue"
    exec { command = ["false"] }
  }
  step "b" {
    depends_on = [step.a]
    set { saw = "{{ steps.a.status }}" }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepRunning)},
			ev:   schedEvent{kind: "end", key: "a", err: exitErr(3)},
			want: passWant{steps: "a=failed b=completed", events: "step_failed:a step_completed:b run_completed", run: "completed"},
			check: func(t *testing.T, sc *scheduler) {
				wantJSON(t, "b's output", written(t, sc, "b").Output, `{"saw":"failed"}`)
			},
		},
		{
			name: "a failed step without on_error fails the run",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    exec { command = ["false"] }
  }
  step "b" {
    depends_on = [step.a]
    set { x = 1 }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepRunning)},
			ev:   schedEvent{kind: "end", key: "a", err: exitErr(3)},
			want: passWant{steps: "a=failed", events: "step_failed:a run_failed:a", run: "failed"},
		},
		{
			name: "claim: an attempt left running by a gone worker is interrupted and its step runs again",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    retry { attempts = 2 }
    exec { command = ["true"] }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepRunning, withAttempts(2))},
			ev: schedEvent{kind: "claim", atts: []store.Attempt{
				{StepKey: "a", Attempt: 1, Status: store.AttemptFailed, Owner: "gone/1/w"},
				{StepKey: "a", Attempt: 2, Status: store.AttemptRunning, Owner: "gone/1/w"}}},
			want: passWant{steps: "a=running", events: "interrupted:a step_started:a", launches: "a#3"},
			check: func(t *testing.T, sc *scheduler) {
				if n := len(sc.tx.t.Attempts); n != 2 || sc.tx.t.Attempts[0].Status != store.AttemptInterrupted || sc.tx.t.Attempts[1].Status != store.AttemptRunning {
					t.Fatalf("attempt writes = %+v, want attempt 2 interrupted and attempt 3 running", sc.tx.t.Attempts)
				}
				if st := sc.state("a"); st.Interrupts != 1 || sc.failures["a"] != 1 {
					t.Fatalf("a's interrupts = %d, failures = %d; want 1 and 1 (the interruption is not a failure)", st.Interrupts, sc.failures["a"])
				}
			},
		},
		{
			name: "cancel: the attempt in flight is stopped and every unfinished key canceled",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    exec { command = ["sleep", "100"] }
  }
  step "nap" {
    sleep { duration = "1h" }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepRunning), stepRow("nap", store.StepWaiting, withWake(ms(3600000)), withState(rowState{Wait: waitSleep}))},
			ev:   schedEvent{kind: "cancel"},
			want: passWant{steps: "a=canceled nap=canceled", events: "step_canceled:nap run_canceled", stops: "a#1", run: "canceled"},
		},
		{
			name: "halt: the attempt in flight is interrupted, its step pending again, the run released due now",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    exec { command = ["sleep", "100"] }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepRunning)},
			ev:   schedEvent{kind: "halt"},
			want: passWant{steps: "a=pending", events: "interrupted:a run_parked", stops: "a#1", run: "pending", park: " at +0s"},
		},
		{
			name: "hold: a run only its sleep moves on is held until the sleep ends, not parked",
			src:  napSrc,
			hold: true,
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "nap=waiting", events: "step_started:nap", wake: now.Add(10 * time.Minute), hold: now.Add(10 * time.Minute)},
		},
		{
			name:     "hold: the run's deadline brings the hold forward",
			src:      napSrc,
			hold:     true,
			deadline: ms(60000),
			ev:       schedEvent{kind: "pass"},
			want:     passWant{steps: "nap=waiting", events: "step_started:nap", wake: ms(60000), hold: ms(60000)},
		},
		{
			name: "hold: a retry's backoff holds the run until the retry",
			src: `workflow "w" {
  version = "1.0.0"
  step "a" {
    retry { attempts = 3 }
    exec { command = ["false"] }
  }
}`,
			rows: []store.Step{stepRow("a", store.StepWaiting, withWake(ms(5)), withState(rowState{Wait: waitRetry, Attempt: 2}))},
			hold: true,
			ev:   schedEvent{kind: "pass"},
			want: passWant{wake: ms(5), hold: ms(5)},
		},
		{
			name:     "no hold while draining: the run parks on its timer",
			src:      napSrc,
			rows:     napping,
			hold:     true,
			draining: true,
			ev:       schedEvent{kind: "pass"},
			want:     passWant{events: "run_parked", run: "waiting", park: "timer at +5ms", wake: ms(5)},
		},
		{
			name: "no hold on a halt: the run is released due now",
			src:  napSrc,
			rows: napping,
			hold: true,
			ev:   schedEvent{kind: "halt"},
			want: passWant{events: "run_parked", run: "pending", park: " at +0s", wake: ms(5)},
		},
		{
			name: "no hold on a cancel: the run is canceled",
			src:  napSrc,
			rows: napping,
			hold: true,
			ev:   schedEvent{kind: "cancel"},
			want: passWant{steps: "nap=canceled", events: "step_canceled:nap run_canceled", run: "canceled"},
		},
		{
			name: "no hold on a cancel the store recorded: the run is canceled",
			src:  napSrc,
			rows: napping,
			hold: true,
			prep: func(sc *scheduler) { sc.run.CancelRequested = true },
			ev:   schedEvent{kind: "pass"},
			want: passWant{steps: "nap=canceled", events: "step_canceled:nap run_canceled", run: "canceled"},
		},
		{
			name: "no hold while a child run of the run is unfinished",
			src:  napSrc,
			rows: napping,
			hold: true,
			prep: func(sc *scheduler) { sc.children["c1"] = store.Run{ID: "c1", Status: store.RunRunning} },
			ev:   schedEvent{kind: "pass"},
			want: passWant{events: "run_parked", run: "waiting", park: "timer at +5ms", wake: ms(5)},
		},
		{
			name: "no hold while a step waits on a signal, even with the earliest wake a timer's",
			src: `workflow "w" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "10m" }
  }
  step "approve" {
    wait { signal = "approval" }
  }
}`,
			rows: append([]store.Step{stepRow("approve", store.StepWaiting, withState(rowState{Wait: waitSignal, Signal: "approval"}))}, napping...),
			hold: true,
			ev:   schedEvent{kind: "pass"},
			want: passWant{events: "run_parked", run: "waiting", park: "timer at +5ms", wake: ms(5), external: true},
		},
		{
			name: "no hold for a child run: its parent's engine moves its tree",
			src:  napSrc,
			rows: napping,
			hold: true,
			prep: func(sc *scheduler) { sc.run.ParentRunID = "p1" },
			ev:   schedEvent{kind: "pass"},
			want: passWant{events: "run_parked", run: "waiting", park: "timer at +5ms", wake: ms(5)},
		},
		{
			// A waiting key whose State names no wait this engine knows
			// (no timer ends it): the run parks with no reason.
			name: "no hold on a wait that is not a timer's",
			src:  napSrc,
			rows: []store.Step{stepRow("nap", store.StepWaiting, withWake(ms(5)), withState(rowState{}))},
			hold: true,
			ev:   schedEvent{kind: "pass"},
			want: passWant{events: "run_parked", run: "waiting", park: " at +5ms", wake: ms(5)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, _ := testScheduler(t, tc.src, tc.rows, tc.deadline, tc.jitter)
			at := tc.now
			if at.IsZero() {
				at = now
			}
			ctx := context.Background()
			ev := passEvent{now: at, draining: tc.draining, hold: tc.hold}
			if tc.prep != nil {
				tc.prep(sc)
			}
			switch tc.ev.kind {
			case "pass":
			case "cancel":
				ev.cancel = true
			case "halt":
				ev.stop = true
			case "end":
				l := sc.inFlight[tc.ev.key]
				if l == nil {
					t.Fatalf("no attempt of %s in flight", tc.ev.key)
				}
				sc.absorb(at, attemptEnd{l: l, out: tc.ev.out, err: tc.ev.err})
			case "signal":
				sc.signals = append(sc.signals, tc.ev.signal)
			case "child":
				sc.children[tc.ev.child.ID] = tc.ev.child
			case "claim":
				clear(sc.inFlight) // a new runner: nothing of the run is in flight
				sc.reclaim(at, tc.ev.atts)
			default:
				t.Fatalf("unknown event %q", tc.ev.kind)
			}
			pass(ctx, sc, ev)
			got := decided(sc)
			if got != tc.want {
				t.Fatalf("decided\n%+v\nwant\n%+v", got, tc.want)
			}
			if tc.check != nil {
				tc.check(t, sc)
			}
		})
	}
}

// TestHoldWakeRule asks the hold rule alone (holdWake), on a run whose
// only waiting key is a sleep, for the refusals a whole pass cannot show:
// a cancel or stop is answered by control before the rule is reached, a
// blocked pass is a draining one, and a pass leaves no key waiting on a
// timer that is due (decide ends it). The rule still refuses them, so it
// holds on its own whatever calls it.
func TestHoldWakeRule(t *testing.T) {
	src := `workflow "w" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "10m" }
  }
}`
	for _, tc := range []struct {
		name   string
		wake   time.Time // the sleep's WakeAt
		ev     passEvent // now and hold are set unless told
		prep   func(sc *scheduler)
		holdAt time.Time // zero: no hold
	}{
		{name: "a sleep after now is held until", wake: t0.Add(5 * time.Millisecond), holdAt: t0.Add(5 * time.Millisecond)},
		{name: "a wake at now is not held", wake: t0},
		{name: "a wake before now is not held", wake: t0.Add(-time.Second)},
		{name: "a cancel requested is not held", wake: t0.Add(time.Second), ev: passEvent{cancel: true}},
		{name: "a stop is not held", wake: t0.Add(time.Second), ev: passEvent{stop: true}},
		{name: "a cancel the store recorded is not held", wake: t0.Add(time.Second), prep: func(sc *scheduler) { sc.run.CancelRequested = true }},
		{name: "a pass with ready work not started is not held", wake: t0.Add(time.Second), prep: func(sc *scheduler) { sc.blocked = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, _ := testScheduler(t, src, []store.Step{stepRow("nap", store.StepWaiting, withWake(tc.wake), withState(rowState{Wait: waitSleep}))}, time.Time{}, 0)
			ev := tc.ev
			ev.now, ev.hold = t0, true
			sc.now, sc.ev = ev.now, ev
			if tc.prep != nil {
				tc.prep(sc)
			}
			at, ok := sc.holdWake()
			if ok != !tc.holdAt.IsZero() || !at.Equal(tc.holdAt) {
				t.Fatalf("holdWake = %s, %v; want %s, %v", at, ok, tc.holdAt, !tc.holdAt.IsZero())
			}
		})
	}
}

// TestSchedulerMethodsArePure scans the package's source: no method of
// the scheduler starts a goroutine, sends or receives on a channel,
// selects, reads the clock, sleeps, names the Engine, its store, clock or
// options, or a supervisor's flag (what it asks outside goes through
// outside; what it is told comes in the pass's event). The methods that
// decide a pass, its end and the hold must be among those it scans.
func TestSchedulerMethodsArePure(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	methods := 0
	// The decisions that were once the runner's must stay the scheduler's:
	// the pass, its end (park, cancel, interrupt) and the hold rule.
	must := map[string]bool{"control": false, "decidePass": false, "decide": false, "park": false, "holdWake": false,
		"cancelRun": false, "interruptRun": false, "reclaim": false, "absorb": false}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			if id, ok := star.X.(*ast.Ident); !ok || id.Name != "scheduler" {
				continue
			}
			methods++
			if _, ok := must[fd.Name.Name]; ok {
				must[fd.Name.Name] = true
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				bad := ""
				switch x := n.(type) {
				case *ast.GoStmt:
					bad = "starts a goroutine"
				case *ast.SendStmt:
					bad = "sends on a channel"
				case *ast.SelectStmt:
					bad = "selects"
				case *ast.UnaryExpr:
					if x.Op == token.ARROW {
						bad = "receives from a channel"
					}
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" && (x.Sel.Name == "Now" || x.Sel.Name == "Since" || x.Sel.Name == "Sleep" || x.Sel.Name == "After" || x.Sel.Name == "NewTimer") {
						bad = "calls time." + x.Sel.Name
					}
					switch x.Sel.Name {
					case "clk", "st", "e", "opts", "flights", "drain", "halt", "lost", "cancelReq", "recheck", "solo", "HoldTimer":
						bad = "reaches ." + x.Sel.Name
					}
				case *ast.Ident:
					if x.Name == "Engine" {
						bad = "names the Engine"
					}
				}
				if bad != "" {
					t.Errorf("%s: scheduler.%s %s", fset.Position(n.Pos()), fd.Name.Name, bad)
				}
				return true
			})
		}
	}
	if methods < 50 {
		t.Fatalf("found %d scheduler methods; the scan lost them", methods)
	}
	for name, found := range must {
		if !found {
			t.Errorf("%s is not a method of the scheduler: the scan does not check it", name)
		}
	}
}

// TestSlotRefused: a run whose concurrency key's slots are all held is
// skipped, failed or queued as on_conflict says, decided from the slot
// the store answered and the pass's instant.
func TestSlotRefused(t *testing.T) {
	for _, tc := range []struct {
		conflict string
		queued   bool
		run      string
		events   string
		avail    time.Time
		skipped  string
	}{
		{"skip", false, "canceled", "run_canceled", time.Time{}, "concurrency: the key was held by 2 of 2 runs"},
		{"fail", false, "failed", "run_failed", time.Time{}, ""},
		{"queue", true, "waiting", "run_queued", t0.Add(30 * time.Second), ""},
		{"queue", false, "waiting", "", t0.Add(30 * time.Second), ""},
	} {
		t.Run(fmt.Sprintf("%s queued=%v", tc.conflict, tc.queued), func(t *testing.T) {
			sc, _ := testScheduler(t, `workflow "w" {
  version = "1.0.0"
  concurrency {
    key         = "'k'"
    limit       = 2
    on_conflict = "`+tc.conflict+`"
  }
  step "a" {
    set { x = 1 }
  }
}`, nil, time.Time{}, 0)
			sc.now = t0
			key, ok := sc.concurrencyKey(context.Background())
			if !ok || key != "k" {
				t.Fatalf("concurrencyKey = %q, %v; want k", key, ok)
			}
			sc.slotRefused(key, store.Slot{Queued: tc.queued, Holders: 2})
			got := decided(sc)
			if got.run != tc.run || got.events != tc.events || !sc.ended {
				t.Fatalf("decided run %q events %q ended %v; want %q, %q, ended", got.run, got.events, sc.ended, tc.run, tc.events)
			}
			u := sc.tx.t.Run
			if !tc.avail.IsZero() && (u.AvailableAt == nil || !u.AvailableAt.Equal(tc.avail) || *u.WaitReason != "queue") {
				t.Fatalf("queued run update = %+v, want available at %s, wait reason queue", u, tc.avail)
			}
			if sc.tx.t.FireSkipped != tc.skipped {
				t.Fatalf("FireSkipped = %q, want %q", sc.tx.t.FireSkipped, tc.skipped)
			}
		})
	}
}

// BenchmarkDecisionPassChain measures the scheduler alone on a chain of
// 1,000 set steps: passes (each bounded by maxTxSteps) until the run
// completes, the transitions taken as the supervisor's commits take them.
func BenchmarkDecisionPassChain(b *testing.B) {
	var src strings.Builder
	src.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n")
	for i := range 1000 {
		fmt.Fprintf(&src, "  step \"s%d\" {\n", i)
		if i > 0 {
			fmt.Fprintf(&src, "    depends_on = [step.s%d]\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n", i-1, i-1)
		} else {
			src.WriteString("    set { v = 0 }\n")
		}
		src.WriteString("  }\n")
	}
	src.WriteString("  output \"v\" { value = \"{{ steps.s999.output.v }}\" }\n}\n")
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		sc, _ := testScheduler(b, src.String(), nil, time.Time{}, 0)
		b.StartTimer()
		passes := 0
		for !sc.ended {
			sc.more = false
			pass(ctx, sc, passEvent{now: t0})
			sc.tx.take(t0)
			passes++
		}
		if passes < 4 {
			b.Fatalf("%d passes for 1,000 steps, want one per %d at most", passes, maxTxSteps)
		}
	}
}

// TestSchedulerHoldsNoEffects walks the types a scheduler holds (its
// embedded state, decisions and environment, and the package's types they
// point to): none is a channel, an atomic value, the store, a clock, the
// Engine, the supervisor or a flight, so no method can reach one through
// its fields whatever it is named (TestSchedulerMethodsArePure checks the
// methods' text by name). What it asks outside the run goes through the
// outside interface, which the walk does not enter; other packages'
// structs (rows, the graph, its caches' locks) are not entered either.
func TestSchedulerHoldsNoEffects(t *testing.T) {
	forbidden := map[reflect.Type]string{
		reflect.TypeFor[store.Store]():    "the store",
		reflect.TypeFor[clock.Clock]():    "a clock",
		reflect.TypeFor[Engine]():         "the Engine",
		reflect.TypeFor[supervisor]():     "the supervisor",
		reflect.TypeFor[flight]():         "a flight",
		reflect.TypeFor[sync.Cond]():      "a condition variable",
		reflect.TypeFor[sync.WaitGroup](): "a wait group",
	}
	seen := map[reflect.Type]bool{}
	var walk func(ty reflect.Type, path string)
	walk = func(ty reflect.Type, path string) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		if what, ok := forbidden[ty]; ok {
			t.Errorf("scheduler%s is %s", path, what)
			return
		}
		if ty.PkgPath() == "sync/atomic" {
			t.Errorf("scheduler%s is an atomic %s", path, ty.Name())
			return
		}
		switch ty.Kind() {
		case reflect.Chan:
			t.Errorf("scheduler%s is a channel", path)
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Map:
			walk(ty.Key(), path+"{key}")
			walk(ty.Elem(), path+"{}")
		case reflect.Struct:
			if ty.PkgPath() != reflect.TypeFor[scheduler]().PkgPath() {
				return // another package's value (a row, a graph, a lock): not the run's effects
			}
			for i := range ty.NumField() {
				f := ty.Field(i)
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Interface:
			for it, what := range forbidden {
				if it.Kind() == reflect.Interface && ty != reflect.TypeFor[outside]() && ty.Implements(it) {
					t.Errorf("scheduler%s (%s) can hold %s", path, ty, what)
				}
			}
		}
	}
	walk(reflect.TypeFor[scheduler](), "")
	if len(seen) < 30 {
		t.Fatalf("walked %d types; the walk lost the scheduler's fields", len(seen))
	}
}

// pass is a decision pass as the runner's loop makes it (runner.main),
// with nothing changed by other processes between control and decidePass.
func pass(ctx context.Context, sc *scheduler, ev passEvent) {
	if !sc.control(ev) {
		sc.decidePass(ctx)
	}
}
