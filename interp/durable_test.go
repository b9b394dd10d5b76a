package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestRetryBackoffJitterRecorded: a step failing twice then succeeding is
// parked between attempts with the recorded delay, resumed by advancing the
// fake clock.
func TestRetryBackoffJitterRecorded(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "r" {
  version = "1.0.0"
  step "flaky" {
    retry {
      attempts   = 4
      backoff    = "1s"
      multiplier = 3
      max_delay  = "5s"
      jitter     = "100ms"
    }
    exec { command = ["sh", "-c", "test $FLOWRUN_ATTEMPT -ge 3"] }
  }
}`, nil)
	var delays []time.Duration
	for i := 0; run.Status == store.RunWaiting; i++ {
		if run.WaitReason != "retry" || i > 5 {
			t.Fatalf("parked with reason %q (iteration %d)", run.WaitReason, i)
		}
		d := run.AvailableAt.Sub(b.clk.Now())
		delays = append(delays, d)
		// Not due yet: Drive returns it parked without an attempt.
		b.clk.Advance(d - time.Millisecond)
		if again := b.drive(run.ID); again.Status != store.RunWaiting || len(b.attempts(run.ID, "flaky")) != i+1 {
			t.Fatalf("ran before its backoff ended")
		}
		b.clk.Advance(time.Millisecond)
		run = b.drive(run.ID)
	}
	wantStatus(t, run, store.RunCompleted)
	if len(delays) != 2 {
		t.Fatalf("delays = %v, want 2", delays)
	}
	var recorded []time.Duration
	for _, e := range b.events(run.ID) {
		if e.Kind == "retry_scheduled" {
			var d struct{ DelayMS, JitterMS int64 }
			_ = json.Unmarshal([]byte(strings.NewReplacer("delay_ms", "DelayMS", "jitter_ms", "JitterMS").Replace(string(e.Data))), &d)
			if d.JitterMS < 0 || d.JitterMS > 100 {
				t.Fatalf("jitter %d out of range", d.JitterMS)
			}
			recorded = append(recorded, time.Duration(d.DelayMS+d.JitterMS)*time.Millisecond)
			if want := []int64{1000, 3000}[len(recorded)-1]; d.DelayMS != want {
				t.Fatalf("delay %d = %d, want %d", len(recorded), d.DelayMS, want)
			}
		}
	}
	if fmt.Sprint(recorded) != fmt.Sprint(delays) {
		t.Fatalf("recorded delays %v, parked for %v", recorded, delays)
	}
	as := b.attempts(run.ID, "flaky")
	if len(as) != 3 || as[0].Status != store.AttemptFailed || as[2].Status != store.AttemptCompleted {
		t.Fatalf("attempts = %+v", as)
	}
}

func TestRetryWhenPredicate(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "r" {
  version = "1.0.0"
  step "s" {
    retry {
      attempts = 5
      backoff  = "1s"
      when     = "error.exit_code == 7"
    }
    exec { command = ["sh", "-c", "exit 4"] }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	if n := len(b.attempts(run.ID, "s")); n != 1 {
		t.Fatalf("attempts = %d, want 1 (retry.when false)", n)
	}
}

func TestSleepParksAndResumes(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "s" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "10m" }
  }
  step "after" {
    set { woke = "{{ steps.nap.output.woke_at }}" }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	if run.WaitReason != "timer" || !run.AvailableAt.Equal(t0.Add(10*time.Minute)) || run.Lease.Owner != "" {
		t.Fatalf("parked run = %+v", run)
	}
	b.clk.Advance(10 * time.Minute)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	v := b.show(run.ID)
	wantJSON(t, "after", v.Steps["after"].Output, `{"woke": "2030-01-02T03:14:05Z"}`)
}

func TestWaitSignal(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "w" {
  version = "1.0.0"
  step "approve" {
    wait { signal = "approval" }
  }
  step "after" {
    set { by = "{{ steps.approve.output.by }}" }
  }
  output "by" { value = "{{ steps.after.output.by }}" }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	if run.WaitReason != "signal:approval" {
		t.Fatalf("wait reason = %q", run.WaitReason)
	}
	if _, err := b.e.Signal(b.ctx, run.ID, "aproval", nil); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `Did you mean "approval"?`) {
		t.Fatalf("signal aproval: %v, want ErrNotFound naming approval", err)
	}
	if _, err := b.e.Signal(b.ctx, run.ID[:20], "approval", json.RawMessage(`{"by": "ada"}`)); err != nil {
		t.Fatalf("signal: %v", err)
	}
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"by": "ada"}`)
	if _, err := b.e.Signal(b.ctx, run.ID, "approval", nil); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("signal after the end: %v, want ErrConflict", err)
	}
}

