package storetest

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testBreakers(t *testing.T, newStore func(t *testing.T) store.Store) {
	fail := func(key string) store.BreakerWrite {
		return store.BreakerWrite{Name: "pay", Outcome: store.BreakerFailure, StepKey: key, Threshold: 2, Cooldown: time.Minute}
	}
	acquire := func(f *fixture, run, key string, now time.Time) (store.Breaker, bool) {
		f.t.Helper()
		b, ok, err := f.s.BreakerAcquire(f.ctx, store.BreakerAcquireParams{Name: "pay", RunID: run, StepKey: key, Now: now, TrialFor: time.Minute})
		noErr(f.t, "BreakerAcquire", err)
		return b, ok
	}

	parallel(t, "consecutive failures across runs open it; cooldown; one trial; success closes", newStore, func(t *testing.T, f *fixture) {
		a := f.claimOne("w", f.insert(store.RunInsertParams{ID: "a"}).ID, at(0))
		b := f.claimOne("w", f.insert(store.RunInsertParams{ID: "b"}).ID, at(0))
		if _, ok := acquire(f, "a", "s", at(0)); !ok {
			t.Fatal("an unknown breaker must let attempts through")
		}
		f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(time.Second), Breakers: []store.BreakerWrite{fail("s")}})
		bs, err := f.s.BreakerList(f.ctx)
		noErr(t, "BreakerList", err)
		eq(t, "breakers", len(bs), 1)
		eq(t, "state after one failure", bs[0].State, store.BreakerClosed)
		eq(t, "failures", bs[0].Failures, 1)
		// The second failure, of another run, opens it, with the event in
		// that run's history.
		f.commit(store.Transition{RunID: "b", Lease: b.Lease, Now: at(2 * time.Second), Breakers: []store.BreakerWrite{fail("t")}})
		bs, _ = f.s.BreakerList(f.ctx)
		eq(t, "state", bs[0].State, store.BreakerOpen)
		timeEq(t, "open until", bs[0].OpenUntil, at(62*time.Second))
		eq(t, "event", kinds(f.events("b"))[len(f.events("b"))-1], "breaker_opened")
		if _, ok := acquire(f, "a", "s", at(30*time.Second)); ok {
			t.Fatal("an open breaker let an attempt through during its cooldown")
		}
		// After the cooldown, the first asker gets the single trial.
		nb, ok := acquire(f, "a", "s", at(62*time.Second))
		if !ok || nb.State != store.BreakerHalfOpen || nb.TrialRunID != "a" {
			t.Fatalf("trial not granted to the first asker: %+v %v", nb, ok)
		}
		eq(t, "half-open event", kinds(f.events("a"))[len(f.events("a"))-1], "breaker_half_open")
		if _, ok := acquire(f, "b", "t", at(63*time.Second)); ok {
			t.Fatal("a second attempt got through a half-open breaker")
		}
		if _, ok := acquire(f, "a", "s", at(63*time.Second)); !ok {
			t.Fatal("the trial holder asking again was refused")
		}
		// A run parked on the breaker is woken when it closes.
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "b", Lease: b.Lease, Now: at(63 * time.Second),
			Run: &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), WaitReason: ptr("breaker:pay"), Release: true}})
		f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(64 * time.Second),
			Breakers: []store.BreakerWrite{{Name: "pay", Outcome: store.BreakerSuccess, StepKey: "s"}}})
		bs, _ = f.s.BreakerList(f.ctx)
		eq(t, "closed", bs[0].State, store.BreakerClosed)
		eq(t, "count reset", bs[0].Failures, 0)
		timeEq(t, "parked run woken", f.get("b").AvailableAt, at(64*time.Second))
		eq(t, "closed event", kinds(f.events("a"))[len(f.events("a"))-1], "breaker_closed")
	})

	parallel(t, "a failed trial reopens; an expired trial is taken over; fenced writes change nothing", newStore, func(t *testing.T, f *fixture) {
		a := f.claimOne("w", f.insert(store.RunInsertParams{ID: "a"}).ID, at(0))
		f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(0), Breakers: []store.BreakerWrite{fail("s"), fail("s")}})
		acquire(f, "a", "s", at(time.Minute))
		f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(61 * time.Second), Breakers: []store.BreakerWrite{fail("s")}})
		bs, _ := f.s.BreakerList(f.ctx)
		eq(t, "reopened", bs[0].State, store.BreakerOpen)
		timeEq(t, "new cooldown", bs[0].OpenUntil, at(121*time.Second))
		acquire(f, "a", "s", at(121*time.Second))
		if _, ok := acquire(f, "x", "s", at(181*time.Second)); !ok {
			t.Fatal("a trial whose holder never reported was not taken over after TrialFor")
		}
		// A stale lease writes no breaker outcome.
		f.claimOne("w2", "a", at(time.Hour)) // a's lease expired long ago
		res := f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(time.Hour),
			Breakers: []store.BreakerWrite{{Name: "pay", Outcome: store.BreakerSuccess, StepKey: "s"}}})
		isErr(t, "fenced", res.Err, store.ErrLeaseLost)
		bs, _ = f.s.BreakerList(f.ctx)
		eq(t, "still half-open", bs[0].State, store.BreakerHalfOpen)
	})
}
