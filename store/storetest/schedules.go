package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// hourly is a schedule definition whose slots the tests name by hand (the
// store never reads the spec).
func hourly(name string, next time.Time) store.ScheduleDef {
	return store.ScheduleDef{Name: name, Kind: "cron", Spec: "0 * * * *", Timezone: "UTC", Overlap: "skip",
		CatchUp: "latest", Inputs: mustJSON(map[string]string{"date": "{{ schedule.date }}"}), NextAt: next}
}

func (f *fixture) version(v string) {
	f.t.Helper()
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); err != nil {
		f.t.Fatal(err)
	}
	_, err := f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "wf", Version: v, Major: major, Minor: minor, Patch: patch,
		Hash: "h" + v, Graph: []byte(`{}`), Now: t0})
	noErr(f.t, "VersionPut "+v, err)
}

func (f *fixture) activate(version string, now time.Time, defs ...store.ScheduleDef) []store.Schedule {
	f.t.Helper()
	ss, err := f.s.SchedulesActivate(f.ctx, store.SchedulesActivateParams{Workflow: "wf", Version: version, WorkDir: "/srv/wf",
		Schedules: defs, Now: now})
	noErr(f.t, "SchedulesActivate "+version, err)
	return ss
}

func (f *fixture) schedule(name string) store.Schedule {
	f.t.Helper()
	sc, err := f.s.ScheduleGet(f.ctx, "wf", name)
	noErr(f.t, "ScheduleGet "+name, err)
	return sc
}

// fireParams fire a slot of schedule name at version, starting run id,
// whatever else is unfinished.
func fireParams(name, version, id string, slot, next time.Time) store.ScheduleFireParams {
	return store.ScheduleFireParams{Workflow: "wf", Name: name, Slot: slot, Version: version, Overlap: "allow", Jitter: 1500 * time.Millisecond,
		Run: store.RunInsertParams{ID: id, Workflow: "wf", Version: version, GraphHash: "h" + version, Key: "nightly@" + id,
			Inputs: mustJSON(map[string]string{"date": "2025-03-01"}), Now: slot.Add(time.Second), AvailableAt: slot.Add(1500 * time.Millisecond),
			WorkDir: "/srv/wf", Events: []store.EventWrite{{Kind: "run_created"}}},
		NextAt: next, Now: slot.Add(time.Second)}
}