func TestWaitTimeout(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "w" {
  version = "1.0.0"
  step "approve" {
    wait {
      signal  = "approval"
      timeout = "1h"
    }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	b.clk.Advance(time.Hour)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "timeout" {
		t.Fatalf("error = %s", run.Error)
	}
}

// TestWaitTimeoutBeforeLateSignal: a signal stored after a wait timed
// out, but before any process looked at the run again, does not satisfy
// the wait: the step fails with kind timeout, as it would have had a
// worker been watching, and the signal stays pending. One stored just
// before the timeout completes it, however late the run is looked at.
func TestWaitTimeoutBeforeLateSignal(t *testing.T) {
	b := setup(t)
	src := `
workflow "w" {
  version = "1.0.0"
  step "approve" {
    wait {
      signal  = "approval"
      timeout = "1h"
    }
  }
  output "by" { value = "{{ steps.approve.output.by }}" }
}`
	run := b.run(src, nil)
	wantStatus(t, run, store.RunWaiting)
	b.clk.Advance(time.Hour + time.Second)
	if _, err := b.e.Signal(b.ctx, run.ID, "approval", json.RawMessage(`{"by": "late"}`)); err != nil {
		t.Fatal(err)
	}
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "timeout" {
		t.Fatalf("error = %s, want kind timeout", run.Error)
	}

	run, _, err := b.e.StartRun(b.ctx, StartParams{Workflow: "w", New: true})
	if err != nil {
		t.Fatal(err)
	}
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunWaiting)
	b.clk.Advance(time.Hour - time.Second)
	if _, err := b.e.Signal(b.ctx, run.ID, "approval", json.RawMessage(`{"by": "ada"}`)); err != nil {
		t.Fatal(err)
	}
	b.clk.Advance(time.Hour)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"by": "ada"}`)
}

func TestChildWorkflow(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "child" {
  version = "1.2.0"
  input "n" { type = number }
  step "double" {
    exec { command = ["sh", "-c", "echo {{ input.n * 2 }}"] }
  }
  output "v" { value = "{{ steps.double.output.json }}" }
}`)
	b.compile(`
workflow "parent" {
  version = "1.0.0"
  step "kid" {
    workflow {
      name    = "child"
      version = "1"
      input   = { n = 21 }
    }
  }
  output "v" { value = "{{ steps.kid.output.v }}" }
}`)
	run := b.start("parent", nil)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"v": 42}`)
	kids, err := b.st.RunChildren(b.ctx, run.ID)
	if err != nil || len(kids) != 1 {
		t.Fatalf("children = %v %v", kids, err)
	}
	k := kids[0]
	if k.Status != store.RunCompleted || k.Version != "1.2.0" || k.ParentStepKey != "kid" || k.RootRunID != run.ID || k.Key != run.ID+"/kid" {
		t.Fatalf("child = %+v", k)
	}
}

func TestChildFailure(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "child" {
  version = "1.0.0"
  step "boom" {
    fail { message = "no stock" }
  }
}`)
	b.compile(`
workflow "parent" {
  version = "1.0.0"
  step "kid" {
    workflow {
      name    = "child"
      version = "1"
    }
  }
}`)
	run := b.drive(b.start("parent", nil).ID)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "child" || !strings.Contains(string(run.Error), "no stock") {
		t.Fatalf("error = %s", run.Error)
	}
}

