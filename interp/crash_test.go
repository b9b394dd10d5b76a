package interp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// TestResumeAfterCrash: a worker (a dead process of this host) completed
// "first" and died while "second" ran. Driving the run again reclaims the
// dead owner's lease at once, closes the running attempt as interrupted and
// runs "second" again; "first" is not run again.
func TestResumeAfterCrash(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	b.compile(fmt.Sprintf(`
workflow "crash" {
  version = "1.0.0"
  step "first" {
    exec { command = ["sh", "-c", "echo ran >> %[1]s/first"] }
  }
  step "second" {
    depends_on = [step.first]
    exec { command = ["sh", "-c", "echo ran >> %[1]s/second; echo $FLOWRUN_ATTEMPT $FLOWRUN_IDEMPOTENCY_KEY"] }
  }
}`, dir))
	run := b.start("crash", nil)
	dead := "testhost/999999999/w1" // a pid that does not exist
	claimed, err := b.st.RunClaim(b.ctx, store.RunClaimParams{Owner: dead, Now: t0, LeaseFor: time.Hour, Limit: 1})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	lease := claimed[0].Lease
	res, err := b.st.TransitionCommit(b.ctx, []store.Transition{{
		RunID: run.ID, Lease: lease, Now: t0,
		Steps: []store.StepWrite{
			{Key: "first", Step: "first", Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1, StartedAt: t0, FinishedAt: t0,
				Output: []byte(`{"exit_code":0,"stdout":"","stderr":"","json":null}`)},
			{Key: "second", Step: "second", Index: -1, Iteration: -1, Status: store.StepRunning, Attempts: 1, StartedAt: t0},
		},
		Attempts: []store.AttemptWrite{
			{StepKey: "first", Attempt: 1, Status: store.AttemptCompleted, Owner: dead, StartedAt: t0, FinishedAt: t0},
			{StepKey: "second", Attempt: 1, Status: store.AttemptRunning, Owner: dead, StartedAt: t0, IdempotencyKey: run.ID + "/second"},
		},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("seed: %v %v", err, res)
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	if _, err := os.Stat(filepath.Join(dir, "first")); err == nil {
		t.Fatal("first ran again after the crash")
	}
	as := b.attempts(run.ID, "second")
	if len(as) != 2 || as[0].Status != store.AttemptInterrupted || as[1].Status != store.AttemptCompleted {
		t.Fatalf("attempts of second = %+v", as)
	}
	out := jsonOf(t, b.show(run.ID).Steps["second"].Output).(map[string]any)
	if want := "2 " + run.ID + "/second\n"; out["stdout"] != want {
		t.Fatalf("second stdout = %q, want %q (same idempotency key, next attempt)", out["stdout"], want)
	}
	if !strings.Contains(b.eventKinds(run.ID), "interrupted:second") {
		t.Fatalf("events = %s", b.eventKinds(run.ID))
	}
}

// TestLeaseFencing: engine A's lease expires (its clock stands still, so
// it never heartbeats) and engine B takes the run over; A's late result is
// rejected and B's is the one recorded.
func TestLeaseFencing(t *testing.T) {
	a := setup(t)
	dir := t.TempDir()
	a.compile(fmt.Sprintf(`
workflow "fence" {
  version = "1.0.0"
  step "work" {
    exec {
      command = "touch %[1]s/started.$FLOWRUN_ATTEMPT; while [ ! -e %[1]s/release ]; do sleep 0.01; done; echo $FLOWRUN_ATTEMPT"
      shell   = true
    }
  }
}`, dir))
	run := a.start("fence", nil)
	aDone := make(chan error, 1)
	go func() {
		_, err := a.e.Drive(a.ctx, run.ID)
		aDone <- err
	}()
	waitFile(t, filepath.Join(dir, "started.1"))

	cb := clock.NewFake(t0.Add(31 * time.Second)) // past A's 30s lease
	eb := New(a.st, Options{Clock: cb, Owner: store.Owner{Host: "otherhost", PID: 2, Worker: "b"},
		Rand: rand.New(rand.NewPCG(3, 4)), ParkWait: -1})
	bDone := make(chan store.Run, 1)
	go func() {
		r, err := eb.Drive(context.Background(), run.ID)
		if err != nil {
			t.Errorf("B drive: %v", err)
		}
		bDone <- r
	}()
	waitFile(t, filepath.Join(dir, "started.2"))
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var final store.Run
	select {
	case final = <-bDone:
	case <-time.After(20 * time.Second):
		t.Fatal("B did not finish")
	}
	select {
	case err := <-aDone:
		if err != nil {
			t.Fatalf("A drive: %v (a lost lease is not an error of Drive)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("A did not stop")
	}
	wantStatus(t, final, store.RunCompleted)
	as := a.attempts(run.ID, "work")
	if len(as) != 2 || as[0].Status != store.AttemptInterrupted || as[1].Status != store.AttemptCompleted {
		t.Fatalf("attempts = %+v (A's late completion must be rejected)", as)
	}
	out := jsonOf(t, a.show(run.ID).Steps["work"].Output).(map[string]any)
	if out["stdout"] != "2\n" {
		t.Fatalf("recorded output %q, want B's", out["stdout"])
	}
}

// TestDriveCancelParksSafely: canceling Drive's context stops the action,
// records it interrupted and releases the run due now; driving again
// re-runs the step.
func TestDriveCancelParksSafely(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	b.compile(fmt.Sprintf(`
workflow "stop" {
  version = "1.0.0"
  step "work" {
    exec {
      command = "touch %[1]s/started.$FLOWRUN_ATTEMPT; test $FLOWRUN_ATTEMPT -ge 2 || sleep 300"
      shell   = true
    }
  }
}`, dir))
	run := b.start("stop", nil)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := b.e.Drive(ctx, run.ID)
		done <- err
	}()
	waitFile(t, filepath.Join(dir, "started.1"))
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Drive returned no error after its context was canceled")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Drive did not stop")
	}
	parked, _ := b.st.RunGet(b.ctx, run.ID)
	if parked.Status != store.RunPending || parked.Lease.Owner != "" {
		t.Fatalf("parked run = %s owner %q", parked.Status, parked.Lease.Owner)
	}
	if as := b.attempts(run.ID, "work"); len(as) != 1 || as[0].Status != store.AttemptInterrupted {
		t.Fatalf("attempts = %+v", as)
	}
	wantStatus(t, b.drive(run.ID), store.RunCompleted)
}

// TestWorker: a worker picks up runs started after it, works on several at
// once, and drains on Stop.
func TestWorker(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "wk" {
  version = "1.0.0"
  input "i" { type = number }
  step "a" {
    exec { command = ["sh", "-c", "echo {{ input.i }}"] }
  }
  output "i" { value = "{{ steps.a.output.json }}" }
}`)
	w := NewWorker(b.e, WorkerOptions{Concurrency: 3})
	if err := w.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 6 {
		ids = append(ids, b.start("wk", map[string]any{"i": i}).ID)
	}
	for _, id := range ids {
		for n := 0; ; n++ {
			r, _ := b.st.RunGet(b.ctx, id)
			if r.Status == store.RunCompleted {
				break
			}
			if n > 2000 {
				t.Fatalf("run %s is %s", id, r.Status)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReclaimDeadOwnerSoon: a process of this host that dies while this
// one already runs (and has checked for dead owners) has its leases freed
// within reclaimEvery, not at their expiry an hour later.
func TestReclaimDeadOwnerSoon(t *testing.T) {
	b := setup(t)
	b.compile(`
workflow "one" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
}`)
	p := newPool(b.e, "", 4)
	defer b.e.removePool(p)
	p.reclaimDead(b.ctx) // an earlier check: nobody was dead then
	run := b.start("one", nil)
	dead := "testhost/999999999/w1" // a pid that does not exist
	if claimed, err := b.st.RunClaim(b.ctx, store.RunClaimParams{Owner: dead, Now: b.clk.Now(), LeaseFor: time.Hour, Limit: 1}); err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	b.clk.Advance(reclaimEvery)
	p.reclaimDead(b.ctx)
	got, err := b.st.RunGet(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Lease.Owner != "" {
		t.Fatalf("the dead owner %s still holds the run a second later", got.Lease.Owner)
	}
}
