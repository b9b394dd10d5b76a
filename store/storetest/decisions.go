package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testDecisions covers what a version decision for a blocked run needs of
// the store (spec/versioning.md §5): the decision is a compare-and-set on
// the run's status, version and graph hash (Transition.Expect), so two
// people deciding at once cannot both win; and the "new" decision ends the
// old run and creates its replacement (Transition.Runs) in one commit, so
// a failure between the two parts leaves neither.
func testDecisions(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "a decision applies only while the run is still blocked on its version", newStore, func(t *testing.T, f *fixture) {
		f.blocked("r")
		f.insert(store.RunInsertParams{ID: "other"})
		before := f.get("r")
		evs := len(f.events("r"))

		// Expecting another version (the run changed since it was looked
		// at) writes nothing, and does not fail the rest of the batch.
		stale := f.decision("r", "old", at(time.Minute))
		stale.Expect.Version = "0.9.0"
		pending := store.RunPending
		res, err := f.s.TransitionCommit(f.ctx, []store.Transition{stale,
			{RunID: "other", Now: at(time.Minute), Run: &store.RunUpdate{Status: &pending},
				Events: []store.EventWrite{{Kind: "touched"}}}})
		noErr(t, "batch with a stale decision", err)
		isErr(t, "stale decision", res[0].Err, store.ErrConflict)
		eq(t, "event ids of a refused decision", len(res[0].EventIDs), 0)
		noErr(t, "other transition of the batch", res[1].Err)
		eq(t, "run after a refused decision", f.get("r"), before)
		eq(t, "events after a refused decision", len(f.events("r")), evs)

		// The first decision at the expected version applies ...
		res1 := f.commit(f.decision("r", "old", at(2*time.Minute)))
		noErr(t, "first decision", res1.Err)
		eq(t, "status after the first decision", f.get("r").Status, store.RunPending)
		// ... and a second one, made from the same look at the run, loses.
		after := f.get("r")
		res2 := f.commit(f.decision("r", "migrate", at(3*time.Minute)))
		isErr(t, "second decision", res2.Err, store.ErrConflict)
		eq(t, "run after the second decision", f.get("r"), after)
		eq(t, "version_decided events", count(f.events("r"), "version_decided"), 1)
	})

	parallel(t, "a decision cancels run trees in its commit, as RunCancel does", newStore, func(t *testing.T, f *fixture) {
		f.blocked("r")
		f.insert(store.RunInsertParams{ID: "free", ParentRunID: "r", ParentStepKey: "a", RootRunID: "r"})
		f.insert(store.RunInsertParams{ID: "free.kid", ParentRunID: "free", ParentStepKey: "b", RootRunID: "r"})
		f.insert(store.RunInsertParams{ID: "held", ParentRunID: "r", ParentStepKey: "c", RootRunID: "r"})
		f.insert(store.RunInsertParams{ID: "done", ParentRunID: "r", ParentStepKey: "d", RootRunID: "r"})
		held := f.claimOne("w", "held", at(50*time.Second)) // leased past the decision
		f.end("done", store.RunCompleted, at(time.Second), 0)
		tr := f.replace("r", "r2", at(time.Minute))
		tr.CancelTrees = []string{"free", "held", "done"}
		noErr(t, "decision new", f.commit(tr).Err)
		for _, id := range []string{"free", "free.kid"} {
			r := f.get(id)
			eq(t, id+" status", r.Status, store.RunCanceled)
			timeEq(t, id+" finished", r.FinishedAt, at(time.Minute))
			eq(t, id+" last event", kinds(f.events(id))[len(f.events(id))-1], "run_canceled")
		}
		h := f.get("held")
		eq(t, "held status", h.Status, store.RunRunning)
		eq(t, "held cancel requested", h.CancelRequested, true)
		eq(t, "held lease", h.Lease, held.Lease)
		eq(t, "finished child", f.get("done").Status, store.RunCompleted)
	})

	parallel(t, "concurrent decisions: exactly one wins", newStore, func(t *testing.T, f *fixture) {
		f.blocked("r")
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		batchErrs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := f.s.TransitionCommit(f.ctx, []store.Transition{f.decision("r", "old", at(time.Minute))})
				batchErrs[i] = err
				if err == nil {
					errs[i] = res[0].Err
				}
			}()
		}
		wg.Wait()
		won := 0
		for i := range n {
			noErr(t, "batch of a concurrent decision", batchErrs[i])
			if errs[i] == nil {
				won++
				continue
			}
			isErr(t, "losing decision", errs[i], store.ErrConflict)
		}
		eq(t, "decisions that won", won, 1)
		eq(t, "version_decided events", count(f.events("r"), "version_decided"), 1)
	})

	parallel(t, "decided new: the replacement is created in the decision's commit", newStore, func(t *testing.T, f *fixture) {
		f.blocked("r")
		res := f.commit(f.replace("r", "r2", at(time.Minute)))
		noErr(t, "decision new", res.Err)
		old := f.get("r")
		eq(t, "old run status", old.Status, store.RunCanceled)
		timeEq(t, "old run finished", old.FinishedAt, at(time.Minute))
		nr := f.get("r2")
		eq(t, "replacement status", nr.Status, store.RunPending)
		eq(t, "replacement version", nr.Version, "2.0.0")
		eq(t, "replacement key", nr.Key, "k")
		eq(t, "replacement parent", nr.ParentRunID, "")
		eq(t, "replacement root", nr.RootRunID, "r2")
		timeEq(t, "replacement created", nr.CreatedAt, at(time.Minute))
		eq(t, "replacement events", kinds(f.events("r2")), []string{"run_created", "version_decided"})
		eq(t, "old run's last events", kinds(f.events("r"))[len(f.events("r"))-2:], []string{"version_decided", "run_canceled"})

		// A second "new" decision from the same look loses and creates no
		// second replacement.
		res = f.commit(f.replace("r", "r3", at(2*time.Minute)))
		isErr(t, "second decision new", res.Err, store.ErrConflict)
		_, err := f.s.RunGet(f.ctx, "r3")
		isErr(t, "replacement of a lost decision", err, store.ErrNotFound)
	})

	// Crash safety of "new": a failure at any point of the commit (here
	// injected after the old run was ended and its events appended, as the
	// replacement is created; and after the replacement was created) rolls
	// the whole decision back. A crash of the process is the same case: the
	// transaction never commits, so the database holds the run blocked and
	// no replacement, never two live runs or a canceled run with none.
	parallel(t, "decided new: a failure inside the commit leaves nothing half-done", newStore, func(t *testing.T, f *fixture) {
		f.blocked("r")
		f.insert(store.RunInsertParams{ID: "taken"})
		// The old run has a child run, canceled in the decision's commit.
		f.insert(store.RunInsertParams{ID: "r.child", ParentRunID: "r", ParentStepKey: "ship", RootRunID: "r"})
		replace := func(newID string) store.Transition {
			tr := f.replace("r", newID, at(time.Minute))
			tr.CancelTrees = []string{"r.child"}
			return tr
		}
		before, child := f.get("r"), f.get("r.child")
		evs := len(f.events("r"))
		check := func(what string) {
			t.Helper()
			eq(t, what+": old run", f.get("r"), before)
			eq(t, what+": old run's child", f.get("r.child"), child)
			eq(t, what+": old run's events", len(f.events("r")), evs)
			_, err := f.s.RunGet(f.ctx, "r2")
			isErr(t, what+": replacement", err, store.ErrNotFound)
			live, err := f.s.RunList(f.ctx, store.RunListParams{Workflow: "wf"})
			noErr(t, what+": RunList", err)
			eq(t, what+": runs of the workflow", len(live), 3)
		}

		// The replacement cannot be created (its id is taken): the old
		// run's update, written first in the transaction, is undone.
		tr := replace("taken")
		_, err := f.s.TransitionCommit(f.ctx, []store.Transition{tr})
		isErr(t, "decision whose replacement fails", err, store.ErrConflict)
		check("replacement insert failed")

		// The replacement is created, then a later part of the same commit
		// fails (a signal that is not the run's): the replacement is gone
		// with the rest.
		tr = replace("r2")
		tr.ConsumeSignals = []store.SignalConsume{{SignalID: 1 << 40, StepKey: "ask"}}
		_, err = f.s.TransitionCommit(f.ctx, []store.Transition{tr})
		isErr(t, "decision failing after the replacement", err, store.ErrConflict)
		check("failure after the replacement")

		// With nothing injected the same decision applies whole.
		noErr(t, "decision new", f.commit(replace("r2")).Err)
		eq(t, "old run", f.get("r").Status, store.RunCanceled)
		eq(t, "old run's child", f.get("r.child").Status, store.RunCanceled)
		eq(t, "replacement", f.get("r2").Status, store.RunPending)
	})
}

