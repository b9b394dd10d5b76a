package interp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestAttemptCapCountsSet: limits.attempts counts the start of every step
// key, set steps and until iterations included (semantics.md §14). An
// until loop of set iterations under a cap of 10 fails with attempt_cap,
// naming the step, having used all 10; before, set steps used no attempt.
func TestAttemptCapCountsSet(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "many" {
  version = "1.0.0"
  limits { attempts = 10 }
  step "first" {
    set { v = 0 }
  }
  step "count" {
    depends_on     = [step.first]
    until          = "false"
    max_iterations = 10
    set { v = "{{ iteration }}" }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "attempt_cap" {
		t.Fatalf("run error = %s, want kind attempt_cap", run.Error)
	}
	if !strings.Contains(string(run.Error), `"step":"count"`) {
		t.Fatalf("run error = %s, want it to name step count", run.Error)
	}
	if run.AttemptsUsed != 10 {
		t.Fatalf("attempts used = %d, want 10", run.AttemptsUsed)
	}
}

// TestAttemptCapKnownItems: a foreach of 20 set items under a cap of 10
// fails before its first item (its items are known when it starts) with
// the step failed, kind attempt_cap, and no attempt used; before, 10
// items ran, and the step showed canceled.
func TestAttemptCapKnownItems(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "many" {
  version = "1.0.0"
  limits { attempts = 10 }
  step "each" {
    foreach { items = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]" }
    set { v = "{{ item }}" }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "attempt_cap" {
		t.Fatalf("run error = %s, want kind attempt_cap", run.Error)
	}
	if run.AttemptsUsed != 0 {
		t.Fatalf("attempts used = %d, want 0: no item may start", run.AttemptsUsed)
	}
	if st := b.show(run.ID).Steps["each"].Status; st != store.StepFailed {
		t.Fatalf("step each is %s, want failed", st)
	}
}

// TestAttemptCapCountsEveryKind: a chain of a set, a switch, a fail-free
// step without action, a sleep and a wait uses one attempt each; the cap
// is met exactly (the run completes), and one step more fails it.
func TestAttemptCapCountsEveryKind(t *testing.T) {
	src := func(cap int) string {
		return fmt.Sprintf(`
workflow "kinds" {
  version = "1.0.0"
  limits { attempts = %d }
  step "a" {
    set { x = 1 }
  }
  step "b" {
    depends_on = [step.a]
    switch {
      case {
        when = "steps.a.output.x == 1"
        next = [step.c]
      }
    }
  }
  step "c" {
    depends_on = [step.b]
    sleep { duration = "1s" }
  }
  step "d" {
    depends_on = [step.c]
    set { y = 2 }
  }
}`, cap)
	}
	b := setup(t)
	gs := b.compile(src(4))
	run := b.start(gs[0].Workflow, nil)
	run, err := b.e.Drive(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for run.Status == store.RunWaiting {
		b.clk.Advance(2 * time.Second)
		run = b.drive(run.ID)
	}
	wantStatus(t, run, store.RunCompleted)
	if run.AttemptsUsed != 4 {
		t.Fatalf("attempts used = %d, want 4 (one per step)", run.AttemptsUsed)
	}

	b = setup(t)
	gs = b.compile(src(3))
	run = b.start(gs[0].Workflow, nil)
	run = b.drive(run.ID)
	for run.Status == store.RunWaiting {
		b.clk.Advance(2 * time.Second)
		run = b.drive(run.ID)
	}
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "attempt_cap" || !strings.Contains(string(run.Error), `"step":"d"`) {
		t.Fatalf("run error = %s, want attempt_cap at step d", run.Error)
	}
}

// TestDrainStartsNoSetStep: a draining runner begins no step, whatever
// its action: a chain of set steps is parked pending with nothing run.
// Before, set steps ran under a drain, so a Ctrl-C on a long chain of
// them was ignored.
func TestDrainStartsNoSetStep(t *testing.T) {
	b := setup(t)
	var sb strings.Builder
	sb.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < 600; i++ {
		fmt.Fprintf(&sb, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    set { v = %d }\n  }\n", i, i-1, i)
	}
	sb.WriteString("}\n")
	gs := b.compile(sb.String())
	run := b.start(gs[0].Workflow, nil)
	run = b.drainRound(run.ID, "testhost/1/t")
	if run.Status != store.RunPending || run.Lease.Owner != "" {
		t.Fatalf("run = %s (lease %q), want pending and released", run.Status, run.Lease.Owner)
	}
	steps, err := b.st.StepList(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 0 {
		t.Fatalf("a draining runner began %d steps, want none", len(steps))
	}
	wantStatus(t, b.drive(run.ID), store.RunCompleted)
}

// drainRound claims the run as owner and works on it with a runner that
// is draining from the start (a worker told to stop): it rebuilds the run
// and parks it without beginning anything.
func (b *bundle) drainRound(runID, owner string) store.Run {
	b.t.Helper()
	claimed, err := b.st.RunClaim(b.ctx, store.RunClaimParams{Owner: owner, Now: b.clk.Now(), LeaseFor: time.Hour, Limit: 1, RunID: runID})
	if err != nil || len(claimed) != 1 {
		b.t.Fatalf("claim: %v %v", claimed, err)
	}
	r := b.e.newRunner(claimed[0], owner)
	r.drain.Store(true)
	run, err := r.main(b.ctx)
	if err != nil {
		b.t.Fatalf("drained runner: %v", err)
	}
	return run
}

// crashRound plays a worker (owner, a process that no longer exists) that
// claimed the run, committed attempt n of step as running (as launch
// does, keeping the step's state) and died; then a draining runner of
// this engine reclaims the run and closes the attempt as interrupted.
func (b *bundle) crashRound(runID, step string, n int, dead string) store.Run {
	b.t.Helper()
	claimed, err := b.st.RunClaim(b.ctx, store.RunClaimParams{Owner: dead, Now: b.clk.Now(), LeaseFor: time.Hour, Limit: 1, RunID: runID})
	if err != nil || len(claimed) != 1 {
		b.t.Fatalf("claim as %s: %v %v", dead, claimed, err)
	}
	w := store.StepWrite{Key: step, Step: step, Index: -1, Iteration: -1, Status: store.StepRunning, Attempts: n, StartedAt: b.clk.Now()}
	if row, err := b.st.StepGet(b.ctx, runID, step); err == nil {
		w.State = row.State
	}
	used := claimed[0].AttemptsUsed + 1
	res, err := b.st.TransitionCommit(b.ctx, []store.Transition{{
		RunID: runID, Lease: claimed[0].Lease, Now: b.clk.Now(),
		Run:      &store.RunUpdate{AttemptsUsed: &used},
		Steps:    []store.StepWrite{w},
		Attempts: []store.AttemptWrite{{StepKey: step, Attempt: n, Status: store.AttemptRunning, Owner: dead, StartedAt: b.clk.Now(), IdempotencyKey: runID + "/" + step}},
	}})
	if err != nil || res[0].Err != nil {
		b.t.Fatalf("seed attempt %d: %v %v", n, err, res)
	}
	if _, err := b.st.LeaseExpire(b.ctx, store.LeaseExpireParams{Owners: []string{dead}, Now: b.clk.Now()}); err != nil {
		b.t.Fatal(err)
	}
	return b.drainRound(runID, "testhost/1/t")
}

// TestInterruptedAttemptUsesNoBudget: an attempt interrupted by the death
// of its worker counts toward neither limits.attempts nor retry.attempts
// (semantics.md §12, §14). With a cap of 2, a run of two exec steps whose
// second attempt was interrupted twice still completes; before, the
// interrupted attempts used up the cap and the run failed attempt_cap.
func TestInterruptedAttemptUsesNoBudget(t *testing.T) {
	b := setup(t)
	gs := b.compile(`
workflow "two" {
  version = "1.0.0"
  limits { attempts = 2 }
  step "first" {
    exec { command = ["true"] }
  }
  step "second" {
    depends_on = [step.first]
    exec { command = ["sh", "-c", "echo $FLOWRUN_ATTEMPT"] }
  }
}`)
	run := b.start(gs[0].Workflow, nil)
	// first runs and completes here; second is begun by dead workers.
	run = b.crashRound(run.ID, "second", 1, "testhost/999999991/w")
	if run.AttemptsUsed != 0 {
		t.Fatalf("attempts used after an interrupted attempt = %d, want 0", run.AttemptsUsed)
	}
	run = b.crashRound(run.ID, "second", 2, "testhost/999999992/w")
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	if done.AttemptsUsed != 2 {
		t.Fatalf("attempts used = %d, want 2 (first, and second's attempt that ran)", done.AttemptsUsed)
	}
	as := b.attempts(run.ID, "second")
	if len(as) != 3 || as[0].Status != store.AttemptInterrupted || as[1].Status != store.AttemptInterrupted || as[2].Status != store.AttemptCompleted {
		t.Fatalf("attempts of second = %+v", as)
	}
}

// TestInterruptedRetryBudget: interruptions do not use up retry.attempts:
// a step with attempts = 2 whose first attempt fails, after two
// interruptions, still gets its retry.
func TestInterruptedRetryBudget(t *testing.T) {
	b := setup(t)
	gs := b.compile(`
workflow "retry" {
  version = "1.0.0"
  step "flaky" {
    retry {
      attempts = 2
      backoff  = "1s"
      jitter   = "0s"
    }
    exec { command = ["sh", "-c", "test $FLOWRUN_ATTEMPT -ge 4"] }
  }
}`)
	run := b.start(gs[0].Workflow, nil)
	run = b.crashRound(run.ID, "flaky", 1, "testhost/999999991/w")
	run = b.crashRound(run.ID, "flaky", 2, "testhost/999999992/w")
	run = b.drive(run.ID) // attempt 3 fails, a retry is scheduled
	for run.Status == store.RunWaiting {
		b.clk.Advance(2 * time.Second)
		run = b.drive(run.ID)
	}
	wantStatus(t, run, store.RunCompleted)
}

// TestPoisonStepFailsInterrupted: a step whose attempts are interrupted
// maxInterrupts times in a row (it kills its worker) fails with kind
// interrupted instead of running again; one interruption fewer and it
// runs.
func TestPoisonStepFailsInterrupted(t *testing.T) {
	src := `
workflow "poison" {
  version = "1.0.0"
  step "boom" {
    exec { command = ["true"] }
  }
}`
	b := setup(t)
	gs := b.compile(src)
	run := b.start(gs[0].Workflow, nil)
	for n := 1; n <= maxInterrupts; n++ {
		run = b.crashRound(run.ID, "boom", n, fmt.Sprintf("testhost/%d/w", 999999990+n))
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunFailed)
	if k := errKind(t, done.Error); k != "interrupted" {
		t.Fatalf("run error = %s, want kind interrupted", done.Error)
	}
	if as := b.attempts(run.ID, "boom"); len(as) != maxInterrupts {
		t.Fatalf("attempts of boom = %d, want %d (no attempt after the last interruption)", len(as), maxInterrupts)
	}
	step := b.show(run.ID).Steps["boom"]
	if k := errKind(t, step.Error); k != "interrupted" || !strings.Contains(string(step.Error), fmt.Sprintf("%d times in a row", maxInterrupts)) {
		t.Fatalf("step error = %s", step.Error)
	}

	b = setup(t)
	gs = b.compile(src)
	run = b.start(gs[0].Workflow, nil)
	for n := 1; n < maxInterrupts; n++ {
		run = b.crashRound(run.ID, "boom", n, fmt.Sprintf("testhost/%d/w", 999999990+n))
	}
	wantStatus(t, b.drive(run.ID), store.RunCompleted)
}

// TestInterruptsResetByEndedAttempt: interruptions count only in a row:
// an attempt that ends (here: fails and is retried) starts the count
// again, so two interruptions, a failure and two more interruptions do
// not fail the step.
func TestInterruptsResetByEndedAttempt(t *testing.T) {
	b := setup(t)
	gs := b.compile(`
workflow "reset" {
  version = "1.0.0"
  step "s" {
    retry {
      attempts = 2
      backoff  = "1s"
      jitter   = "0s"
    }
    exec { command = ["sh", "-c", "test $FLOWRUN_ATTEMPT != 3"] }
  }
}`)
	run := b.start(gs[0].Workflow, nil)
	run = b.crashRound(run.ID, "s", 1, "testhost/999999991/w")
	run = b.crashRound(run.ID, "s", 2, "testhost/999999992/w")
	run = b.drive(run.ID) // attempt 3 fails; the retry waits 1s
	wantStatus(t, run, store.RunWaiting)
	b.clk.Advance(2 * time.Second)
	run = b.crashRound(run.ID, "s", 4, "testhost/999999993/w")
	run = b.crashRound(run.ID, "s", 5, "testhost/999999994/w")
	wantStatus(t, b.drive(run.ID), store.RunCompleted)
}

// TestForeachDrainMidway: a drain that comes while a foreach of set items
// runs starts no item after the commit that told of it, parks the run, and the
// runner held only the items in flight, not the items done. Before, set
// items ignored the drain and the foreach ran to its end; and every item's
// row stayed in the runner's maps while the step ran.
func TestForeachDrainMidway(t *testing.T) {
	var r *runner
	maxAtDrain := -1
	seen := -1
	b := setup(t, func(o *Options) {
		o.OnEvent = func(ev store.Event) {
			var i int
			if ev.Kind != "step_completed" {
				return
			}
			if _, err := fmt.Sscanf(ev.StepKey, "each[%d]", &i); err != nil {
				return
			}
			seen = max(seen, i)
			if i >= 600 && maxAtDrain < 0 {
				maxAtDrain = seen
				r.drain.Store(true)
			}
		}
	})
	gs := b.compile(`
workflow "fe" {
  version = "1.0.0"
  input "items" { type = list(number) }
  limits { attempts = 1000000 }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = 4
    }
    set { v = "{{ item * 2 }}" }
  }
}`)
	items := make([]any, 2000)
	for i := range items {
		items[i] = i
	}
	run := b.start(gs[0].Workflow, map[string]any{"items": items})
	owner := "testhost/1/t"
	claimed, err := b.st.RunClaim(b.ctx, store.RunClaimParams{Owner: owner, Now: b.clk.Now(), LeaseFor: time.Hour, Limit: 1, RunID: run.ID})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	r = b.e.newRunner(claimed[0], owner)
	parked, err := r.main(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if parked.Status != store.RunPending {
		t.Fatalf("run = %s, want parked pending by the drain", parked.Status)
	}
	steps, err := b.st.StepList(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, s := range steps {
		last = max(last, s.Index)
	}
	// The commit that told of each[600] held at most maxTxSteps step
	// writes: no item after those may have begun.
	if last < maxAtDrain || last >= maxAtDrain+maxTxSteps {
		t.Fatalf("the last item begun is each[%d], want one of the commit that told of each[%d]: items began after the drain", last, maxAtDrain)
	}
	held := 0
	for key := range r.rows {
		if strings.HasPrefix(key, "each[") {
			held++
		}
	}
	if held > 8 {
		t.Fatalf("the runner held %d item rows of the foreach, want at most the items in flight", held)
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	out, _ := jsonOf(t, b.show(run.ID).Steps["each"].Output).([]any)
	if len(out) != 2000 || fmt.Sprint(out[1999]) != "map[v:3998]" || fmt.Sprint(out[0]) != "map[v:0]" {
		t.Fatalf("foreach output has %d items (first %v, last %v)", len(out), out[0], out[len(out)-1])
	}
}

// TestForeachRedriveHoles: a redrive resets a failed foreach's failed and
// canceled items to pending between completed ones; the foreach's cursor
// runs those holes and its output lists every item in index order.
func TestForeachRedriveHoles(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	gs := b.compile(fmt.Sprintf(`
workflow "holes" {
  version = "1.0.0"
  input "items" { type = list(number) }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = 3
    }
    exec { command = ["sh", "-c", "if [ {{ item }} = 4 ] && [ ! -e %[1]s/fixed ]; then exit 3; fi; echo {{ item * 10 }}"] }
  }
}`, dir))
	items := []any{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	run := b.start(gs[0].Workflow, map[string]any{"items": items})
	failed := b.drive(run.ID)
	wantStatus(t, failed, store.RunFailed)
	if err := os.WriteFile(filepath.Join(dir, "fixed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.Retry(b.ctx, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	out, _ := jsonOf(t, b.show(run.ID).Steps["each"].Output).([]any)
	if len(out) != len(items) {
		t.Fatalf("output has %d items, want %d", len(out), len(items))
	}
	for i, o := range out {
		m, _ := o.(map[string]any)
		if want := fmt.Sprintf("%d\n", i*10); m == nil || m["stdout"] != want {
			t.Fatalf("output[%d] = %v, want stdout %q", i, o, want)
		}
	}
}

// TestDrainMidPassTakesEffectNextPass: the supervisor reads a drain once,
// at the start of a pass (passEvent), and the whole pass decides on that
// snapshot. A drain requested during a pass (here by Options.Mock, which
// the pass consults as it starts the mocked wait step a) lets that pass
// finish what it decides: b, after a, begins (its running attempt commits
// and its program runs). The next pass, at b's end, begins no step key:
// c, after b, has no row, and the run is parked pending, due now. Read
// live during the pass, the drain would have kept b from beginning; not
// read at all, c would have run.
func TestDrainMidPassTakesEffectNextPass(t *testing.T) {
	var r *runner
	asked := 0
	b := setup(t, func(o *Options) {
		o.Mock = func(c MockCall) (MockResult, bool) {
			if c.Step != "a" || c.Probe {
				return MockResult{}, c.Step == "a"
			}
			asked++
			r.drain.Store(true) // the pass that starts a is under way
			return MockResult{Output: map[string]any{"ok": true}}, true
		}
	})
	gs := b.compile(`
workflow "mid" {
  version = "1.0.0"
  step "a" {
    wait { signal = "go" }
  }
  step "b" {
    depends_on = [step.a]
    exec { command = ["true"] }
  }
  step "c" {
    depends_on = [step.b]
    set { v = 1 }
  }
}`)
	run := b.start(gs[0].Workflow, nil)
	owner := "testhost/1/t"
	claimed, err := b.st.RunClaim(b.ctx, store.RunClaimParams{Owner: owner, Now: b.clk.Now(), LeaseFor: time.Hour, Limit: 1, RunID: run.ID})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	r = b.e.newRunner(claimed[0], owner)
	got, err := r.main(b.ctx)
	if err != nil {
		t.Fatalf("runner: %v", err)
	}
	if asked != 1 {
		t.Fatalf("the mock of a was asked %d times, want 1", asked)
	}
	if got.Status != store.RunPending || got.Lease.Owner != "" || !got.AvailableAt.Equal(b.clk.Now()) {
		t.Fatalf("run = %s (lease %q, due %s), want pending, released, due now (%s)", got.Status, got.Lease.Owner, got.AvailableAt, b.clk.Now())
	}
	v := b.show(run.ID)
	for step, want := range map[string]store.StepStatus{"a": store.StepCompleted, "b": store.StepCompleted} {
		if st := v.Steps[step].Status; st != want {
			t.Fatalf("step %s is %s, want %s (%s)", step, st, want, b.eventKinds(run.ID))
		}
	}
	atts, err := b.st.AttemptList(b.ctx, run.ID, "b")
	if err != nil || len(atts) != 1 || atts[0].Status != store.AttemptCompleted {
		t.Fatalf("b's attempts = %+v (%v), want one completed: b began in the pass the drain arrived in", atts, err)
	}
	if _, err := b.st.StepGet(b.ctx, run.ID, "c"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("c has a row (%v): the pass after the drain began it (%s)", err, b.eventKinds(run.ID))
	}
	wantStatus(t, b.drive(run.ID), store.RunCompleted)
}
