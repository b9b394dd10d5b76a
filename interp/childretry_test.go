package interp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestDriveParentTimerWhileChildRuns: while a child run works in Drive, a
// timer of its parent still fires (here the workflow step's timeout, which
// fails the step and cancels the child); Drive used to wake only when a
// runner ended, so the parent waited for the child.
func TestDriveParentTimerWhileChildRuns(t *testing.T) {
	b := setup(t, func(o *Options) { o.ParkWait = 0 })
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	b.compile(`
workflow "slow" {
  version = "1.0.0"
  step "work" {
    exec { command = ["sh", "-c", "touch ` + started + `; while [ ! -f ` + filepath.Join(dir, "never") + ` ]; do sleep 0.05; done"] }
  }
}`)
	b.compile(`
workflow "parent" {
  version = "1.0.0"
  step "kid" {
    timeout = "2s"
    workflow {
      name    = "slow"
      version = "1"
    }
  }
}`)
	run := b.start("parent", nil)
	done := b.driveAsync(run.ID)
	for range 2000 {
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Move the clock on in small steps (a Drive that computed its sleep
	// just before a step sleeps from the new time), well short of the
	// child's own attempt timeout (5 minutes).
	var r store.Run
	for i := 0; ; i++ {
		select {
		case r = <-done:
		case <-time.After(50 * time.Millisecond):
			if i > 400 {
				t.Fatal("the parent's step timeout did not fire while its child ran")
			}
			b.clk.Advance(500 * time.Millisecond)
			continue
		}
		break
	}
	wantStatus(t, r, store.RunFailed)
	if k := errKind(t, r.Error); k != "timeout" {
		t.Fatalf("error %s, want kind timeout", r.Error)
	}
	kids, err := b.st.RunChildren(b.ctx, run.ID)
	if err != nil || len(kids) != 1 || kids[0].Status != store.RunCanceled {
		t.Fatalf("children %v (%v), want the one child canceled", kids, err)
	}
}
