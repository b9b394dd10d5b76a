package interp

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// listCounter counts the whole-run step reads.
type listCounter struct {
	store.Store
	lists, heads, gets atomic.Int64
}

func (c *listCounter) StepList(ctx context.Context, runID string) ([]store.Step, error) {
	c.lists.Add(1)
	return c.Store.StepList(ctx, runID)
}

func (c *listCounter) StepHeads(ctx context.Context, runID string) ([]store.StepHead, error) {
	c.heads.Add(1)
	return c.Store.StepHeads(ctx, runID)
}

func (c *listCounter) StepGet(ctx context.Context, runID, key string) (store.Step, error) {
	c.gets.Add(1)
	return c.Store.StepGet(ctx, runID, key)
}

// mixedParked is a workflow of every kind of finished step (set, foreach
// items, until iterations, a switch and its branches, a join = "any", an
// exec that failed and continued, a chain of n set steps) parked on a wait
// step; after the signal, a step and the outputs read some of them.
func mixedParked(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `workflow "mixed" {
  version = "1.0.0"
  input "items" { type = list(number) }
  limits { attempts = %d }
  step "first" {
    set { v = 7 }
  }
  step "each" {
    foreach {
      items       = "input.items"
      concurrency = 2
    }
    set { twice = "{{ item * 2 }}" }
  }
  step "count" {
    until          = "steps.count.output.n >= 5"
    max_iterations = 10
    set { n = "{{ iteration == 0 ? 1 : steps.count.output.n + 1 }}" }
  }
  step "route" {
    switch {
      case {
        when = "steps.first.output.v > 5"
        next = [step.big]
      }
      default = [step.small]
    }
  }
  step "big" {
    set { b = "{{ steps.first.output.v }}" }
  }
  step "small" {
    set { s = 1 }
  }
  step "joined" {
    depends_on = [step.big, step.small]
    join       = "any"
    set { j = 1 }
  }
  step "flaky" {
    on_error = "continue"
    exec { command = ["false"] }
  }
  step "after_flaky" {
    depends_on = [step.flaky]
    set { st = "{{ steps.flaky.status }}" }
  }
  step "c0" {
    depends_on = [step.joined]
    set { v = 0 }
  }
`, n+100)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"c%d\" {\n    depends_on = [step.c%d]\n    set { v = %d }\n  }\n", i, i-1, i)
	}
	fmt.Fprintf(&b, `  step "gate" {
    depends_on = [step.c%d, step.each, step.count, step.after_flaky]
    wait { signal = "go" }
  }
  step "tail" {
    depends_on = [step.gate]
    set { sum = "{{ steps.each.output[2].twice + steps.count.output.n }}" }
  }
  output "first" { value = "{{ steps.first.output.v }}" }
  output "tail" { value = "{{ steps.tail.output.sum }}" }
  output "flaky" { value = "{{ steps.after_flaky.output.st }}" }
}
`, n-1)
	return b.String()
}

// rebuilt is what a rebuild followed by the first compact leaves in a
// runner: the state every later decision starts from.
type rebuilt struct {
	Rows     map[string]*store.Step
	Results  map[string]any
	LastAtt  map[string]int
	Failures map[string]int
	Noted    map[string]bool
	Gone     []bool
	Readers  []int32
}

func rebuildState(t *testing.T, e *Engine, run store.Run) rebuilt {
	t.Helper()
	r := e.newRunner(run, "t")
	if err := r.rebuild(context.Background()); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	r.sched.compact()
	res := map[string]any{}
	for k, v := range r.results {
		res[k] = v
	}
	return rebuilt{Rows: r.rows, Results: res, LastAtt: r.lastAtt, Failures: r.failures, Noted: r.noted,
		Gone: r.keep.gone, Readers: r.keep.readers}
}

