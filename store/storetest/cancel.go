package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testCancel(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "unleased run ends at once", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second),
			Run: &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), WaitReason: ptr("signal:approve"), Release: true},
			Steps: []store.StepWrite{
				{Key: "done", Step: "done", Index: -1, Iteration: -1, Status: store.StepCompleted},
				{Key: "gate", Step: "gate", Index: -1, Iteration: -1, Status: store.StepWaiting, WakeAt: at(time.Hour)},
				{Key: "later", Step: "later", Index: -1, Iteration: -1, Status: store.StepPending},
			},
			Attempts: []store.AttemptWrite{
				{StepKey: "done", Attempt: 1, Status: store.AttemptCompleted},
				{StepKey: "x", Attempt: 1, Status: store.AttemptRunning},
			}})
		got, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r", Now: at(time.Minute)})
		noErr(t, "RunCancel", err)
		eq(t, "status", got.Status, store.RunCanceled)
		eq(t, "cancel requested", got.CancelRequested, true)
		timeEq(t, "finished", got.FinishedAt, at(time.Minute))
		jsonEq(t, "error", got.Error, []byte(`{"kind":"canceled","message":"canceled by request","step":""}`))
		eq(t, "no owner", got.Lease.Owner, "")
		if got.Lease.Epoch <= r.Lease.Epoch {
			t.Fatalf("epoch %d after an at-once cancel, want more than %d (fences a stale holder)", got.Lease.Epoch, r.Lease.Epoch)
		}
		eq(t, "wait reason cleared", got.WaitReason, "")
		eq(t, "stored", f.get("r"), got)
		status := map[string]store.StepStatus{}
		for _, s := range f.steps("r") {
			status[s.Key] = s.Status
		}
		eq(t, "steps", status, map[string]store.StepStatus{"done": store.StepCompleted, "gate": store.StepCanceled, "later": store.StepCanceled})
		as := f.attempts("r", "")
		eq(t, "attempts", [2]store.AttemptStatus{as[0].Status, as[1].Status}, [2]store.AttemptStatus{store.AttemptCompleted, store.AttemptCanceled})
		timeEq(t, "canceled attempt finished", as[1].FinishedAt, at(time.Minute))
		evs := f.events("r")
		eq(t, "last event", evs[len(evs)-1].Kind, "run_canceled")

		_, err = f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r", Now: at(2 * time.Minute)})
		isErr(t, "cancel of a finished run", err, store.ErrConflict)
		_, err = f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "nope", Now: at(2 * time.Minute)})
		isErr(t, "cancel of an unknown run", err, store.ErrNotFound)
	})

	parallel(t, "a kept unleased run is flagged and due, its children end", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second),
			Run:   &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), WaitReason: ptr("signal:approve"), Release: true},
			Steps: []store.StepWrite{{Key: "gate", Step: "gate", Index: -1, Iteration: -1, Status: store.StepWaiting, WakeAt: at(time.Hour)}}})
		f.insert(store.RunInsertParams{ID: "kid", ParentRunID: "r", ParentStepKey: "gate"})
		got, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r", Now: at(time.Minute), Keep: []string{"r"}})
		noErr(t, "RunCancel", err)
		eq(t, "status", got.Status, store.RunWaiting)
		eq(t, "cancel requested", got.CancelRequested, true)
		timeEq(t, "due now", got.AvailableAt, at(time.Minute))
		eq(t, "the child ended", f.get("kid").Status, store.RunCanceled)
		eq(t, "its steps untouched", f.steps("r")[0].Status, store.StepWaiting)
	})

	parallel(t, "a kept descendant is flagged and due, the rest of the tree ends", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		f.insert(store.RunInsertParams{ID: "kid", ParentRunID: "r", ParentStepKey: "a"})
		f.insert(store.RunInsertParams{ID: "kid2", ParentRunID: "r", ParentStepKey: "b"})
		f.insert(store.RunInsertParams{ID: "grandkid", ParentRunID: "kid", ParentStepKey: "c"})
		got, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r", Now: at(time.Minute), Keep: []string{"kid"}})
		noErr(t, "RunCancel", err)
		eq(t, "the run ended", got.Status, store.RunCanceled)
		kid := f.get("kid")
		eq(t, "the kept child unfinished", kid.Status, store.RunPending)
		eq(t, "its cancel requested", kid.CancelRequested, true)
		eq(t, "due", kid.AvailableAt.After(at(time.Minute)), false)
		eq(t, "the other child ended", f.get("kid2").Status, store.RunCanceled)
		eq(t, "the kept child's own child ended", f.get("grandkid").Status, store.RunCanceled)
	})

	parallel(t, "leased run is flagged", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		got, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r", Now: at(time.Second)})
		noErr(t, "RunCancel", err)
		eq(t, "still running", got.Status, store.RunRunning)
		eq(t, "flagged", got.CancelRequested, true)
		eq(t, "lease kept", got.Lease, r.Lease)
		evs := f.events("r")
		eq(t, "no canceled event yet", len(evs) == 0 || evs[len(evs)-1].Kind != "run_canceled", true)

		// The worker parks it without having seen the flag: due at once.
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(2 * time.Second),
			Run: &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), Release: true}})
		timeEq(t, "park of a run with a cancel pending", f.get("r").AvailableAt, at(2*time.Second))

		// The worker carries the cancel out and clears the flag.
		r = f.claimOne("w", "r", at(3*time.Second))
		eq(t, "claimed run shows the request", r.CancelRequested, true)
		canceled := store.RunCanceled
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(4 * time.Second),
			Run: &store.RunUpdate{Status: &canceled, FinishedAt: ptr(at(4 * time.Second)), ClearCancel: true, Release: true}})
		got = f.get("r")
		eq(t, "canceled by the worker", [2]any{got.Status, got.CancelRequested}, [2]any{store.RunCanceled, false})
	})

	parallel(t, "expired lease counts as unleased", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		got, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r", Now: at(time.Hour)})
		noErr(t, "RunCancel", err)
		eq(t, "status", got.Status, store.RunCanceled)
		res := f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Hour), Run: &store.RunUpdate{AttemptsUsed: ptr(9)}})
		isErr(t, "the old holder's write", res.Err, store.ErrLeaseLost)
	})

	parallel(t, "descendants", newStore, func(t *testing.T, f *fixture) {
		// root ─ a (leased) ─ a1
		//      └ b (finished)
		// other (unrelated)
		f.insert(store.RunInsertParams{ID: "root"})
		f.insert(store.RunInsertParams{ID: "a", ParentRunID: "root"})
		f.insert(store.RunInsertParams{ID: "a1", ParentRunID: "a"})
		f.insert(store.RunInsertParams{ID: "b", ParentRunID: "root"})
		f.insert(store.RunInsertParams{ID: "other"})
		a := f.claimOne("w", "a", at(0))
		b := f.claimOne("w", "b", at(0))
		done := store.RunCompleted
		f.commit(store.Transition{RunID: "b", Lease: b.Lease, Now: at(0), Run: &store.RunUpdate{Status: &done, Release: true}})

		_, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "root", Now: at(time.Second)})
		noErr(t, "RunCancel", err)
		want := map[string]string{"root": "canceled true", "a": "running true", "a1": "canceled true", "b": "completed false", "other": "pending false"}
		for id, w := range want {
			r := f.get(id)
			eq(t, id, fmt.Sprintf("%s %v", r.Status, r.CancelRequested), w)
		}
		eq(t, "a keeps its lease", f.get("a").Lease, a.Lease)
	})

	parallel(t, "canceling a child wakes its waiting parent", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "p"})
		f.insert(store.RunInsertParams{ID: "c", ParentRunID: "p"})
		p := f.claimOne("w", "p", at(0))
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "p", Lease: p.Lease, Now: at(0),
			Run: &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), WaitReason: ptr("child"), Release: true}})
		_, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "c", Now: at(time.Minute)})
		noErr(t, "RunCancel", err)
		eq(t, "child", f.get("c").Status, store.RunCanceled)
		got := f.get("p")
		eq(t, "parent not canceled", [2]any{got.Status, got.CancelRequested}, [2]any{store.RunWaiting, false})
		timeEq(t, "parent woken", got.AvailableAt, at(time.Minute))
	})
}

