package testrun

import (
	"context"
	"strings"
	"testing"
)

// TestChainReplaysStopEarly: every crash replay of a chain of sleeps
// resumes from its checkpoint and, once its new engine has redone the
// dropped commit, is in a state the uninterrupted run passed through: it
// stops there, so the replays cost a few commits each, not the run's
// length.
func TestChainReplaysStopEarly(t *testing.T) {
	f, gs, dir := load(t, chain(30, true), chainTest)
	res := Run(context.Background(), f.Tests[0], Options{Crash: true, Workflows: gs, WorkDir: dir})
	if !res.Pass {
		t.Fatalf("failures: %+v", res.Failures)
	}
	if res.Replays < 30 || res.Stopped != res.Replays {
		t.Fatalf("%d of %d replays stopped early; want all of them", res.Stopped, res.Replays)
	}
}

// flaky's step pay fails its first call and succeeds after: the run fails
// (no retry), unless a crash makes the engine call the mock again.
const flaky = `
workflow "f" {
  version = "1.0.0"
  step "pay" {
    exec { command = ["pay"] }
  }
  step "nap" {
    depends_on = [step.pay]
    sleep { duration = "1h" }
  }
  step "after" {
    depends_on = [step.nap]
    sleep { duration = "1h" }
  }
  output "paid" { value = "{{ steps.pay.output.stdout }}" }
}`

// TestDivergingReplayIsCaught: a crash while pay's attempt is running
// (its mock already called) makes the new engine run the attempt again
// and take the mock's next result: that replay leaves a second attempt in
// the store, so it never matches a state of the uninterrupted run, runs to
// its end and fails with the other status and outputs, named by its commit
// point. The replay after the last commit stops early and passes.
func TestDivergingReplayIsCaught(t *testing.T) {
	f, gs, dir := load(t, flaky, `test "t" {
  mock "pay" {
    results = [
      { error = { kind = "exec", exit_code = 1 } },
      { output = { stdout = "paid" } },
    ]
  }
  expect { status = "failed" }
}`)
	res := Run(context.Background(), f.Tests[0], Options{Crash: true, Workflows: gs, WorkDir: dir})
	if res.Pass {
		t.Fatalf("the crash while pay ran passed: %+v", res)
	}
	for _, fl := range res.Failures {
		if !strings.Contains(fl.Message, `crash after commit 1 of 2 (step "pay" step_started)`) {
			t.Fatalf("want only the commit point of pay's start to fail, got %+v", res.Failures)
		}
	}
	fl := res.Failures[0]
	if fl.What != "crash status" || fl.Expected != "failed" || !strings.HasPrefix(fl.Actual, "completed") ||
		!strings.Contains(fl.Message, `(step "pay" step_started)`) {
		t.Fatalf("failure = %+v", fl)
	}
	if res.Replays != 2 || res.Stopped != 1 {
		t.Fatalf("%d of %d replays stopped early; want all but the diverging one", res.Stopped, res.Replays)
	}
}
