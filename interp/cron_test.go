package interp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/schedule"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
	"github.com/flowrun/flowrun/telemetry"
)

const scheduledSrc = `workflow "tick" {
  version = "VERSION"
  input "date" { type = string }
  input "at" { type = string }
  schedule "minutely" {
    every    = "1m"
    timezone = "America/New_York"
    overlap  = "OVERLAP"
    catch_up = "CATCHUP"
    inputs   = { date = "{{ schedule.date }}", at = "{{ schedule.time }}" }
  }
  step "s" {
    exec { command = ["true"] }
  }
}`

func (b *bundle) activate(version, overlap, catchUp string) {
	b.t.Helper()
	src := strings.NewReplacer("VERSION", version, "OVERLAP", overlap, "CATCHUP", catchUp).Replace(scheduledSrc)
	g := b.compile(src)[0]
	if _, err := b.e.ActivateSchedules(b.ctx, g, "/work/dir"); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) fires() []store.ScheduleFire {
	b.t.Helper()
	fs, err := b.st.ScheduleFireList(b.ctx, store.ScheduleFireListParams{Workflow: "tick", Name: "minutely"})
	if err != nil {
		b.t.Fatal(err)
	}
	return fs
}

// TestSchedulerFiresEachSlotOnce: two engines on one SQLite file call
// FireDue at every step of a fake clock over 10 minutes; each minute's slot
// starts exactly one run, with the schedule's inputs, the key
// schedule.RunKey, the recorded work dir and the version current at the
// fire (a PATCH applied halfway binds the later runs).
func TestSchedulerFiresEachSlotOnce(t *testing.T) {
	b := setup(t)
	st2, err := sqlite.Open(b.ctx, b.st.Path(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	e2 := New(st2, Options{Clock: b.clk, Owner: store.Owner{Host: "h", PID: 2, Worker: "t2"}, ParkWait: -1})
	b.clk.Set(time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC))
	b.activate("1.0.0", "allow", "latest")
	for i := 0; i < 40; i++ {
		if i == 20 {
			b.activate("1.0.1", "allow", "latest")
		}
		b.clk.Advance(15 * time.Second)
		for _, e := range []*Engine{b.e, e2} {
			if _, err := e.FireDue(b.ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	fires := b.fires()
	if len(fires) != 10 {
		t.Fatalf("%d fires, want 10 (one per minute): %+v", len(fires), fires)
	}
	loc, _ := time.LoadLocation("America/New_York")
	for _, f := range fires {
		if f.Status != store.FireFired || f.RunID == "" || f.Slot.Second() != 0 {
			t.Fatalf("fire %+v: want fired with a run, on the minute", f)
		}
		run, err := b.st.RunGet(b.ctx, f.RunID)
		if err != nil {
			t.Fatal(err)
		}
		var in map[string]string
		_ = json.Unmarshal(run.Inputs, &in)
		if run.Key != schedule.RunKey("minutely", f.Slot) || run.WorkDir != "/work/dir" ||
			in["date"] != f.Slot.In(loc).Format(time.DateOnly) || in["at"] != f.Slot.In(loc).Format(time.RFC3339) {
			t.Errorf("run %+v of slot %s: key, work dir or inputs wrong (%v)", run, f.Slot, in)
		}
		want := "1.0.0"
		if f.FiredAt.After(time.Date(2030, 1, 2, 3, 9, 30, 0, time.UTC)) {
			want = "1.0.1"
		}
		if run.Version != want {
			t.Errorf("slot %s ran version %s, want %s (current at the fire)", f.Slot, run.Version, want)
		}
	}
}

// TestSchedulerCatchUpAndOverlap: a scheduler that was away 30 minutes
// fires the latest slot and records the others skipped (catch_up); with
// overlap = "skip" the next slot is skipped while that run is unfinished,
// and a manual trigger honours the same policy.
func TestSchedulerCatchUpAndOverlap(t *testing.T) {
	b := setup(t)
	b.clk.Set(time.Date(2030, 1, 2, 3, 10, 30, 0, time.UTC))
	b.activate("1.0.0", "skip", "latest")
	b.clk.Advance(30 * time.Minute)
	if n, err := b.e.FireDue(b.ctx); err != nil || n != 1 {
		t.Fatalf("FireDue = %d, %v; want 1 run", n, err)
	}
	fires := b.fires()
	fired, skipped := 0, 0
	for _, f := range fires {
		switch {
		case f.Status == store.FireFired:
			fired++
			if !f.Slot.Equal(time.Date(2030, 1, 2, 3, 40, 0, 0, time.UTC)) {
				t.Errorf("fired slot %s, want the latest, 03:40", f.Slot)
			}
		case f.Reason == "catch_up":
			skipped++
		}
	}
	if fired != 1 || skipped != 29 {
		t.Fatalf("fired %d, skipped %d; want 1 and 29", fired, skipped)
	}
	b.clk.Advance(time.Minute)
	if n, err := b.e.FireDue(b.ctx); err != nil || n != 0 {
		t.Fatalf("FireDue with a run unfinished = %d, %v; want 0 (overlap skip)", n, err)
	}
	if f := b.fires()[0]; f.Status != store.FireSkipped || f.Reason != "overlap" {
		t.Fatalf("newest fire %+v; want skipped for overlap", f)
	}
	res, err := b.e.TriggerSchedule(b.ctx, "tick", "minutely")
	if err != nil || res.Run.ID != "" || res.Fire.Reason != "overlap" {
		t.Fatalf("trigger = %+v, %v; want skipped for overlap", res, err)
	}
	b.activate("1.0.1", "allow", "latest")
	b.clk.Advance(time.Second)
	res, err = b.e.TriggerSchedule(b.ctx, "tick", "minutely")
	if err != nil || res.Run.ID == "" || res.Fire.Reason != "manual" {
		t.Fatalf("trigger with overlap allow = %+v, %v; want a run", res, err)
	}
}

// TestSchedulerSlotInputsFail: a slot whose run key cannot be computed
// (the key expression fails on the slot's inputs) is recorded skipped with
// the reason, starts nothing, and the schedule moves on: the next pass
// does not try it again.
func TestSchedulerSlotInputsFail(t *testing.T) {
	rec := &slotFailRecorder{}
	b := setup(t, func(o *Options) { o.Observer = rec })
	g := b.compile(`workflow "badkey" {
  version = "1.0.0"
  key     = "string(int(input.at))"
  input "at" { type = string }
  schedule "m" {
    every  = "1m"
    inputs = { at = "{{ schedule.time }}" }
  }
  step "s" {
    set { x = 1 }
  }
}`)[0]
	if _, err := b.e.ActivateSchedules(b.ctx, g, ""); err != nil {
		t.Fatal(err)
	}
	b.clk.Advance(time.Minute)
	for range 2 {
		if n, err := b.e.FireDue(b.ctx); err != nil || n != 0 {
			t.Fatalf("FireDue = %d, %v; want 0 runs and no error", n, err)
		}
	}
	fs, err := b.st.ScheduleFireList(b.ctx, store.ScheduleFireListParams{Workflow: "badkey", Name: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Status != store.FireSkipped || !strings.HasPrefix(fs[0].Reason, "inputs: ") || !strings.Contains(fs[0].Reason, "key") {
		t.Fatalf("fires = %+v; want one skipped with reason inputs: ... key", fs)
	}
	sc, err := b.st.ScheduleGet(b.ctx, "badkey", "m")
	if err != nil || !sc.NextAt.After(b.clk.Now()) {
		t.Fatalf("schedule %+v, %v: want its next_at after now", sc, err)
	}
	// The Observer (a worker's log) is told once, with the slot and why:
	// before, nothing but the fire's row said that the slot started no run.
	if len(rec.failed) != 1 || rec.failed[0] != "badkey/m@"+fs[0].Slot.UTC().Format(time.RFC3339) || !strings.Contains(rec.errs[0], "key") {
		t.Fatalf("ScheduleSlotFailed told %v (%q); want badkey/m once, with the key's error", rec.failed, rec.errs)
	}
}

// slotFailRecorder keeps the failed slots an Observer is told of.
type slotFailRecorder struct {
	telemetry.Nop
	failed, errs []string
}

func (r *slotFailRecorder) ScheduleSlotFailed(workflow, schedule string, slot time.Time, err error) {
	r.failed = append(r.failed, workflow+"/"+schedule+"@"+slot.UTC().Format(time.RFC3339))
	r.errs = append(r.errs, err.Error())
}

// TestSchedulerYearDST: over a year from 2030-01-02, a fake clock stepped
// every 5 hours and
// FireDue at each step fire exactly the slots package schedule computes
// (itself checked against hand-written offset rules), DST days included:
// Berlin's 02:30 fires at 03:00 CEST on the spring-forward day
// (2030-03-31), New York's 01:30 once, at 01:30 EDT, on the fall-back day
// (2030-11-03).
func TestSchedulerYearDST(t *testing.T) {
	for _, tc := range []struct{ zone, cron, day, wall string }{
		{"Europe/Berlin", "30 2 * * *", "2030-03-31", "2030-03-31T03:00:00+02:00"},
		{"America/New_York", "30 1 * * *", "2030-11-03", "2030-11-03T01:30:00-04:00"},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			b := setup(t)
			b.clk.Set(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) // t0; Set only moves forward
			src := `workflow "daily" {
  version = "1.0.0"
  schedule "d" {
    cron     = "` + tc.cron + `"
    timezone = "` + tc.zone + `"
    overlap  = "allow"
  }
  step "s" {
    set { x = 1 }
  }
}`
			g := b.compile(src)[0]
			if _, err := b.e.ActivateSchedules(b.ctx, g, ""); err != nil {
				t.Fatal(err)
			}
			spec, err := ParseSchedule(g.Schedules[0])
			if err != nil {
				t.Fatal(err)
			}
			start := b.clk.Now()
			end := start.AddDate(1, 0, 0)
			for b.clk.Now().Before(end) {
				b.clk.Advance(5 * time.Hour)
				if _, err := b.e.FireDue(b.ctx); err != nil {
					t.Fatal(err)
				}
			}
			var want []time.Time
			for s := spec.Next(start); !s.After(b.clk.Now()); s = spec.Next(s) {
				want = append(want, s)
			}
			fs, err := b.st.ScheduleFireList(b.ctx, store.ScheduleFireListParams{Workflow: "daily", Name: "d"})
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != len(want) {
				t.Fatalf("%d fires, want %d", len(fs), len(want))
			}
			loc := spec.Location()
			var onDay []string
			for _, f := range fs {
				if l := f.Slot.In(loc); l.Format(time.DateOnly) == tc.day {
					onDay = append(onDay, l.Format(time.RFC3339))
				}
			}
			if len(onDay) != 1 || onDay[0] != tc.wall {
				t.Errorf("fires on %s: %v, want exactly [%s]", tc.day, onDay, tc.wall)
			}
			for i, f := range fs {
				w := want[len(want)-1-i] // fires are newest first
				if !f.Slot.Equal(w) || f.Status != store.FireFired {
					t.Fatalf("fire %d: %s %s, want fired at %s", i, f.Slot.In(loc), f.Status, w.In(loc))
				}
			}
			if len(want) < 364 {
				t.Fatalf("only %d slots in a year", len(want))
			}
		})
	}
}

// TestWorkerFiresOnItsClock: a Worker fires a schedule's slots as its
// injected clock reaches them, and only then: with the fake clock held
// before the slot nothing fires however long the test waits; stepped past
// five slots, five runs are started (catch_up all) and run to the end.
func TestWorkerFiresOnItsClock(t *testing.T) {
	b := setup(t, func(o *Options) { o.Poll = time.Second })
	g := b.compile(`workflow "w" {
  version = "1.0.0"
  schedule "m" {
    every    = "1m"
    overlap  = "allow"
    catch_up = "all"
  }
  step "s" {
    set { x = 1 }
  }
}`)[0]
	b.clk.Set(time.Date(2030, 1, 2, 3, 10, 30, 0, time.UTC))
	if _, err := b.e.ActivateSchedules(b.ctx, g, ""); err != nil {
		t.Fatal(err)
	}
	w := NewWorker(b.e, WorkerOptions{})
	if err := w.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(b.ctx)
	completed := func() int {
		rs, err := b.st.RunList(b.ctx, store.RunListParams{Workflow: "w", Status: store.RunCompleted})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	time.Sleep(300 * time.Millisecond) // real time passes; the fake clock does not
	if fs, err := b.st.ScheduleFireList(b.ctx, store.ScheduleFireListParams{Workflow: "w", Name: "m"}); err != nil || len(fs) != 0 {
		t.Fatalf("fires %v, %v before the clock reached a slot", fs, err)
	}
	b.clk.Set(time.Date(2030, 1, 2, 3, 15, 30, 0, time.UTC))
	deadline := time.Now().Add(10 * time.Second) // safety net only
	for completed() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs completed, want 5 (one per slot 03:11 to 03:15)", completed())
		}
		if b.clk.Pending() > 0 {
			b.clk.Advance(100 * time.Millisecond)
		}
		time.Sleep(time.Millisecond)
	}
	if n := completed(); n != 5 {
		t.Fatalf("%d runs, want 5", n)
	}
}

// TestSchedulerQueue: with overlap = "queue" a slot that comes due while
// the schedule's run is unfinished waits, still due, and fires once that
// run has finished; with catch_up latest the waiting slots are one, the
// latest.
func TestSchedulerQueue(t *testing.T) {
	b := setup(t)
	b.clk.Set(time.Date(2030, 1, 2, 3, 10, 30, 0, time.UTC))
	b.activate("1.0.0", "queue", "latest")
	b.clk.Advance(time.Minute)
	if n, err := b.e.FireDue(b.ctx); err != nil || n != 1 {
		t.Fatalf("first slot: FireDue = %d, %v; want 1 run", n, err)
	}
	first := b.fires()[0].RunID
	b.clk.Advance(2 * time.Minute)
	if n, err := b.e.FireDue(b.ctx); err != nil || n != 0 {
		t.Fatalf("while run %s is unfinished: FireDue = %d, %v; want 0", first, n, err)
	}
	if fs := b.fires(); len(fs) != 1 {
		t.Fatalf("fires %+v: the waiting slots must not be recorded yet", fs)
	}
	if _, err := b.e.Cancel(b.ctx, first); err != nil {
		t.Fatal(err)
	}
	if n, err := b.e.FireDue(b.ctx); err != nil || n != 1 {
		t.Fatalf("after the run finished: FireDue = %d, %v; want 1 run", n, err)
	}
	fs := b.fires()
	if len(fs) != 3 || !fs[0].Slot.Equal(time.Date(2030, 1, 2, 3, 13, 0, 0, time.UTC)) || fs[0].Status != store.FireFired ||
		fs[1].Status != store.FireSkipped || fs[1].Reason != "catch_up" {
		t.Fatalf("fires %+v: want 03:13 fired, 03:12 skipped (catch_up), 03:11 fired", fs)
	}
}

// TestSchedulerConcurrencySkipRecorded: a slot whose run a concurrency
// block skips (on_conflict = "skip": the key is held by the run of the
// slot before, which waits for a signal) is recorded skipped on its fire,
// with the run it started and a reason that names no key.
func TestSchedulerConcurrencySkipRecorded(t *testing.T) {
	b := setup(t)
	b.clk.Set(time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC))
	g := b.compile(`workflow "tick" {
  version = "1.0.0"
  schedule "minutely" {
    every   = "1m"
    overlap = "allow"
  }
  concurrency {
    key         = "'sekret-key'"
    limit       = 1
    on_conflict = "skip"
  }
  step "gate" {
    wait { signal = "go" }
  }
}`)[0]
	if _, err := b.e.ActivateSchedules(b.ctx, g, "/work/dir"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		b.clk.Advance(time.Minute)
		if _, err := b.e.FireDue(b.ctx); err != nil {
			t.Fatal(err)
		}
		fs := b.fires()
		b.drive(fs[0].RunID) // newest first
	}
	fs := b.fires()
	if len(fs) != 2 {
		t.Fatalf("%d fires, want 2: %+v", len(fs), fs)
	}
	first, second := fs[1], fs[0]
	if first.Status != store.FireFired {
		t.Errorf("the first slot's fire is %s (%s), want fired: its run holds the key", first.Status, first.Reason)
	}
	if second.Status != store.FireSkipped || second.RunID == "" || !strings.HasPrefix(second.Reason, "concurrency: ") {
		t.Errorf("the second slot's fire is %+v, want skipped for concurrency, with its run", second)
	}
	if strings.Contains(second.Reason, "sekret") {
		t.Errorf("the fire's reason names the key: %q", second.Reason)
	}
	if r, err := b.st.RunGet(b.ctx, second.RunID); err != nil || r.Status != store.RunCanceled {
		t.Errorf("the skipped slot's run: %+v, %v; want canceled", r, err)
	}
}
