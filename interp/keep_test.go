package interp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// longChain is a chain of n set steps, each adding one to the last, after
// a step "first" that the chain's end reads again (a when and a value of
// step "late") and an output reads: "first" must stay readable all along.
func longChain(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow \"long\" {\n  version = \"1.0.0\"\n  limits { attempts = %d }\n", n+10)
	b.WriteString("  step \"first\" {\n    set { v = 7 }\n  }\n")
	b.WriteString("  step \"s0\" {\n    set { v = \"{{ steps.first.output.v - 7 }}\" }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n  }\n", i, i-1)
	}
	fmt.Fprintf(&b, "  step \"late\" {\n    depends_on = [step.s%d]\n    when = \"steps.first.output.v == 7\"\n    set { w = \"{{ steps.first.output.v * 2 }}\" }\n  }\n", n-1)
	fmt.Fprintf(&b, "  output \"last\" { value = \"{{ steps.s%d.output.v }}\" }\n", n-1)
	b.WriteString("  output \"first\" { value = \"{{ steps.first.output.v }}\" }\n")
	b.WriteString("  output \"late\" { value = \"{{ steps.late.output.w }}\" }\n}\n")
	return b.String()
}

// commitCounter records the size of every transition committed and can
// fail the n-th commit (a process dying before its commit).
type commitCounter struct {
	store.Store
	mu       sync.Mutex
	commits  int
	maxSteps int
	failAt   int
}

var errDiskGone = errors.New("the disk went away")

func (c *commitCounter) TransitionCommit(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, error) {
	c.mu.Lock()
	c.commits++
	if c.commits == c.failAt {
		c.mu.Unlock()
		return nil, errDiskGone
	}
	for _, t := range ts {
		c.maxSteps = max(c.maxSteps, len(t.Steps))
	}
	c.mu.Unlock()
	return c.Store.TransitionCommit(ctx, ts)
}

// TestLongChainBoundedTransitions runs a chain much longer than one
// transition's bound: it commits in several transitions of at most
// maxTxSteps step writes, every step runs once, and the steps read late
// (by a when, a value and the outputs) still show their results.
func TestLongChainBoundedTransitions(t *testing.T) {
	const n = 3*maxTxSteps + 17
	b := setup(t)
	cc := &commitCounter{Store: b.st}
	b.e = New(cc, b.e.opts)
	run := b.run(longChain(n), nil)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, fmt.Sprintf(`{"last": %d, "first": 7, "late": 14}`, n-1))
	if cc.maxSteps > maxTxSteps {
		t.Errorf("a transition wrote %d steps, want at most %d", cc.maxSteps, maxTxSteps)
	}
	if want := (n + 2) / maxTxSteps; cc.commits < want {
		t.Errorf("%d commits for %d steps, want at least %d", cc.commits, n+2, want)
	}
	v := b.show(run.ID)
	if len(v.Steps) != n+2 {
		t.Fatalf("show lists %d steps, want %d", len(v.Steps), n+2)
	}
	for name, s := range v.Steps {
		if s.Status != store.StepCompleted || s.Attempts != 1 {
			t.Fatalf("step %s: %s after %d attempts, want completed after 1", name, s.Status, s.Attempts)
		}
	}
}

// TestLongChainCrashBetweenTransitions: the process dies when it commits
// the second transition of a long chain. Driving the run again on a fresh
// engine (nothing cached) rebuilds it from what the first transition
// committed and finishes it with the same outputs; every set step is
// recorded completed exactly once.
func TestLongChainCrashBetweenTransitions(t *testing.T) {
	const n = 2*maxTxSteps + 40
	b := setup(t)
	cc := &commitCounter{Store: b.st, failAt: 3} // claim, first batch, then the crash
	opts := b.e.opts
	b.e = New(cc, opts)
	gs := b.compile(longChain(n))
	run := b.start(gs[0].Workflow, nil)
	if _, err := b.e.Drive(b.ctx, run.ID); !errors.Is(err, errDiskGone) {
		t.Fatalf("drive = %v, want the commit's failure", err)
	}
	var done int
	for _, s := range b.show(run.ID).Steps {
		if s.Status == store.StepCompleted {
			done++
		}
	}
	if done == 0 || done >= n {
		t.Fatalf("%d steps completed before the crash, want some but not all", done)
	}
	b.clk.Advance(time.Hour) // the dead worker's lease expires
	b.e = New(b.st, opts)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, fmt.Sprintf(`{"last": %d, "first": 7, "late": 14}`, n-1))
	seen := map[string]int{}
	for _, ev := range b.events(run.ID) {
		if ev.Kind == "step_completed" {
			seen[ev.StepKey]++
		}
	}
	if len(seen) != n+2 {
		t.Fatalf("%d steps have a step_completed event, want %d", len(seen), n+2)
	}
	for key, c := range seen {
		if c != 1 {
			t.Fatalf("step %s was recorded completed %d times, want once", key, c)
		}
	}
}