func names(ss []store.Schedule) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func testSchedules(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "activation stores, replaces and keeps cursors", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.version("1.1.0")
		ss := f.activate("1.0.0", t0, hourly("a", at(time.Hour)), hourly("b", at(time.Hour)))
		eq(t, "active after 1.0.0", names(ss), []string{"a", "b"})
		a := f.schedule("a")
		eq(t, "a", []any{a.Version, a.Kind, a.Spec, a.Timezone, a.Overlap, a.CatchUp, a.WorkDir, a.Paused, a.Active},
			[]any{"1.0.0", "cron", "0 * * * *", "UTC", "skip", "latest", "/srv/wf", false, true})
		jsonEq(t, "a's inputs", a.Inputs, mustJSON(map[string]string{"date": "{{ schedule.date }}"}))
		timeEq(t, "a since", a.Since, t0)
		timeEq(t, "a next", a.NextAt, at(time.Hour))

		// 1.1.0 keeps a unchanged, drops b, adds c: a keeps its cursor
		// (a slot due before the apply is still due), b stops.
		c := hourly("c", at(3*time.Hour))
		c.Kind, c.Spec, c.Jitter, c.CatchUp, c.MaxCatchUp = "every", "15m", 30*time.Second, "all", 4
		ss = f.activate("1.1.0", at(2*time.Hour), hourly("a", at(3*time.Hour)), c)
		eq(t, "active after 1.1.0", names(ss), []string{"a", "c"})
		a = f.schedule("a")
		eq(t, "a's version", a.Version, "1.1.0")
		timeEq(t, "a keeps since", a.Since, t0)
		timeEq(t, "a keeps next", a.NextAt, at(time.Hour))
		b := f.schedule("b")
		eq(t, "b active", b.Active, false)
		cs := f.schedule("c")
		eq(t, "c", []any{cs.Kind, cs.Spec, cs.Jitter, cs.CatchUp, cs.MaxCatchUp}, []any{"every", "15m", 30 * time.Second, "all", 4})
		all, err := f.s.ScheduleList(f.ctx, store.ScheduleListParams{Workflow: "wf", Inactive: true})
		noErr(t, "ScheduleList inactive", err)
		eq(t, "all schedules", names(all), []string{"a", "b", "c"})
		act, err := f.s.ScheduleList(f.ctx, store.ScheduleListParams{})
		noErr(t, "ScheduleList", err)
		eq(t, "active schedules", names(act), []string{"a", "c"})

		// A change of a's timing starts it over at the activation; b comes
		// back from inactive the same way.
		a2 := hourly("a", at(5*time.Hour))
		a2.Timezone = "Europe/Berlin"
		f.activate("1.1.0", at(4*time.Hour), a2, hourly("b", at(5*time.Hour)))
		a = f.schedule("a")
		timeEq(t, "a's since after a change", a.Since, at(4*time.Hour))
		timeEq(t, "a's next after a change", a.NextAt, at(5*time.Hour))
		b = f.schedule("b")
		eq(t, "b active again", b.Active, true)
		timeEq(t, "b's since", b.Since, at(4*time.Hour))
		eq(t, "c stopped", f.schedule("c").Active, false)

		// An unknown version writes nothing.
		_, err = f.s.SchedulesActivate(f.ctx, store.SchedulesActivateParams{Workflow: "wf", Version: "9.9.9",
			Schedules: []store.ScheduleDef{hourly("z", at(time.Hour))}, Now: at(5 * time.Hour)})
		isErr(t, "activating an unknown version", err, store.ErrNotFound)
		_, err = f.s.ScheduleGet(f.ctx, "wf", "z")
		isErr(t, "the schedule of an unknown version", err, store.ErrNotFound)
		eq(t, "a untouched", f.schedule("a").Version, "1.1.0")

		// A version without schedules stops them all.
		eq(t, "no schedules", names(f.activate("1.0.0", at(6*time.Hour))), []string{})
	})

	parallel(t, "pause and resume", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
		sc, err := f.s.SchedulePause(f.ctx, store.SchedulePauseParams{Workflow: "wf", Name: "a", Paused: true, Now: at(time.Minute)})
		noErr(t, "pause", err)
		eq(t, "paused", sc.Paused, true)
		timeEq(t, "a pause keeps next", sc.NextAt, at(time.Hour))
		due, err := f.s.ScheduleDue(f.ctx, store.ScheduleDueParams{Now: at(10 * time.Hour), Limit: 10})
		noErr(t, "ScheduleDue", err)
		eq(t, "due while paused", names(due), []string{})
		_, err = f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r1", at(time.Hour), at(2*time.Hour)))
		isErr(t, "a fire while paused", err, store.ErrConflict)
		_, err = f.s.RunGet(f.ctx, "r1")
		isErr(t, "the run of a refused fire", err, store.ErrNotFound)
		// Re-activating keeps it paused.
		f.activate("1.0.0", at(2*time.Hour), hourly("a", at(3*time.Hour)))
		eq(t, "paused after re-activation", f.schedule("a").Paused, true)
		// Resume at 10h: slots up to then are not due.
		sc, err = f.s.SchedulePause(f.ctx, store.SchedulePauseParams{Workflow: "wf", Name: "a", Paused: false, NextAt: at(11 * time.Hour), Now: at(10 * time.Hour)})
		noErr(t, "resume", err)
		eq(t, "resumed", sc.Paused, false)
		timeEq(t, "since after resume", sc.Since, at(10*time.Hour))
		timeEq(t, "next after resume", sc.NextAt, at(11*time.Hour))
		_, err = f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r2", at(9*time.Hour), at(11*time.Hour)))
		isErr(t, "a fire of a slot from before the resume", err, store.ErrConflict)
		_, err = f.s.SchedulePause(f.ctx, store.SchedulePauseParams{Workflow: "wf", Name: "nope", Paused: true, Now: at(time.Hour)})
		isErr(t, "pausing an unknown schedule", err, store.ErrNotFound)
	})

	parallel(t, "due schedules in next_at order", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.version("2.0.0")
		f.activate("1.0.0", t0, hourly("c", at(3*time.Minute)), hourly("a", at(2*time.Minute)), hourly("b", at(2*time.Minute)),
			hourly("later", at(time.Hour)), hourly("paused", at(time.Minute)))
		_, err := f.s.SchedulePause(f.ctx, store.SchedulePauseParams{Workflow: "wf", Name: "paused", Paused: true, Now: t0})
		noErr(t, "pause", err)
		due, err := f.s.ScheduleDue(f.ctx, store.ScheduleDueParams{Now: at(3 * time.Minute), Limit: 10})
		noErr(t, "ScheduleDue", err)
		eq(t, "due", names(due), []string{"a", "b", "c"})
		due, err = f.s.ScheduleDue(f.ctx, store.ScheduleDueParams{Now: at(3 * time.Minute), Limit: 2})
		noErr(t, "ScheduleDue", err)
		eq(t, "due, limit 2", names(due), []string{"a", "b"})
		// A fire moves a schedule's next_at past the slot.
		_, err = f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r1", at(2*time.Minute), at(62*time.Minute)))
		noErr(t, "fire", err)
		due, err = f.s.ScheduleDue(f.ctx, store.ScheduleDueParams{Now: at(3 * time.Minute), Limit: 10})
		noErr(t, "ScheduleDue", err)
		eq(t, "due after a fired", names(due), []string{"b", "c"})
		// Inactive schedules are never due.
		f.activate("2.0.0", at(4*time.Minute), hourly("later", at(time.Hour)))
		due, err = f.s.ScheduleDue(f.ctx, store.ScheduleDueParams{Now: at(2 * time.Hour), Limit: 10})
		noErr(t, "ScheduleDue", err)
		eq(t, "due after 2.0.0", names(due), []string{"later"})
	})

	parallel(t, "fire once, with its run, advancing the cursor", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.version("1.1.0")
		f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
		res, err := f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r1", at(time.Hour), at(2*time.Hour)))
		noErr(t, "fire", err)
		fr, r := res.Fire, res.Run
		eq(t, "fire", []any{fr.Status, fr.RunID, fr.Reason, fr.Jitter}, []any{store.FireFired, "r1", "", 1500 * time.Millisecond})
		eq(t, "run", []any{r.ID, r.Workflow, r.Version, r.Key, r.Status, r.WorkDir}, []any{"r1", "wf", "1.0.0", "nightly@r1", store.RunPending, "/srv/wf"})
		timeEq(t, "run available", r.AvailableAt, at(time.Hour+1500*time.Millisecond))
		jsonEq(t, "run inputs", r.Inputs, mustJSON(map[string]string{"date": "2025-03-01"}))
		eq(t, "run events", kinds(f.events("r1")), []string{"run_created"})
		a := f.schedule("a")
		timeEq(t, "last slot", a.LastSlot, at(time.Hour))
		timeEq(t, "next", a.NextAt, at(2*time.Hour))
		eq(t, "last run", a.LastRunID, "r1")
		timeEq(t, "last fired", a.LastFiredAt, at(time.Hour+time.Second))

		// The same slot again: refused by the fire's key, no run.
		_, err = f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r2", at(time.Hour), at(2*time.Hour)))
		isErr(t, "a second fire of the slot", err, store.ErrAlreadyFired)
		_, err = f.s.RunGet(f.ctx, "r2")
		isErr(t, "the second fire's run", err, store.ErrNotFound)

		// An older slot fired late does not move the cursor back.
		_, err = f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r0", at(30*time.Minute), at(time.Hour)))
		noErr(t, "a late fire of an older slot", err)
		a = f.schedule("a")
		timeEq(t, "last slot stays", a.LastSlot, at(time.Hour))
		timeEq(t, "next stays", a.NextAt, at(2*time.Hour))

		// A fire for a version the schedule no longer has writes nothing.
		f.activate("1.1.0", at(90*time.Minute), hourly("a", at(2*time.Hour)))
		_, err = f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r3", at(2*time.Hour), at(3*time.Hour)))
		isErr(t, "a fire at the old version", err, store.ErrConflict)
		_, err = f.s.RunGet(f.ctx, "r3")
		isErr(t, "the stale fire's run", err, store.ErrNotFound)
		fires, err := f.s.ScheduleFireList(f.ctx, store.ScheduleFireListParams{Workflow: "wf", Name: "a"})
		noErr(t, "ScheduleFireList", err)
		eq(t, "fires", len(fires), 2)
		timeEq(t, "newest fire first", fires[0].Slot, at(time.Hour))

		// A manual trigger: allowed while paused, cursor unmoved.
		_, err = f.s.SchedulePause(f.ctx, store.SchedulePauseParams{Workflow: "wf", Name: "a", Paused: true, Now: at(100 * time.Minute)})
		noErr(t, "pause", err)
		p := fireParams("a", "1.1.0", "m1", at(101*time.Minute), time.Time{})
		p.Manual = true
		res, err = f.s.ScheduleFire(f.ctx, p)
		noErr(t, "manual trigger", err)
		fr = res.Fire
		eq(t, "manual reason", fr.Reason, "manual")
		a = f.schedule("a")
		timeEq(t, "next after a trigger", a.NextAt, at(2*time.Hour))
		timeEq(t, "last slot after a trigger", a.LastSlot, at(time.Hour))
		eq(t, "last run after a trigger", a.LastRunID, "m1")
		byRun, err := f.s.ScheduleFireList(f.ctx, store.ScheduleFireListParams{RunID: "m1"})
		noErr(t, "ScheduleFireList by run", err)
		if len(byRun) != 1 || byRun[0].Schedule != "a" || !byRun[0].Slot.Equal(at(101*time.Minute)) {
			t.Fatalf("the fire of run m1: %+v", byRun)
		}

		// Unknown schedule; a run of another version.
		_, err = f.s.ScheduleFire(f.ctx, fireParams("nope", "1.1.0", "r9", at(time.Hour), at(2*time.Hour)))
		isErr(t, "firing an unknown schedule", err, store.ErrNotFound)
		bad := fireParams("a", "1.1.0", "r9", at(3*time.Hour), at(4*time.Hour))
		bad.Run.Version = "1.0.0"
		if _, err := f.s.ScheduleFire(f.ctx, bad); err == nil {
			t.Fatal("a fire whose run is of another version was accepted")
		}
	})

	parallel(t, "a slot whose run key is held starts nothing", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
		// Two slots whose runs have one key: the first starts its run; the
		// second finds it holding the key and is recorded skipped.
		held := func(old store.Run) (bool, error) { return !old.Status.Terminal(), nil }
		p := fireParams("a", "1.0.0", "k1", at(time.Hour), at(2*time.Hour))
		p.Run.Key, p.KeyHeld = "2025-03-01", held
		res, err := f.s.ScheduleFire(f.ctx, p)
		noErr(t, "the first slot", err)
		eq(t, "first fire", []any{res.Fire.Status, res.Run.ID}, []any{store.FireFired, "k1"})
		p = fireParams("a", "1.0.0", "k2", at(2*time.Hour), at(3*time.Hour))
		p.Run.Key, p.KeyHeld = "2025-03-01", held
		res, err = f.s.ScheduleFire(f.ctx, p)
		noErr(t, "the second slot", err)
		eq(t, "second fire", []any{res.Fire.Status, res.Fire.Reason, res.Fire.RunID, res.Run.ID},
			[]any{store.FireSkipped, store.KeyHeldReason("k1"), "", ""})
		_, err = f.s.RunGet(f.ctx, "k2")
		isErr(t, "the second slot's run", err, store.ErrNotFound)
		timeEq(t, "the cursor moved on", f.schedule("a").NextAt, at(3*time.Hour))
		// When the holder is no longer held, the key's next slot starts.
		p = fireParams("a", "1.0.0", "k3", at(3*time.Hour), at(4*time.Hour))
		p.Run.Key, p.KeyHeld = "2025-03-01", func(store.Run) (bool, error) { return false, nil }
		res, err = f.s.ScheduleFire(f.ctx, p)
		noErr(t, "the third slot", err)
		eq(t, "third fire", []any{res.Fire.Status, res.Run.ID}, []any{store.FireFired, "k3"})
	})

	parallel(t, "a transition records its run's fire skipped", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
		_, err := f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r1", at(time.Hour), at(2*time.Hour)))
		noErr(t, "fire", err)
		f.insert(store.RunInsertParams{ID: "plain", Workflow: "wf", Version: "1.0.0", GraphHash: "h1.0.0"})
		canceled := store.RunCanceled
		for _, id := range []string{"r1", "plain"} {
			held := f.claimOne("w1", id, at(2*time.Hour))
			res := f.commit(store.Transition{RunID: id, Lease: held.Lease, Now: at(2 * time.Hour),
				Run: &store.RunUpdate{Status: &canceled, Release: true}, FireSkipped: "concurrency: the key was held by 1 of 1 runs"})
			noErr(t, "transition of "+id, res.Err)
		}
		fires, err := f.s.ScheduleFireList(f.ctx, store.ScheduleFireListParams{Workflow: "wf", Name: "a"})
		noErr(t, "ScheduleFireList", err)
		eq(t, "fires", len(fires), 1)
		eq(t, "the fire", []any{fires[0].Status, fires[0].Reason, fires[0].RunID},
			[]any{store.FireSkipped, "concurrency: the key was held by 1 of 1 runs", "r1"})
	})

	parallel(t, "skipped slots are recorded once", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
		_, err := f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r2", at(2*time.Hour), at(3*time.Hour)))
		noErr(t, "fire 2h", err)
		n, err := f.s.ScheduleSkip(f.ctx, store.ScheduleSkipParams{Workflow: "wf", Name: "a", Reason: "catch_up",
			Slots: []time.Time{at(time.Hour), at(2 * time.Hour), at(3 * time.Hour)}, NextAt: at(4 * time.Hour), Now: at(3*time.Hour + time.Minute)})
		noErr(t, "ScheduleSkip", err)
		eq(t, "recorded", n, 2)
		fires, err := f.s.ScheduleFireList(f.ctx, store.ScheduleFireListParams{Workflow: "wf", Name: "a", Limit: 10})
		noErr(t, "ScheduleFireList", err)
		var got []string
		for _, fr := range fires {
			got = append(got, fmt.Sprintf("%s %s %s %s", fr.Slot.Sub(t0), fr.Status, fr.Reason, fr.RunID))
		}
		eq(t, "fires", got, []string{"3h0m0s skipped catch_up ", "2h0m0s fired  r2", "1h0m0s skipped catch_up "})
		a := f.schedule("a")
		timeEq(t, "last slot", a.LastSlot, at(3*time.Hour))
		timeEq(t, "next", a.NextAt, at(4*time.Hour))
		eq(t, "last run", a.LastRunID, "r2")
		_, err = f.s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", "r3", at(3*time.Hour), at(4*time.Hour)))
		isErr(t, "firing a skipped slot", err, store.ErrAlreadyFired)
		_, err = f.s.ScheduleSkip(f.ctx, store.ScheduleSkipParams{Workflow: "wf", Name: "nope", Slots: []time.Time{at(time.Hour)}, Now: at(time.Hour)})
		isErr(t, "skipping a slot of an unknown schedule", err, store.ErrNotFound)
	})
}

