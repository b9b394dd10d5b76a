package testrun

import (
	"context"
	"testing"
	"time"
)

// TestRealExecTimeout: the virtual clock stands still while a real
// program runs, so its timeout is measured in real time: a program that
// would run for 30 s fails its attempt with kind timeout after the step's
// second, and the run fails. On a virtual-clock timeout the program ran
// to its end and the step completed.
func TestRealExecTimeout(t *testing.T) {
	f, gs, dir := load(t, `
workflow "slow" {
  version = "1.0.0"
  step "wait" {
    exec { command = ["sleep", "30"] }
    timeout = "1s"
  }
}`, `test "times out" {
  expect {
    status = "failed"
    steps  = { wait = { status = "failed", attempts = 1 } }
    assert = ["steps.wait.error.kind == 'timeout'"]
  }
}`)
	res := Run(context.Background(), f.Tests[0], Options{Workflows: gs, WorkDir: dir})
	if !res.Pass {
		t.Fatalf("failures: %+v", res.Failures)
	}
	if res.Elapsed > 15*time.Second {
		t.Fatalf("the test took %s: the timeout of 1s did not stop the program", res.Elapsed)
	}
}