// blocked creates a run of wf 1.0.0 (graph h1, key "k") blocked on a
// version decision, with a waiting step, as the engine leaves it.
func (f *fixture) blocked(id string) {
	f.t.Helper()
	f.insert(store.RunInsertParams{ID: id, Key: "k"})
	cur := f.claimOne("w", id, at(0))
	st := store.RunBlocked
	res := f.commit(store.Transition{RunID: id, Lease: cur.Lease, Now: at(time.Second),
		Run:    &store.RunUpdate{Status: &st, WaitReason: ptr("version"), Release: true},
		Steps:  []store.StepWrite{{Key: "ask", Step: "ask", Index: -1, Iteration: -1, Status: store.StepWaiting, Detail: "signal go"}},
		Events: []store.EventWrite{{Kind: "version_blocked"}}})
	noErr(f.t, "block run "+id, res.Err)
}

// decision is a version decision "old" or "migrate" for a blocked run,
// made from a look at the run bound to 1.0.0 (graph h1).
func (f *fixture) decision(id, choice string, now time.Time) store.Transition {
	pending := store.RunPending
	u := &store.RunUpdate{Status: &pending, WaitReason: ptr(""), AvailableAt: &now}
	if choice == "migrate" {
		u.Version, u.GraphHash = ptr("2.0.0"), ptr("h2")
	}
	return store.Transition{RunID: id, Now: now,
		Expect: &store.RunExpect{Status: store.RunBlocked, Version: "1.0.0", GraphHash: "h1"},
		Run:    u,
		Events: []store.EventWrite{{Kind: "version_decided", Data: mustJSON(map[string]any{"choice": choice})}}}
}