// TestLeanRebuildSameState parks a run of every kind of finished step and
// rebuilds it twice: reading every row, and reading step heads and then
// only the rows still needed. Both leave the runner in the same state
// (rows, results, attempt counts, the steps dropped and their readers),
// the second reads a handful of rows, and the run then finishes with the
// outputs that read the steps it kept.
func TestLeanRebuildSameState(t *testing.T) {
	for _, n := range []int{3, 400} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := setup(t)
			gs := b.compile(mixedParked(n))
			run := b.start(gs[0].Workflow, map[string]any{"items": seq(6)})
			parked := b.drive(run.ID)
			wantStatus(t, parked, store.RunWaiting)

			whole := New(b.st, b.e.opts)
			whole.lean = leanRebuild{keys: 1 << 30, share: 1}
			want := rebuildState(t, whole, parked)

			// At 400 steps the graph is large enough that the fresh engine
			// reads the heads while it decodes the graph (loadGraph): that
			// read must be the only one.
			if v, err := b.st.VersionGetByHash(b.ctx, parked.Workflow, parked.GraphHash); err != nil {
				t.Fatal(err)
			} else if big := len(v.Graph) >= prefetchGraphBytes; big != (n >= 100) {
				t.Fatalf("graph of %d bytes: prefetch %v, want it for n=%d only from 100 steps", len(v.Graph), big, n)
			}
			lc := &listCounter{Store: b.st}
			lean := New(lc, b.e.opts)
			if n < 100 {
				lean.lean = leanRebuild{keys: 0, share: 1}
			}
			got := rebuildState(t, lean, parked)
			if lc.lists.Load() != 0 || lc.heads.Load() != 1 {
				t.Fatalf("the lean rebuild read %d step lists and %d head lists, want 0 and 1", lc.lists.Load(), lc.heads.Load())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("lean rebuild state differs:\n got rows %v gone %v\nwant rows %v gone %v",
					rowKeys(got.Rows), got.Gone, rowKeys(want.Rows), want.Gone)
				for _, f := range []string{"Rows", "Results", "LastAtt", "Failures", "Noted", "Gone", "Readers"} {
					if !reflect.DeepEqual(reflect.ValueOf(got).FieldByName(f).Interface(), reflect.ValueOf(want).FieldByName(f).Interface()) {
						t.Errorf("%s differs", f)
					}
				}
			}
			keys := rowKeys(got.Rows)
			for _, k := range []string{"first", "each", "each[0]", "each[5]", "count", "gate"} {
				if !slices.Contains(keys, k) {
					t.Errorf("the rebuild dropped %s, which later steps read (kept %v)", k, keys)
				}
			}
			for _, k := range []string{"c0", "route", "big", "flaky"} {
				if slices.Contains(keys, k) {
					t.Errorf("the rebuild kept %s, which nothing reads any more (kept %v)", k, keys)
				}
			}
			// It reads the rows it keeps and the until iterations it then
			// forgets as stale, not the chain.
			if n >= 100 && lc.gets.Load() > int64(len(keys))+10 {
				t.Errorf("the lean rebuild read %d rows one by one, want about the %d it kept", lc.gets.Load(), len(keys))
			}

			// Resumed by the lean engine, the run finishes as it would have.
			if _, err := lean.Signal(b.ctx, run.ID, "go", nil); err != nil {
				t.Fatalf("signal: %v", err)
			}
			done, err := lean.Drive(b.ctx, run.ID)
			if err != nil {
				t.Fatalf("drive: %v", err)
			}
			wantStatus(t, done, store.RunCompleted)
			wantJSON(t, "outputs", done.Outputs, `{"first": 7, "tail": 9, "flaky": "failed"}`)
			v := b.show(run.ID)
			if len(v.Steps) != n+11 {
				t.Fatalf("show lists %d steps, want %d", len(v.Steps), n+11)
			}
			for name, s := range v.Steps {
				want := store.StepCompleted
				switch name {
				case "small":
					want = store.StepSkipped
				case "flaky":
					want = store.StepFailed
				}
				if s.Status != want {
					t.Errorf("step %s is %s, want %s", name, s.Status, want)
				}
			}
		})
	}
}

// TestShortRunRebuildReadsOnce: a run of a graph with fewer steps than the
// lean bound and no foreach or until is rebuilt from one read of its steps,
// without reading their heads first.
func TestShortRunRebuildReadsOnce(t *testing.T) {
	b := setup(t)
	gs := b.compile(`workflow "short" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
  step "gate" {
    depends_on = [step.a]
    wait { signal = "go" }
  }
}`)
	parked := b.drive(b.start(gs[0].Workflow, nil).ID)
	wantStatus(t, parked, store.RunWaiting)
	lc := &listCounter{Store: b.st}
	rebuildState(t, New(lc, b.e.opts), parked)
	if lc.heads.Load() != 0 || lc.lists.Load() != 1 {
		t.Fatalf("the rebuild read %d head lists and %d step lists, want 0 and 1", lc.heads.Load(), lc.lists.Load())
	}
}

// TestDecidePassesOverWaitingSteps: a chain of n exec steps (each begins
// only when the one before it ended, several decisions apart) gates each
// waiting step a bounded number of times, not once per decision: a
// decision costs the steps that can move, not the length of the graph
// (before, the gate checks grew with n²).
func TestDecidePassesOverWaitingSteps(t *testing.T) {
	const n = 150
	b := setup(t)
	var src strings.Builder
	src.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    exec { command = [\"true\"] }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&src, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    exec { command = [\"true\"] }\n  }\n", i, i-1)
	}
	src.WriteString("}\n")
	gs := b.compile(src.String())
	before := b.e.gates.Load()
	wantStatus(t, b.drive(b.start(gs[0].Workflow, nil).ID), store.RunCompleted)
	if got := b.e.gates.Load() - before; got > 4*n {
		t.Fatalf("a chain of %d exec steps made %d gate checks, want at most %d", n, got, 4*n)
	}
}

// TestTopForgetsReleasedRows: a step's row that the runner releases (no
// later decision reads it) is not kept alive by decide's index of
// top-level rows; holding them kept every finished row of a long run in
// memory (+2–3 MiB for 10,000 steps).
func TestTopForgetsReleasedRows(t *testing.T) {
	b := setup(t)
	var src strings.Builder
	src.WriteString("workflow \"long\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    set { v = 0 }\n  }\n")
	// Under 256 steps: the rebuild reads every row, then releases.
	for i := 1; i < 200; i++ {
		fmt.Fprintf(&src, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    set { v = %d }\n  }\n", i, i-1, i)
	}
	src.WriteString("  step \"gate\" {\n    depends_on = [step.s199]\n    wait { signal = \"go\" }\n  }\n}\n")
	gs := b.compile(src.String())
	parked := b.drive(b.start(gs[0].Workflow, nil).ID)
	wantStatus(t, parked, store.RunWaiting)
	r := b.e.newRunner(parked, "t")
	if err := r.rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.sched.compact()
	gone, kept := 0, 0
	for i, g := range r.keep.gone {
		if !g {
			continue
		}
		gone++
		if r.top != nil && r.top[i] != nil {
			kept++
		}
	}
	if gone < 190 || kept != 0 {
		t.Fatalf("%d steps released, %d of them still held by top; want ~199 and 0", gone, kept)
	}
}