// TestRunnerKeepsOnlyReadSteps parks a long chain on a wait step and
// rebuilds it as a resuming runner does: the runner keeps the rows and
// results of the steps still read (the wait step's need, the step the
// outputs read) and only the status of the others.
func TestRunnerKeepsOnlyReadSteps(t *testing.T) {
	const n = 60
	b := setup(t)
	var src strings.Builder
	src.WriteString("workflow \"w\" {\n  version = \"1.0.0\"\n  limits { attempts = 100 }\n")
	src.WriteString("  step \"first\" {\n    set { v = 1 }\n  }\n")
	for i := range n {
		fmt.Fprintf(&src, "  step \"s%d\" {\n    depends_on = [step.%s]\n    set { v = %d }\n  }\n", i, map[bool]string{true: "first", false: fmt.Sprintf("s%d", i-1)}[i == 0], i)
	}
	fmt.Fprintf(&src, "  step \"gate\" {\n    depends_on = [step.s%d]\n    wait { signal = \"go\" }\n  }\n", n-1)
	src.WriteString("  output \"first\" { value = \"{{ steps.first.output.v }}\" }\n}\n")
	gs := b.compile(src.String())
	run := b.start(gs[0].Workflow, nil)
	got := b.drive(run.ID)
	wantStatus(t, got, store.RunWaiting)

	r := b.e.newRunner(got, "t")
	if err := r.rebuild(b.ctx); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	r.sched.compact()
	want := []string{"first", fmt.Sprintf("s%d", n-1), "gate"}
	if len(r.rows) != len(want) {
		t.Fatalf("the runner kept rows %v, want %v", rowKeys(r.rows), want)
	}
	for _, k := range want {
		if r.rows[k] == nil {
			t.Fatalf("the runner kept rows %v, want %v", rowKeys(r.rows), want)
		}
	}
	if len(r.results) != 2 || r.results["first"].Output == nil {
		t.Fatalf("the runner kept results of %d steps, want first and s%d", len(r.results), n-1)
	}
	if !r.sched.over("s0") || r.sched.over("first") {
		t.Fatal("s0 should be dropped and first kept")
	}

	// The signal comes; the run ends with the output read from "first".
	if _, err := b.e.Signal(b.ctx, run.ID, "go", nil); err != nil {
		t.Fatalf("signal: %v", err)
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	wantJSON(t, "outputs", done.Outputs, `{"first": 1}`)
	if v := b.show(run.ID); len(v.Steps) != n+2 {
		t.Fatalf("show lists %d steps, want %d", len(v.Steps), n+2)
	}
}

// TestLongForeachAndUntilBoundedTransitions: a foreach of set items and an
// until loop of set iterations finish their keys in the transitions that
// start them too; both are committed in transitions of at most maxTxSteps
// step writes, with the results of an unbroken run.
func TestLongForeachAndUntilBoundedTransitions(t *testing.T) {
	const n = 2*maxTxSteps + 33
	b := setup(t)
	cc := &commitCounter{Store: b.st}
	b.e = New(cc, b.e.opts)
	run := b.run(fmt.Sprintf(`
workflow "fu" {
  version = "1.0.0"
  input "items" { type = list(number) }
  limits { attempts = %[1]d }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = 3
    }
    set { twice = "{{ item * 2 }}" }
  }
  step "count" {
    depends_on     = [step.each]
    until          = "steps.count.output.n >= %[2]d"
    max_iterations = %[1]d
    set { n = "{{ iteration == 0 ? 1 : steps.count.output.n + 1 }}" }
  }
  output "count" { value = "{{ size(steps.each.output.filter(o, o.twice >= 0.0)) }}" }
  output "last" { value = "{{ steps.each.output[%[3]d].twice }}" }
  output "n" { value = "{{ steps.count.output.n }}" }
}`, 4*n, n, n-1), map[string]any{"items": seq(n)})
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, fmt.Sprintf(`{"count": %d, "last": %d, "n": %d}`, n, 2*(n-1), n))
	if cc.maxSteps > maxTxSteps {
		t.Errorf("a transition wrote %d steps, want at most %d", cc.maxSteps, maxTxSteps)
	}
	if want := 2 * n / maxTxSteps; cc.commits < want {
		t.Errorf("%d commits for %d items and %d iterations, want at least %d", cc.commits, n, n, want)
	}
	if it := b.show(run.ID).Steps["count"].Iterations; it != n {
		t.Fatalf("iterations = %d, want %d", it, n)
	}
}

func seq(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i
	}
	return out
}
