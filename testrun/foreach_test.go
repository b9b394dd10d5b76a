package testrun

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/clock"
)

// fanout runs a mocked exec for each of eight items, four at a time, with
// a retry: which result each item gets must not depend on which goroutine
// calls the mock first.
const fanout = `
workflow "fan" {
  version = "1.0.0"
  step "each" {
    foreach {
      items       = "[0, 1, 2, 3, 4, 5, 6, 7]"
      concurrency = 4
      on_failure  = "continue"
    }
    retry {
      attempts = 2
      backoff  = "1s"
    }
    exec { command = ["work", "{{ item }}"] }
  }
  output "got" { value = "{{ steps.each.output.map(o, o == null ? 'x' : o.stdout) }}" }
}`

const fanoutTest = `test "fan" {
  mock "each" {
    results = [
      { output = { stdout = "a" } },
      { error = { kind = "exec", exit_code = 1 } },
      { output = { stdout = "c" } },
      { output = { stdout = "d" } },
      { error = { kind = "exec", exit_code = 1 } },
      { output = { stdout = "f" } },
      { output = { stdout = "g" } },
      { output = { stdout = "h" } },
      { output = { stdout = "i" } },
      { output = { stdout = "j" } },
    ]
  }
  expect { status = "completed" }
}`

// TestParallelForeachIsDeterministic: the same test run many times gives
// the same outputs, calls, results per item, commits, coverage and result
// every time, whatever order the items' goroutines call their mock in. On
// the old code the two retries, started at the same instant, took the
// mock's ninth and tenth results in either order.
func TestParallelForeachIsDeterministic(t *testing.T) {
	sameEveryTime(t, fanout, fanoutTest)
	// An item that fails the foreach stops the items in flight: their
	// calls waiting for their turn are answered at once, and the run
	// ends the same way every time.
	failFast := strings.Replace(strings.Replace(fanout, `on_failure  = "continue"`, `on_failure  = "fail"`, 1), `attempts = 2`, `attempts = 1`, 1)
	sameEveryTime(t, failFast, strings.Replace(fanoutTest, `status = "completed"`, `status = "failed"`, 1))
}

// sameEveryTime runs the test of tests many times and fails when two runs
// differ in anything but time, or when it fails without --crash; with
// --crash too.
func sameEveryTime(t *testing.T, wf, tests string) {
	t.Helper()
	ctx := context.Background()
	f, gs, dir := load(t, wf, tests)
	for _, crash := range []bool{false, true} {
		var first string
		for i := 0; i < 5; i++ {
			res := Run(ctx, f.Tests[0], Options{Workflows: gs, WorkDir: dir, Crash: crash})
			res.Elapsed = 0
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			// Under --crash the interrupted attempts take results of the
			// list too, so the replays may fail: the same way every time.
			if !crash && !res.Pass {
				t.Fatalf("%s", b)
			}
			if i == 0 {
				first = string(b)
			} else if string(b) != first {
				t.Fatalf("crash=%v: run %d differs:\n%s\nfirst:\n%s", crash, i, b, first)
			}
		}
	}
	sc, err := NewScratch(ctx, t.TempDir(), gs)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var first string
	for i := 0; i < 20; i++ {
		s := &session{t: f.Tests[0], o: Options{WorkDir: dir, Wall: clock.Real{}}, sc: sc}
		x, _, err := s.execute(ctx, false, -1)
		if err != nil {
			t.Fatal(err)
		}
		attempts := map[string]int{}
		for name, sv := range x.view.Steps {
			attempts[name] = sv.Attempts
		}
		b, err := json.Marshal(map[string]any{"status": x.run.Status, "outputs": x.run.Outputs, "calls": x.calls, "commits": x.commits,
			"index": x.index, "cover": x.cover(s.t.Graph), "problems": x.problems, "attempts": attempts})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = string(b)
			continue
		}
		if string(b) != first {
			t.Fatalf("run %d differs:\n%s\nfirst:\n%s", i, b, first)
		}
	}
}
