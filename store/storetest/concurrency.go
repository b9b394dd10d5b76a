package storetest

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testConcurrency(t *testing.T, newStore func(t *testing.T) store.Store) {
	acq := func(f *fixture, id string, limit int, now time.Time) store.Slot {
		f.t.Helper()
		r := f.get(id)
		sl, err := f.s.SlotAcquire(f.ctx, store.SlotAcquireParams{Workflow: "wf", Key: "k", Limit: limit, RunID: id,
			RunCreatedAt: r.CreatedAt, Now: now})
		noErr(f.t, "SlotAcquire "+id, err)
		return sl
	}
	parallel(t, "limit, creation order, release on end and on cancel", newStore, func(t *testing.T, f *fixture) {
		for i, id := range []string{"a", "b", "c", "d"} {
			f.insert(store.RunInsertParams{ID: id, Now: at(time.Duration(i) * time.Second)})
		}
		if sl := acq(f, "a", 2, at(time.Minute)); !sl.Held || sl.Holders != 1 {
			t.Fatalf("a: %+v", sl)
		}
		if sl := acq(f, "a", 2, at(time.Minute)); !sl.Held || sl.Queued {
			t.Fatalf("a again: %+v", sl)
		}
		// d asks before c, but c was created first: once c is queued, d
		// may not pass it.
		if sl := acq(f, "c", 1, at(time.Minute)); sl.Held || !sl.Queued {
			t.Fatalf("c with limit 1: %+v", sl)
		}
		if sl := acq(f, "d", 3, at(time.Minute)); sl.Held {
			t.Fatalf("d passed c, which was queued before it: %+v", sl)
		}
		if sl := acq(f, "c", 2, at(time.Minute)); !sl.Held || sl.Holders != 2 {
			t.Fatalf("c with limit 2: %+v", sl)
		}
		if sl := acq(f, "d", 2, at(time.Minute)); sl.Held || sl.Queued {
			t.Fatalf("d over the limit: %+v", sl)
		}
		// d parks; a ends: its slot is freed and d, the first queued, is due.
		d := f.claimOne("w", "d", at(time.Minute))
		waiting, done := store.RunWaiting, store.RunCompleted
		f.commit(store.Transition{RunID: "d", Lease: d.Lease, Now: at(time.Minute),
			Run: &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), WaitReason: ptr("queue"), Release: true}})
		a := f.claimOne("w", "a", at(2*time.Minute))
		f.commit(store.Transition{RunID: "a", Lease: a.Lease, Now: at(3 * time.Minute),
			Run: &store.RunUpdate{Status: &done, Release: true}})
		timeEq(t, "d woken", f.get("d").AvailableAt, at(3*time.Minute))
		if sl := acq(f, "d", 2, at(3*time.Minute)); !sl.Held {
			t.Fatalf("d after a ended: %+v", sl)
		}
		// c is canceled by RunCancel: its slot no longer counts.
		_, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "c", Now: at(4 * time.Minute)})
		noErr(t, "RunCancel", err)
		if sl := acq(f, "b", 2, at(4*time.Minute)); !sl.Held {
			t.Fatalf("b after c was canceled: %+v", sl)
		}
	})
}

func testAlerts(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "queued in the transition, claimed once, retried, sent once", newStore, func(t *testing.T, f *fixture) {
		r := f.claimOne("w", f.insert(store.RunInsertParams{ID: "r"}).ID, at(0))
		f.insert(store.RunInsertParams{ID: "other"})
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second), Alerts: []store.AlertWrite{
			{Alert: "ops", Event: "failed", StepKey: "s", Message: "step s failed"},
		}})
		next, ok, err := f.s.AlertNextDue(f.ctx, "r")
		noErr(t, "AlertNextDue", err)
		if !ok {
			t.Fatal("no alert due")
		}
		timeEq(t, "due", next, at(time.Second))
		_, ok, _ = f.s.AlertNextDue(f.ctx, "other")
		eq(t, "nothing due in another tree", ok, false)

		as, err := f.s.AlertClaim(f.ctx, store.AlertClaimParams{Owner: "w1", Now: at(2 * time.Second), LeaseFor: time.Minute, Limit: 10})
		noErr(t, "AlertClaim", err)
		eq(t, "claimed", len(as), 1)
		eq(t, "event", as[0].Event, "failed")
		eq(t, "message", as[0].Message, "step s failed")
		eq(t, "attempts", as[0].Attempts, 1)
		again, _ := f.s.AlertClaim(f.ctx, store.AlertClaimParams{Owner: "w2", Now: at(3 * time.Second), LeaseFor: time.Minute, Limit: 10})
		eq(t, "leased alert claimed twice", len(again), 0)

		// The first try fails: pending again, due later.
		noErr(t, "AlertFinish retry", f.s.AlertFinish(f.ctx, store.AlertFinishParams{ID: as[0].ID, Owner: "w1",
			Status: store.AlertPending, LastError: "503", NextAt: at(10 * time.Second), Now: at(4 * time.Second),
			Events: []store.EventWrite{{Kind: "alert_failed", StepKey: "s"}}}))
		early, _ := f.s.AlertClaim(f.ctx, store.AlertClaimParams{Owner: "w2", Now: at(5 * time.Second), LeaseFor: time.Minute, Limit: 10})
		eq(t, "claimed before its retry time", len(early), 0)
		// The lease of w2's claim expires (w2 died); w3 takes it and sends it.
		as, _ = f.s.AlertClaim(f.ctx, store.AlertClaimParams{Owner: "w2", Now: at(10 * time.Second), LeaseFor: time.Minute, Limit: 10})
		eq(t, "retry claimed", len(as), 1)
		as, _ = f.s.AlertClaim(f.ctx, store.AlertClaimParams{Owner: "w3", Now: at(80 * time.Second), LeaseFor: time.Minute, Limit: 10, RootRunID: "r"})
		eq(t, "expired claim taken over", len(as), 1)
		eq(t, "attempts counted", as[0].Attempts, 3)
		isErr(t, "the old owner's finish", f.s.AlertFinish(f.ctx, store.AlertFinishParams{ID: as[0].ID, Owner: "w2",
			Status: store.AlertSent, Now: at(81 * time.Second)}), store.ErrLeaseLost)
		noErr(t, "AlertFinish sent", f.s.AlertFinish(f.ctx, store.AlertFinishParams{ID: as[0].ID, Owner: "w3",
			Status: store.AlertSent, Now: at(81 * time.Second), Events: []store.EventWrite{{Kind: "alert_sent", StepKey: "s"}}}))
		as, _ = f.s.AlertClaim(f.ctx, store.AlertClaimParams{Owner: "w4", Now: at(time.Hour), LeaseFor: time.Minute, Limit: 10})
		eq(t, "a sent alert is never claimed again", len(as), 0)
		list, err := f.s.AlertList(f.ctx, "r")
		noErr(t, "AlertList", err)
		eq(t, "status", list[0].Status, store.AlertSent)
		timeEq(t, "sent at", list[0].SentAt, at(81*time.Second))
		evs := kinds(f.events("r"))
		eq(t, "events", evs[len(evs)-2:], []string{"alert_failed", "alert_sent"})
		_, ok, _ = f.s.AlertNextDue(f.ctx, "")
		eq(t, "nothing pending", ok, false)
	})
}