func testSignals(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "send wakes a waiting run", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second),
			Run: &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), WaitReason: ptr("signal:approve"), Release: true}})
		g, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "r", Name: "approve", Payload: []byte(`{"by":"ann"}`), Now: at(time.Minute)})
		noErr(t, "SignalSend", err)
		eq(t, "signal", [3]string{g.RunID, g.Name, g.ConsumedBy}, [3]string{"r", "approve", ""})
		jsonEq(t, "payload", g.Payload, []byte(`{"by":"ann"}`))
		timeEq(t, "created", g.CreatedAt, at(time.Minute))
		if g.ID <= 0 {
			t.Fatalf("signal id %d, want > 0", g.ID)
		}
		timeEq(t, "woken", f.get("r").AvailableAt, at(time.Minute))
		evs := f.events("r")
		last := evs[len(evs)-1]
		eq(t, "event", last.Kind, "signal_received")
		jsonEq(t, "event data", last.Data, mustJSON(map[string]any{"name": "approve", "signal_id": g.ID}))
		gs, err := f.s.SignalList(f.ctx, "r", true)
		noErr(t, "SignalList", err)
		eq(t, "pending", len(gs), 1)
		eq(t, "listed", gs[0], g)
	})

	parallel(t, "a signal without a name is refused and nothing is written", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		before := len(f.events("r"))
		_, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "r", Now: at(time.Second)})
		if err == nil || !strings.Contains(err.Error(), "no name") {
			t.Fatalf("SignalSend without a name: %v, want the refusal", err)
		}
		gs, err := f.s.SignalList(f.ctx, "r", false)
		noErr(t, "SignalList", err)
		eq(t, "signals", len(gs), 0)
		eq(t, "events", len(f.events("r")), before)
	})

	parallel(t, "send while held makes the next park due", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		_, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "r", Name: "approve", Now: at(time.Second)})
		noErr(t, "SignalSend", err)
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(2 * time.Second),
			Run: &store.RunUpdate{Status: &waiting, AvailableAt: ptr(at(time.Hour)), Release: true}})
		timeEq(t, "available", f.get("r").AvailableAt, at(2*time.Second))
	})

	parallel(t, "unknown and finished runs", newStore, func(t *testing.T, f *fixture) {
		_, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "nope", Name: "x", Now: at(0)})
		isErr(t, "signal to an unknown run", err, store.ErrNotFound)
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		done := store.RunCompleted
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(0), Run: &store.RunUpdate{Status: &done, Release: true}})
		_, err = f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "r", Name: "x", Now: at(0)})
		isErr(t, "signal to a finished run", err, store.ErrConflict)
		gs, err := f.s.SignalList(f.ctx, "r", false)
		noErr(t, "SignalList", err)
		eq(t, "signals", len(gs), 0)
	})
}