func testScheduleOverlap(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "overlap among the schedule's own runs", newStore, func(t *testing.T, f *fixture) {
		f.version("1.0.0")
		f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
		fire := func(id string, slot time.Duration, overlap string) store.ScheduleFireResult {
			t.Helper()
			p := fireParams("a", "1.0.0", id, at(slot), at(slot+time.Hour))
			p.Overlap = overlap
			res, err := f.s.ScheduleFire(f.ctx, p)
			noErr(t, "fire "+id, err)
			return res
		}
		res := fire("r1", time.Hour, "skip")
		eq(t, "first fire", []any{res.Fire.Status, res.Run.ID, len(res.Unfinished)}, []any{store.FireFired, "r1", 0})

		// r1 is unfinished: skip records the slot skipped, starts nothing.
		res = fire("r2", 2*time.Hour, "skip")
		eq(t, "skipped fire", []any{res.Fire.Status, res.Fire.Reason, res.Fire.RunID, res.Run.ID, res.Unfinished},
			[]any{store.FireSkipped, "overlap", "", "", []string{"r1"}})
		_, err := f.s.RunGet(f.ctx, "r2")
		isErr(t, "the run of a slot skipped for overlap", err, store.ErrNotFound)
		a := f.schedule("a")
		timeEq(t, "cursor after an overlap skip", a.LastSlot, at(2*time.Hour))
		eq(t, "last run after an overlap skip", a.LastRunID, "r1")

		// allow (and queue) start the run and say what is unfinished.
		res = fire("r3", 3*time.Hour, "allow")
		eq(t, "allowed fire", []any{res.Fire.Status, res.Run.ID, res.Unfinished}, []any{store.FireFired, "r3", []string{"r1"}})

		// r1 ends; r3 is still running (leased): cancel_previous flags it
		// and starts r4.
		r1 := f.claimOne("w", "r1", at(3*time.Hour))
		done := store.RunCompleted
		f.commit(store.Transition{RunID: "r1", Lease: r1.Lease, Now: at(3 * time.Hour), Run: &store.RunUpdate{Status: &done, Release: true}})
		held, err := f.s.RunClaim(f.ctx, store.RunClaimParams{Owner: "w", Now: at(3*time.Hour + time.Minute), LeaseFor: 10 * time.Hour, Limit: 1, RunID: "r3"})
		noErr(t, "claiming r3", err)
		eq(t, "claimed", ids(held), []string{"r3"})
		res = fire("r4", 4*time.Hour, "cancel_previous")
		eq(t, "cancel_previous fire", []any{res.Fire.Status, res.Run.ID, res.Unfinished}, []any{store.FireFired, "r4", []string{"r3"}})
		eq(t, "r3 asked to cancel", f.get("r3").CancelRequested, true)
		eq(t, "r1 untouched", f.get("r1").Status, store.RunCompleted)

		// r3 (leased) and r4 (not) are unfinished; cancel_previous ends r4
		// at once.
		res = fire("r5", 5*time.Hour, "cancel_previous")
		eq(t, "unfinished", res.Unfinished, []string{"r3", "r4"})
		eq(t, "r4 canceled", f.get("r4").Status, store.RunCanceled)

		// Once every earlier run has ended, skip fires again.
		for _, id := range []string{"r3", "r5"} {
			_, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: id, Now: at(6 * time.Hour)})
			if err != nil && !errors.Is(err, store.ErrConflict) {
				t.Fatalf("RunCancel %s: %v", id, err)
			}
		}
		r3 := f.get("r3")
		canceled := store.RunCanceled
		f.commit(store.Transition{RunID: "r3", Lease: r3.Lease, Now: at(6 * time.Hour), Run: &store.RunUpdate{Status: &canceled, Release: true}})
		res = fire("r6", 6*time.Hour, "skip")
		eq(t, "skip with nothing unfinished", []any{res.Fire.Status, res.Run.ID, len(res.Unfinished)}, []any{store.FireFired, "r6", 0})
	})
}