func TestForeach(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "fe" {
  version = "1.0.0"
  step "each" {
    foreach {
      items       = "['a', 'bad', 'c', 'bad2']"
      concurrency = 2
      on_failure  = "continue"
    }
    exec { command = ["sh", "-c", "case {{ item }} in bad*) exit 1;; esac; echo {{ index }}-{{ item }}"] }
  }
  step "dl" {
    foreach {
      items      = "[1, 2]"
      on_failure = "dead_letter"
    }
    exec { command = ["sh", "-c", "test {{ item }} -eq 1"] }
  }
  output "n" { value = "{{ steps.each.output.filter(o, o != null).size() }}" }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"n": 2}`)
	v := b.show(run.ID)
	each := v.Steps["each"]
	if len(each.Items) != 4 || each.Items[1].Status != store.StepFailed || each.Items[2].Status != store.StepCompleted || each.Attempts != 4 {
		t.Fatalf("each = %+v", each)
	}
	wantJSON(t, "each[2]", each.Items[2].Output, `{"exit_code": 0, "stdout": "2-c\n", "stderr": "", "json": null}`)
	if !strings.Contains(b.eventKinds(run.ID), "dead_lettered:dl[1]") {
		t.Fatalf("no dead_lettered event: %s", b.eventKinds(run.ID))
	}
}

func TestForeachFailStopsStep(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "fe" {
  version = "1.0.0"
  step "each" {
    foreach { items = "[1, 2, 3]" }
    exec { command = ["sh", "-c", "test {{ item }} -ne 2"] }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	v := b.show(run.ID)
	if len(v.Steps["each"].Items) != 2 {
		t.Fatalf("items run = %+v, want 2 (no item after the failure)", v.Steps["each"].Items)
	}
	if !strings.Contains(string(run.Error), "item 1 failed") {
		t.Fatalf("error = %s", run.Error)
	}
}

func TestUntilLoop(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "u" {
  version = "1.0.0"
  step "count" {
    until          = "steps.count.output.n >= 3"
    max_iterations = 10
    set { n = "{{ iteration == 0 ? 1 : steps.count.output.n + 1 }}" }
  }
  output "n" { value = "{{ steps.count.output.n }}" }
}`, nil)
	wantStatus(t, run, store.RunCompleted)
	wantJSON(t, "outputs", run.Outputs, `{"n": 3}`)
	if it := b.show(run.ID).Steps["count"].Iterations; it != 3 {
		t.Fatalf("iterations = %d", it)
	}
}

