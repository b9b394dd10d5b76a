package interp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestChildRetry: retry on a workflow step starts a new child run for each
// attempt (semantics.md §6: kind child is retried), and counts attempts on
// the step; a child that keeps failing fails the step after its attempts.
func TestChildRetry(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	b.compile(`
workflow "flaky" {
  version = "1.0.0"
  input "need" { type = number }
  step "try" {
    exec { command = ["sh", "-c", "n=$(cat ` + counter + ` 2>/dev/null || echo 0); n=$((n+1)); echo $n > ` + counter + `; test $n -ge {{ input.need }}"] }
  }
}`)
	b.compile(`
workflow "parent" {
  version = "1.0.0"
  input "need" { type = number }
  step "kid" {
    retry {
      attempts = 3
      backoff  = "0s"
    }
    workflow {
      name    = "flaky"
      version = "1"
      input   = { need = "{{ input.need }}" }
    }
  }
}`)
	// Succeeds on the second child.
	run := b.drive(b.start("parent", map[string]any{"need": 2}).ID)
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	if a := v.Steps["kid"].Attempts; a != 2 {
		t.Fatalf("kid attempts = %d, want 2 (one child failed, the second completed)", a)
	}
	kids, err := b.st.RunChildren(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[store.RunStatus]int{}
	for _, k := range kids {
		statuses[k.Status]++
	}
	if len(kids) != 2 || statuses[store.RunFailed] != 1 || statuses[store.RunCompleted] != 1 {
		t.Fatalf("children %v, want a failed one and a completed one", statuses)
	}
	if !strings.Contains(b.eventKinds(run.ID), "retry_scheduled") {
		t.Fatalf("no retry_scheduled event: %s", b.eventKinds(run.ID))
	}

	// Never succeeds: three children, then the step and the run fail.
	if err := os.Remove(counter); err != nil {
		t.Fatal(err)
	}
	run = b.drive(b.start("parent", map[string]any{"need": 10}).ID)
	wantStatus(t, run, store.RunFailed)
	if a := b.show(run.ID).Steps["kid"].Attempts; a != 3 {
		t.Fatalf("kid attempts = %d, want 3", a)
	}
	if kids, _ := b.st.RunChildren(b.ctx, run.ID); len(kids) != 3 {
		t.Fatalf("%d children, want 3", len(kids))
	}
}