// RunShared runs the cases that need two handles on one database (two
// Store values, each with its own connections, as two worker processes
// have). newPair returns two stores open on the same new, empty database.
func RunShared(t *testing.T, newPair func(t *testing.T) (store.Store, store.Store)) {
	t.Run("schedule fires race", func(t *testing.T) { t.Parallel(); testFireRace(t, newPair) })
	t.Run("schedule overlap race", func(t *testing.T) { t.Parallel(); testOverlapRace(t, newPair) })
	t.Run("schedule fire batch race", func(t *testing.T) { t.Parallel(); testFireBatchRace(t, newPair) })
	t.Run("key race", func(t *testing.T) { t.Parallel(); testKeyRace(t, newPair) })
}

// testFireRace fires each slot from eight goroutines at once, four on
// each handle: exactly one fire per slot succeeds and starts its run; the
// others get ErrAlreadyFired and start none.
func testFireRace(t *testing.T, newPair func(t *testing.T) (store.Store, store.Store)) {
	s1, s2 := newPair(t)
	f := &fixture{t: t, ctx: t.Context(), s: s1}
	f.version("1.0.0")
	f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
	const slots, racers = 12, 8
	for k := 1; k <= slots; k++ {
		slot := at(time.Duration(k) * time.Hour)
		var wg sync.WaitGroup
		errs := make([]error, racers)
		start := make(chan struct{})
		for i := range racers {
			s := s1
			if i%2 == 1 {
				s = s2
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = s.ScheduleFire(f.ctx, fireParams("a", "1.0.0", fmt.Sprintf("r%d-%d", k, i), slot, slot.Add(time.Hour)))
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !isAlreadyFired(err):
				t.Fatalf("slot %d racer %d: %v", k, i, err)
			}
			_, gerr := s2.RunGet(f.ctx, fmt.Sprintf("r%d-%d", k, i))
			if (gerr == nil) != (err == nil) {
				t.Fatalf("slot %d racer %d: fire error %v, run read %v: a run exists exactly for the winning fire", k, i, err, gerr)
			}
		}
		if won != 1 {
			t.Fatalf("slot %d: %d fires succeeded, want exactly 1", k, won)
		}
	}
	fires, err := s2.ScheduleFireList(f.ctx, store.ScheduleFireListParams{Workflow: "wf", Name: "a"})
	noErr(t, "ScheduleFireList", err)
	eq(t, "fires recorded", len(fires), slots)
	runs, err := s1.RunList(f.ctx, store.RunListParams{Workflow: "wf"})
	noErr(t, "RunList", err)
	eq(t, "runs started", len(runs), slots)
	timeEq(t, "last slot", f.schedule("a").LastSlot, at(slots*time.Hour))
}

