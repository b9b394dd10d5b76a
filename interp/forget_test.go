package interp

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestUntilResumesAfterForgetting parks an until loop between iterations
// and resumes it with a fresh engine each time: the rebuild skips the
// iterations older than the latest, yet steps.SELF still shows the latest
// one and the loop ends with the right count.
func TestUntilResumesAfterForgetting(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "u" {
  version = "1.0.0"
  step "count" {
    until          = "steps.count.output.n >= 6"
    interval       = "1s"
    max_iterations = 10
    set { n = "{{ iteration == 0 ? 1 : steps.count.output.n + 1 }}" }
  }
  output "n" { value = "{{ steps.count.output.n }}" }
}`, nil)
	for i := 0; i < 10 && run.Status == store.RunWaiting; i++ {
		b.e = New(b.st, b.e.opts) // a new process: nothing cached
		b.clk.Advance(time.Second)
		run = b.drive(run.ID)
	}
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"n": 6}`)
	if it := b.show(run.ID).Steps["count"].Iterations; it != 6 {
		t.Fatalf("iterations = %d, want 6", it)
	}
}

// TestUntilForgetsOldIterations runs a long loop in one go and checks
// that the runner keeps only the latest iterations in memory.
func TestUntilForgetsOldIterations(t *testing.T) {
	b := setup(t)
	gs := b.compile(`
workflow "u" {
  version = "1.0.0"
  step "count" {
    until          = "steps.count.output.n >= 40"
    max_iterations = 100
    set { n = "{{ iteration == 0 ? 1 : steps.count.output.n + 1 }}" }
  }
  step "after" {
    depends_on = [step.count]
    wait { signal = "go" }
  }
}`)
	run := b.start(gs[0].Workflow, nil)
	got, err := b.e.Drive(b.ctx, run.ID)
	if err != nil {
		t.Fatalf("drive: %v", err)
	}
	wantStatus(t, got, store.RunWaiting)
	// Rebuild the parked run's state as a resuming runner does.
	r := b.e.newRunner(got, "t")
	if err := r.rebuild(b.ctx); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if n := len(r.rows); n > 4 {
		t.Fatalf("the rebuild kept %d step keys, want the steps, the loop and its last two iterations", n)
	}
	if r.rows["count#39"] == nil || r.rows["count#38"] == nil || r.rows["count#37"] != nil {
		t.Fatalf("kept keys %v, want count#38 and count#39 only of the iterations", rowKeys(r.rows))
	}
}

func rowKeys(m map[string]*store.Step) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
