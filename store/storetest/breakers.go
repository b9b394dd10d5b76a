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
		// a's worker is alive: it heartbeats a's lease.
		_, err = f.s.RunHeartbeat(f.ctx, store.RunHeartbeatParams{Owner: "w", Now: at(62 * time.Second), LeaseFor: time.Minute,
			Leases: map[string]int64{"a": a.Lease.Epoch, "b": b.Lease.Epoch}})
		noErr(t, "RunHeartbeat", err)
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

	parallel(t, "a trial lapses with its holder's lease: the run's, or a dlq retry's claim", newStore, func(t *testing.T, f *fixture) {
		long := func(run, key string, now time.Time) bool {
			t.Helper()
			_, ok, err := f.s.BreakerAcquire(f.ctx, store.BreakerAcquireParams{Name: "pay", RunID: run, StepKey: key, Now: now, TrialFor: 10 * time.Minute})
			noErr(t, "BreakerAcquire", err)
			return ok
		}
		a := f.claimOne("w", f.insert(store.RunInsertParams{ID: "a"}).ID, at(0))
		f.insert(store.RunInsertParams{ID: "x"})
		f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(0), Breakers: []store.BreakerWrite{fail("s"), fail("s")}})
		// After the cooldown a's worker (its lease renewed to 2m) takes the
		// trial, held for up to 10 minutes, and is killed.
		_, err := f.s.RunHeartbeat(f.ctx, store.RunHeartbeatParams{Owner: "w", Now: at(time.Minute), LeaseFor: time.Minute,
			Leases: map[string]int64{"a": a.Lease.Epoch}})
		noErr(t, "RunHeartbeat", err)
		if !long("a", "s", at(61*time.Second)) {
			t.Fatal("the trial was not granted after the cooldown")
		}
		if long("x", "s", at(119*time.Second)) {
			t.Fatal("another run took the trial while its holder's lease was live")
		}
		if !long("x", "s", at(2*time.Minute)) {
			t.Fatal("the trial of a holder whose lease lapsed (its process was killed) was not taken over until TrialFor")
		}

		// A dlq retry holds the trial of its letter's step key while it
		// holds the letter's claim.
		f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(2 * time.Minute), DeadLetters: []store.DeadLetterWrite{
			{Step: "each", StepKey: "each[0]", Index: 0, Item: []byte(`1`), Error: []byte(`{"kind":"exec","message":"no"}`)}}})
		f.commit(store.Transition{RunID: "x", Now: at(3 * time.Minute), Breakers: []store.BreakerWrite{fail("s")}})
		ds, err := f.s.DeadLetterList(f.ctx, store.DeadLetterListParams{RunID: "a"})
		noErr(t, "DeadLetterList", err)
		if len(ds) != 1 {
			t.Fatalf("dead letters of a: %d, want 1", len(ds))
		}
		_, err = f.s.DeadLetterClaim(f.ctx, store.DeadLetterClaimParams{ID: ds[0].ID, Owner: "h/1/dlq1", Now: at(4 * time.Minute), LeaseFor: 30 * time.Second})
		noErr(t, "DeadLetterClaim", err)
		if !long("a", "each[0]", at(4*time.Minute)) {
			t.Fatal("the dlq retry was not granted the trial after the cooldown")
		}
		if long("x", "s", at(4*time.Minute+29*time.Second)) {
			t.Fatal("another run took the trial while the dlq retry's claim was live")
		}
		if !long("x", "s", at(4*time.Minute+30*time.Second)) {
			t.Fatal("the trial of a dlq retry whose claim lapsed was not taken over until TrialFor")
		}
	})
}