func isAlreadyFired(err error) bool { return errors.Is(err, store.ErrAlreadyFired) }

// testOverlapRace fires eight different slots of one schedule at once,
// four on each handle, with overlap = "skip" and no run finishing: exactly
// one slot starts a run, the seven others are recorded skipped. Each fire
// must see the runs of the fires that committed before it.
func testOverlapRace(t *testing.T, newPair func(t *testing.T) (store.Store, store.Store)) {
	s1, s2 := newPair(t)
	f := &fixture{t: t, ctx: t.Context(), s: s1}
	f.version("1.0.0")
	f.activate("1.0.0", t0, hourly("a", at(time.Hour)))
	const racers = 8
	results := make([]store.ScheduleFireResult, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			slot := at(time.Duration(i+1) * time.Hour)
			p := fireParams("a", "1.0.0", fmt.Sprintf("r%d", i), slot, slot.Add(time.Hour))
			p.Overlap = store.OverlapSkip
			results[i], errs[i] = s.ScheduleFire(f.ctx, p)
		}()
	}
	close(start)
	wg.Wait()
	fired := 0
	for i := range racers {
		noErr(t, fmt.Sprintf("racer %d", i), errs[i])
		if results[i].Fire.Status == store.FireFired {
			fired++
		}
	}
	eq(t, "slots that started a run", fired, 1)
	runs, err := s2.RunList(f.ctx, store.RunListParams{Workflow: "wf"})
	noErr(t, "RunList", err)
	eq(t, "runs", len(runs), 1)
	fires, err := s1.ScheduleFireList(f.ctx, store.ScheduleFireListParams{Workflow: "wf", Name: "a"})
	noErr(t, "ScheduleFireList", err)
	eq(t, "slots recorded", len(fires), racers)
}
