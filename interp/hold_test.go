package interp

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

const holdChainSrc = `
workflow "naps" {
  version = "1.0.0"
  step "s0" {
    sleep { duration = "1h" }
  }
  step "s1" {
    sleep { duration = "1h" }
    depends_on = [step.s0]
  }
  step "s2" {
    sleep { duration = "1h" }
    depends_on = [step.s1]
  }
  step "done" {
    set { v = "{{ steps.s2.status }}" }
    depends_on = [step.s2]
  }
  output "v" { value = "{{ steps.done.output.v }}" }
}`

func countKind(evs []store.Event, kind string) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// TestHoldTimerWaitsInPlace: with Options.HoldTimer answering true (and
// moving the clock), a run that only its sleeps move on is claimed once
// and never parked: one Drive takes it from start to end, and the hook is
// asked once per sleep with the instant the sleep ends. Without the hook
// the run parks at every sleep and Drive (ParkWait -1) returns it waiting.
func TestHoldTimerWaitsInPlace(t *testing.T) {
	var mu sync.Mutex
	var wakes []time.Time
	var b *bundle
	b = setup(t, func(o *Options) {
		o.HoldTimer = func(wake time.Time) bool {
			mu.Lock()
			wakes = append(wakes, wake)
			mu.Unlock()
			b.clk.Set(wake)
			return true
		}
	})
	got := b.run(holdChainSrc, nil)
	wantStatus(t, got, store.RunCompleted)
	wantJSON(t, "outputs", got.Outputs, `{"v":"completed"}`)
	evs := b.events(got.ID)
	if n := countKind(evs, "claimed"); n != 1 {
		t.Fatalf("%d claims, want 1: the run was parked and claimed again (%s)", n, b.eventKinds(got.ID))
	}
	if n := countKind(evs, "run_parked"); n != 0 {
		t.Fatalf("%d parks, want none (%s)", n, b.eventKinds(got.ID))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(wakes) != 3 {
		t.Fatalf("hook asked %d times (%v), want once per sleep", len(wakes), wakes)
	}
	for i, w := range wakes {
		if want := t0.Add(time.Duration(i+1) * time.Hour); !w.Equal(want) {
			t.Fatalf("wake %d = %s, want %s", i, w, want)
		}
	}
}

// TestHoldTimerRefused: a hook that answers false leaves the run parked on
// its timer, as without the hook, in a commit after the sleep's start.
func TestHoldTimerRefused(t *testing.T) {
	asked := 0
	b := setup(t, func(o *Options) {
		o.HoldTimer = func(time.Time) bool { asked++; return false }
	})
	got := b.run(holdChainSrc, nil)
	if got.Status != store.RunWaiting || got.WaitReason != "timer" || !got.AvailableAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("run %s/%s due %s, want waiting on the timer at %s", got.Status, got.WaitReason, got.AvailableAt, t0.Add(time.Hour))
	}
	if asked != 1 {
		t.Fatalf("hook asked %d times, want 1", asked)
	}
	if got.Lease.Owner != "" {
		t.Fatalf("the parked run is still leased by %q", got.Lease.Owner)
	}
}

// TestHoldTimerKilled: an engine killed while it holds a run through a
// sleep (every commit after the hold refused, as a process killed then
// makes none) leaves a run that a new engine resumes: the sleep in
// progress ends at the instant it was committed to end, and the run ends
// completed with the outputs of an uninterrupted run.
func TestHoldTimerKilled(t *testing.T) {
	killed := errors.New("killed")
	var mu sync.Mutex
	dead, holds := false, 0
	var b *bundle
	b = setup(t, func(o *Options) {
		o.BeforeCommit = func([]store.Transition) error {
			mu.Lock()
			defer mu.Unlock()
			if dead {
				return killed
			}
			return nil
		}
		o.HoldTimer = func(wake time.Time) bool {
			mu.Lock()
			holds++
			if holds == 2 { // holding s1's sleep: the process dies
				dead = true
			}
			mu.Unlock()
			b.clk.Set(wake)
			return true
		}
	})
	b.compile(holdChainSrc)
	run := b.start("naps", nil)
	if _, err := b.e.Drive(b.ctx, run.ID); !errors.Is(err, killed) {
		t.Fatalf("drive of the killed engine: %v, want the kill", err)
	}
	mid, err := b.st.RunGet(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if mid.Status != store.RunRunning || mid.Lease.Owner == "" {
		t.Fatalf("after the kill the run is %s leased by %q, want running under the dead engine's lease", mid.Status, mid.Lease.Owner)
	}
	if st := b.show(run.ID).Steps["s1"]; st.Status != store.StepWaiting {
		t.Fatalf("s1 is %s at the kill, want waiting in its sleep", st.Status)
	}
	after := New(b.st, Options{Clock: b.clk, Owner: store.Owner{Host: "testhost", PID: 2, Worker: "u"}, ParkWait: -1})
	if _, err := b.st.LeaseExpire(b.ctx, store.LeaseExpireParams{Owners: []string{mid.Lease.Owner}, Now: b.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	// The new engine (no hook) ends s1's sleep, due now, and parks s2's.
	got, err := after.Drive(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunWaiting {
		t.Fatalf("resumed run is %s, want waiting on s2's sleep", got.Status)
	}
	b.clk.Advance(time.Hour)
	got, err = after.Drive(b.ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, got, store.RunCompleted)
	wantJSON(t, "outputs", got.Outputs, `{"v":"completed"}`)
	v := b.show(run.ID)
	for _, s := range []string{"s0", "s1", "s2"} {
		if v.Steps[s].Status != store.StepCompleted {
			t.Fatalf("step %s is %s", s, v.Steps[s].Status)
		}
	}
	if !v.Steps["s1"].FinishedAt.Equal(t0.Add(2 * time.Hour)) {
		t.Fatalf("s1 finished at %s, want %s (its sleep as committed before the kill)", v.Steps["s1"].FinishedAt, t0.Add(2*time.Hour))
	}
	kinds := b.eventKinds(run.ID)
	if n := strings.Count(kinds, "step_completed:s1"); n != 1 {
		t.Fatalf("s1 completed %d times: %s", n, kinds)
	}
}