func testEvents(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "paging", newStore, func(t *testing.T, f *fixture) {
		var evs []store.EventWrite
		for i := range 5 {
			evs = append(evs, store.EventWrite{Kind: fmt.Sprintf("e%d", i), StepKey: "s", Data: []byte(`{"i":` + fmt.Sprint(i) + `}`)})
		}
		f.insert(store.RunInsertParams{ID: "a", Events: evs[:3]})
		f.insert(store.RunInsertParams{ID: "b", Events: evs[3:]})
		all, err := f.s.EventList(f.ctx, store.EventListParams{})
		noErr(t, "EventList", err)
		eq(t, "all", kinds(all), []string{"e0", "e1", "e2", "e3", "e4"})
		eq(t, "run id and step key", all[3].RunID+" "+all[3].StepKey, "b s")
		jsonEq(t, "data", all[4].Data, []byte(`{"i":4}`))
		page, err := f.s.EventList(f.ctx, store.EventListParams{AfterID: all[1].ID, Limit: 2})
		noErr(t, "EventList", err)
		eq(t, "page", kinds(page), []string{"e2", "e3"})
		ofA, err := f.s.EventList(f.ctx, store.EventListParams{RunID: "a", AfterID: all[0].ID})
		noErr(t, "EventList", err)
		eq(t, "of a after the first", kinds(ofA), []string{"e1", "e2"})
		none, err := f.s.EventList(f.ctx, store.EventListParams{AfterID: all[4].ID})
		noErr(t, "EventList", err)
		eq(t, "after the last", len(none), 0)
	})
}