func TestUntilIntervalAndExhausted(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "u" {
  version = "1.0.0"
  step "poll" {
    until          = "false"
    interval       = "30s"
    max_iterations = 2
    exec { command = ["true"] }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	if run.WaitReason != "timer" || !run.AvailableAt.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("parked = %s at %s", run.WaitReason, run.AvailableAt)
	}
	b.clk.Advance(30 * time.Second)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "until_exhausted" {
		t.Fatalf("error = %s", run.Error)
	}
}

func TestDeadline(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "d" {
  version  = "1.0.0"
  deadline = "1h"
  step "nap" {
    sleep { duration = "2h" }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	if !run.AvailableAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("a run past its deadline must wake at it: available at %s", run.AvailableAt)
	}
	b.clk.Advance(time.Hour)
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "deadline" {
		t.Fatalf("error = %s", run.Error)
	}
	if st := b.show(run.ID).Steps["nap"].Status; st != store.StepCanceled {
		t.Fatalf("nap = %s, want canceled", st)
	}
}

func TestAttemptCap(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "cap" {
  version = "1.0.0"
  limits { attempts = 2 }
  step "spin" {
    until = "false"
    exec { command = ["true"] }
  }
}`, nil)
	wantStatus(t, run, store.RunFailed)
	if k := errKind(t, run.Error); k != "attempt_cap" {
		t.Fatalf("error = %s", run.Error)
	}
	if run.AttemptsUsed != 2 {
		t.Fatalf("attempts used = %d", run.AttemptsUsed)
	}
}

// TestCancel: a cancel ends a parked run at once, and a retry of it runs
// it again.
func TestCancel(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "c" {
  version = "1.0.0"
  step "approve" {
    wait { signal = "go" }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	if _, err := b.e.Cancel(b.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	run, _ = b.st.RunGet(b.ctx, run.ID)
	wantStatus(t, run, store.RunCanceled)

	// Retried, it runs again the first time: the cancel request the store
	// carried out (nobody held the parked run) is not left pending for the
	// retried run's first claim to act on.
	if _, err := b.e.Retry(b.ctx, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunWaiting)
	if run.CancelRequested {
		t.Fatal("the retried run still has a cancel request pending")
	}
}

// TestCancelRunning: a cancel reaches a run whose exec is in flight; the
// process is killed.
func TestCancelRunning(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	b.compile(fmt.Sprintf(`
workflow "c" {
  version = "1.0.0"
  step "long" {
    exec {
      command = "touch %s; sleep 300"
      shell   = true
    }
  }
}`, started))
	run := b.start("c", nil)
	done := make(chan store.Run)
	go func() {
		r, _ := b.e.Drive(b.ctx, run.ID)
		done <- r
	}()
	waitFile(t, started)
	if _, err := b.e.Cancel(b.ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case run = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("cancel did not stop the run")
	}
	wantStatus(t, run, store.RunCanceled)
	if as := b.attempts(run.ID, "long"); len(as) != 1 || as[0].Status != store.AttemptCanceled {
		t.Fatalf("attempts = %+v", as)
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for i := 0; ; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if i > 2000 {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRetryRedrive(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	flag := filepath.Join(dir, "ok")
	run := b.run(fmt.Sprintf(`
workflow "rd" {
  version = "1.0.0"
  step "first" {
    exec { command = ["sh", "-c", "echo once >> %[1]s.count"] }
  }
  step "second" {
    depends_on = [step.first]
    exec { command = ["test", "-e", "%[1]s"] }
  }
}`, flag), nil)
	wantStatus(t, run, store.RunFailed)
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.Retry(b.ctx, run.ID, ""); err != nil {
		t.Fatal(err)
	}
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
	if c, _ := os.ReadFile(flag + ".count"); string(c) != "once\n" {
		t.Fatalf("first ran %q, want once", c)
	}
	if as := b.attempts(run.ID, "second"); len(as) != 2 || as[1].Attempt != 2 {
		t.Fatalf("attempts of second = %+v", as)
	}
	// --from first re-runs first and everything downstream.
	if _, err := b.e.Retry(b.ctx, run.ID, "first"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("retry of a completed run: %v, want ErrConflict", err)
	}
}

// TestSignalToParkedRunLoadsNoGraph: a signal to a run parked on that
// very signal (wait_reason "signal:NAME") is accepted from the run row
// alone; the graph is loaded only to check a signal the run is not parked
// on, which is still refused when no wait step takes it.
func TestSignalToParkedRunLoadsNoGraph(t *testing.T) {
	b := setup(t)
	run := b.run(`
workflow "w" {
  version = "1.0.0"
  step "approve" {
    wait { signal = "approval" }
  }
  step "after" {
    set { by = "{{ steps.approve.output.by }}" }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	fresh := New(b.st, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 2}})
	if _, err := fresh.Signal(b.ctx, run.ID, "approval", json.RawMessage(`not json`)); err == nil {
		t.Fatal("a signal with data that is not JSON was accepted")
	}
	if _, err := fresh.Signal(b.ctx, run.ID, "approval", json.RawMessage(`{"by": "ada"}`)); err != nil {
		t.Fatalf("signal: %v", err)
	}
	if l := fresh.graphs.get(run.Workflow + "\x00" + run.GraphHash); l != nil {
		t.Fatal("the signal loaded the run's graph")
	}
	if _, err := fresh.Signal(b.ctx, run.ID, "other", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("signal other: %v, want ErrNotFound (no wait step takes it)", err)
	}
	if l := fresh.graphs.get(run.Workflow + "\x00" + run.GraphHash); l == nil {
		t.Fatal("a signal the run is not parked on was refused without reading the graph")
	}
	run = b.drive(run.ID)
	wantStatus(t, run, store.RunCompleted)
}
