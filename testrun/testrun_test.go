package testrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/hashicorp/hcl/v2"
)

// load writes a workflow and a test file to a directory and checks the
// test file as flowrun test does.
func load(t testing.TB, wf, tests string) (*testfile.File, []*graph.Graph, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.hcl"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	mod, diags := lang.LoadPaths([]string{dir})
	if diags.HasErrors() {
		t.Fatalf("workflow: %s", diags.Error())
	}
	name := filepath.Join(dir, "w.test.hcl")
	f, diags := testfile.Parse(name, []byte(tests))
	if !diags.HasErrors() {
		diags = append(diags, testfile.Check(f, mod, dir, nil, map[string]*hcl.File{})...)
	}
	if diags.HasErrors() {
		t.Fatalf("test file: %s", diags.Error())
	}
	var gs []*graph.Graph
	for _, w := range mod.Workflows {
		gs = append(gs, w.Graph)
	}
	return f, gs, dir
}

func runAll(t testing.TB, f *testfile.File, gs []*graph.Graph, dir string, o Options) []Result {
	t.Helper()
	o.Workflows, o.WorkDir = gs, dir
	var out []Result
	for _, tt := range f.Tests {
		out = append(out, Run(context.Background(), tt, o))
	}
	return out
}

const sleepy = `
workflow "s" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
  step "b" {
    depends_on = [step.a]
    sleep { duration = "1h" }
  }
  output "v" { value = "{{ steps.a.output.v }}" }
}`

func TestSleepPassesAtOnce(t *testing.T) {
	f, gs, dir := load(t, sleepy, `test "sleeps" {
  expect {
    status  = "completed"
    outputs = { v = 1 }
  }
}
test "wrong output" {
  expect {
    outputs = { v = 2 }
  }
}`)
	res := runAll(t, f, gs, dir, Options{})
	if !res[0].Pass {
		t.Fatalf("sleeps: %+v", res[0].Failures)
	}
	if res[1].Pass || len(res[1].Failures) != 1 || res[1].Failures[0].What != "outputs.v" || res[1].Failures[0].Actual != "1" {
		t.Fatalf("wrong output: %+v", res[1])
	}
}

const waiter = `
workflow "w" {
  version = "1.0.0"
  step "approve" {
    wait { signal = "approval" }
  }
  step "child" {
    depends_on = [step.approve]
    workflow {
      name    = "kid"
      version = "1"
    }
  }
  output "by" { value = "{{ steps.approve.output.by }}" }
  output "n" { value = "{{ steps.child.output.n }}" }
}
workflow "kid" {
  version = "1.0.0"
  step "x" {
    set { n = 1 }
  }
  output "n" { value = "{{ steps.x.output.n }}" }
}`

// TestSignalsAndWaits: a run that waits for a signal the test never sends
// ends "waiting"; a signal sent after the step finished is a failure at
// the signal's position; a mocked wait and a mocked workflow step complete
// without a signal or a child; an unmocked child runs.
func TestSignalsAndWaits(t *testing.T) {
	f, gs, dir := load(t, waiter, `test "never signaled" {
  workflow = "w"
  expect {
    status = "waiting"
    steps  = { approve = { status = "waiting" } }
  }
}
test "signaled late, child runs" {
  workflow = "w"
  signal "approval" {
    after = "1h"
    data  = { by = "ana" }
  }
  expect {
    status  = "completed"
    outputs = { by = "ana", n = 1 }
  }
}
test "mocked wait and child" {
  workflow = "w"
  mock "approve" { output = { by = "bo" } }
  mock "child" { output = { n = 7 } }
  signal "approval" { after = "2h" }
  expect {
    status  = "completed"
    outputs = { by = "bo", n = 7 }
    calls   = { approve = 1, child = 1 }
  }
}`)
	res := runAll(t, f, gs, dir, Options{})
	if !res[0].Pass || res[0].Status != "waiting" {
		t.Errorf("never signaled: %+v", res[0])
	}
	if !res[1].Pass {
		t.Errorf("signaled late: %+v", res[1].Failures)
	}
	// The mocked wait completed at once and the run ended: the signal
	// due at 2h was never sent.
	if res[2].Pass || len(res[2].Failures) != 1 || res[2].Failures[0].What != "signal approval" ||
		!strings.Contains(res[2].Failures[0].Message, "never sent: it is due 2h0m0s after the run started, and the run settled before, after 0s") {
		t.Errorf("mocked wait: %+v", res[2].Failures)
	}
	if !strings.HasSuffix(res[2].Failures[0].Pos, "w.test.hcl:23:10") {
		t.Errorf("the refused signal's failure is at %s, want the signal block", res[2].Failures[0].Pos)
	}
}

// TestCheckSideCatchesUnrecordedCalls: the crash check fails a mocked side
// effect that ran more often than the store recorded attempts of it.
func TestCheckSideCatchesUnrecordedCalls(t *testing.T) {
	ctx := context.Background()
	_, gs, _ := load(t, sleepy, `test "t" {
  expect { status = "completed" }
}`)
	sc, err := NewScratch(ctx, t.TempDir(), gs)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	st, _, done, err := sc.store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	x := &execution{side: map[string]int{"R1/build": 1}}
	if err := x.checkSide(ctx, st); err != nil {
		t.Fatal(err)
	}
	if len(x.problems) != 1 || !strings.Contains(x.problems[0].Message, "ran 1 times, but the store recorded 0 attempts") {
		t.Fatalf("problems = %+v", x.problems)
	}
	x = &execution{side: map[string]int{}}
	if err := x.checkSide(ctx, st); err != nil || len(x.problems) != 0 {
		t.Fatalf("no calls: %v %+v", err, x.problems)
	}
}

// TestAlertsAreNotSent: a test never sends a workflow's alerts (spec/
// testing.md §3): the alert here would leave a file in the workflow's
// directory, and Drive sends a run's alerts before it returns.
func TestAlertsAreNotSent(t *testing.T) {
	f, gs, dir := load(t, `
workflow "a" {
  version = "1.0.0"
  step "boom" {
    fail { message = "boom" }
  }
  alert "ops" {
    on = ["failed"]
    exec { command = ["sh", "-c", "echo sent > alerted"] }
  }
}`, `test "fails" {
  expect { status = "failed" }
}`)
	res := runAll(t, f, gs, dir, Options{})
	if !res[0].Pass {
		t.Fatalf("failures: %+v", res[0].Failures)
	}
	if _, err := os.Stat(filepath.Join(dir, "alerted")); err == nil {
		t.Fatal("the test sent the workflow's alert")
	}
}