// replace is the decision "new" for a blocked run: the run canceled with
// its waiting step, and the replacement newID of 2.0.0 created, in one
// transition.
func (f *fixture) replace(id, newID string, now time.Time) store.Transition {
	canceled := store.RunCanceled
	return store.Transition{RunID: id, Now: now,
		Expect: &store.RunExpect{Status: store.RunBlocked, Version: "1.0.0", GraphHash: "h1"},
		Run: &store.RunUpdate{Status: &canceled, WaitReason: ptr(""), FinishedAt: &now, ClearCancel: true,
			Error: mustJSON(map[string]any{"kind": "canceled", "message": "replaced by run " + newID})},
		Steps: []store.StepWrite{{Key: "ask", Step: "ask", Index: -1, Iteration: -1, Status: store.StepCanceled, FinishedAt: now}},
		Events: []store.EventWrite{
			{Kind: "version_decided", Data: mustJSON(map[string]any{"choice": "new", "new_run_id": newID})},
			{Kind: "run_canceled"}},
		Runs: []store.RunInsertParams{{ID: newID, Workflow: "wf", Version: "2.0.0", GraphHash: "h2", Key: "k",
			Inputs: []byte(`{"a":1}`), AvailableAt: now,
			Events: []store.EventWrite{{Kind: "run_created"}, {Kind: "version_decided", Data: mustJSON(map[string]any{"replaces": id})}}}},
	}
}

func count(evs []store.Event, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
