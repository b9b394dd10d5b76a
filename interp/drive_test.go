package interp

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// driveAsync drives a run in the background and returns its result
// channel.
func (b *bundle) driveAsync(id string) <-chan store.Run {
	done := make(chan store.Run, 1)
	go func() {
		run, err := b.e.Drive(b.ctx, id)
		if err != nil {
			b.t.Errorf("drive: %v", err)
		}
		done <- run
	}()
	return done
}

// waitTimers waits (in real time) until the fake clock has a timer
// pending: Drive is sleeping on it. The 30 s limit is a safety net, not a
// timing assumption (it was 2000 naps of 1 ms, about 2 s, which a Drive
// under -race on a loaded machine may need to reach its sleep).
func (b *bundle) waitTimers() {
	b.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); b.clk.Pending() == 0; {
		if time.Now().After(deadline) {
			b.t.Fatal("no timer is pending on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDriveWaitsOutTimers: Drive (apply, resume) waits out a timer however
// far off it is (semantics.md §17): a sleep of a day, then a retry
// backoff, and the run completes in the same Drive.
func TestDriveWaitsOutTimers(t *testing.T) {
	b := setup(t, func(o *Options) { o.ParkWait = 0 })
	gs := b.compile(`
workflow "long" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "24h" }
  }
  step "flaky" {
    depends_on = [step.nap]
    retry {
      attempts = 2
      backoff  = "10m"
    }
    exec { command = ["sh", "-c", "test $FLOWRUN_ATTEMPT -ge 2"] }
  }
}`)
	run := b.start(gs[0].Workflow, nil)
	done := b.driveAsync(run.ID)
	b.waitTimers()
	select {
	case r := <-done:
		t.Fatalf("Drive returned %s (%s) before the sleep was over", r.Status, r.WaitReason)
	default:
	}
	// The sleep ends, then the first attempt fails and the retry waits out
	// its backoff: each time, move the clock to when the run is due.
	for {
		select {
		case r := <-done:
			if r.Status != store.RunCompleted {
				t.Fatalf("run %s (%s): %s, want completed", r.Status, r.WaitReason, r.Error)
			}
			if s := b.show(run.ID); s.Steps["flaky"].Attempts != 2 {
				t.Fatalf("flaky ran %d attempts, want 2", s.Steps["flaky"].Attempts)
			}
			return
		case <-time.After(time.Millisecond):
			cur, err := b.st.RunGet(b.ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			// A Drive that computed its sleep just before an Advance sleeps
			// from the new time: a due run that stays unclaimed needs one
			// more poll interval.
			if d := cur.AvailableAt.Sub(b.clk.Now()); cur.Status == store.RunWaiting {
				b.clk.Advance(max(d, b.e.opts.Poll))
			}
		}
	}
}

// TestDriveReturnsOnOutsideWaits: what only the outside brings ends Drive
// with the run parked, even when a timer would end the wait later (a
// signal's timeout); with ParkWait set, a timer further off than it does
// too.
func TestDriveReturnsOnOutsideWaits(t *testing.T) {
	b := setup(t, func(o *Options) { o.ParkWait = 0 })
	gs := b.compile(`
workflow "ask" {
  version = "1.0.0"
  step "approve" {
    wait {
      signal  = "approval"
      timeout = "1h"
    }
  }
}`)
	r := b.drive(b.start(gs[0].Workflow, nil).ID)
	if r.Status != store.RunWaiting || r.WaitReason != "signal:approval" {
		t.Fatalf("run %s (%s), want waiting on signal:approval", r.Status, r.WaitReason)
	}

	b = setup(t, func(o *Options) { o.ParkWait = time.Minute })
	gs = b.compile(`
workflow "nap" {
  version = "1.0.0"
  step "nap" {
    sleep { duration = "2m" }
  }
}`)
	r = b.drive(b.start(gs[0].Workflow, nil).ID)
	if r.Status != store.RunWaiting || r.WaitReason != "timer" {
		t.Fatalf("run %s (%s), want waiting on its timer", r.Status, r.WaitReason)
	}
}
