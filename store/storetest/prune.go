package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testPrune checks retention: RunPrune deletes whole finished run trees
// that ended before the cutoff, with every row that hangs off them, and
// never touches an unfinished run, a tree with an unfinished run, a tree
// with an open dead letter or a pending alert, or a run that ended after
// the cutoff.
func testPrune(t *testing.T, newStore func(t *testing.T) store.Store) {
	cutoff := at(time.Hour)

	parallel(t, "deletes an old finished run and its history", newStore, func(t *testing.T, f *fixture) {
		f.finished("old", "", store.RunCompleted, at(time.Minute), 3)
		f.finished("new", "", store.RunFailed, at(2*time.Hour), 1)
		f.insert(store.RunInsertParams{ID: "pending"}) // created at t0, never finished
		if _, err := f.s.SignalSend(f.ctx, store.SignalSendParams{RunID: "pending", Name: "go", Now: at(time.Second)}); err != nil {
			t.Fatalf("SignalSend: %v", err)
		}

		res := f.prune(store.RunPruneParams{Before: cutoff})
		// old: 3 steps, 3 attempts, events run_created and run_completed.
		eq(t, "pruned", res, store.PruneResult{Runs: 1, Steps: 3, Attempts: 3, Events: 2})
		f.gone("old")
		eq(t, "steps of the pruned run", len(f.steps("old")), 0)
		eq(t, "attempts of the pruned run", len(f.attempts("old", "")), 0)
		eq(t, "events of the pruned run", len(f.events("old")), 0)
		eq(t, "run that ended after the cutoff", f.get("new").Status, store.RunFailed)
		eq(t, "unfinished run", f.get("pending").Status, store.RunPending)
		eq(t, "steps of the run that stays", len(f.steps("new")), 1)

		eq(t, "a second prune", f.prune(store.RunPruneParams{Before: cutoff}), store.PruneResult{})
	})

	parallel(t, "one workflow's runs", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "a1", Workflow: "a", Events: []store.EventWrite{{Kind: "run_created"}}})
		f.end("a1", store.RunCompleted, at(time.Minute), 1)
		f.insert(store.RunInsertParams{ID: "b1", Workflow: "b", Events: []store.EventWrite{{Kind: "run_created"}}})
		f.end("b1", store.RunCompleted, at(time.Minute), 1)
		eq(t, "pruned of b", f.prune(store.RunPruneParams{Before: cutoff, Workflow: "b"}).Runs, 1)
		f.gone("b1")
		eq(t, "a's run stays", f.get("a1").Status, store.RunCompleted)
		eq(t, "none of c", f.prune(store.RunPruneParams{Before: cutoff, Workflow: "c"}).Runs, 0)
	})

	parallel(t, "dry run deletes nothing", newStore, func(t *testing.T, f *fixture) {
		f.finished("old", "", store.RunCanceled, at(time.Minute), 2)
		res := f.prune(store.RunPruneParams{Before: cutoff, DryRun: true})
		eq(t, "counted", res, store.PruneResult{Runs: 1, Steps: 2, Attempts: 2, Events: 2})
		eq(t, "run after a dry run", f.get("old").Status, store.RunCanceled)
		eq(t, "steps after a dry run", len(f.steps("old")), 2)
	})

	parallel(t, "a tree goes as a whole, once every run in it ended", newStore, func(t *testing.T, f *fixture) {
		f.finished("root", "", store.RunCompleted, at(time.Minute), 1)
		f.insert(store.RunInsertParams{ID: "child", ParentRunID: "root", ParentStepKey: "s0"})
		eq(t, "tree with a child in flight", f.prune(store.RunPruneParams{Before: cutoff}), store.PruneResult{})
		eq(t, "root of a tree in flight", f.get("root").Status, store.RunCompleted)

		f.end("child", store.RunCompleted, at(2*time.Hour), 0)
		eq(t, "tree whose child ended after the cutoff", f.prune(store.RunPruneParams{Before: cutoff}), store.PruneResult{})

		res := f.prune(store.RunPruneParams{Before: at(3 * time.Hour)})
		eq(t, "pruned runs of the tree", res.Runs, 2)
		f.gone("root")
		f.gone("child")
	})

	parallel(t, "an open dead letter keeps its tree", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "dl"})
		f.endWith("dl", store.RunCompleted, at(time.Minute), store.Transition{
			DeadLetters: []store.DeadLetterWrite{{Step: "s", StepKey: "s[0]", Index: 0, Item: []byte(`1`), Error: []byte(`{"kind":"exec","message":"boom"}`)}},
		})
		eq(t, "tree with an open dead letter", f.prune(store.RunPruneParams{Before: cutoff}), store.PruneResult{})
		eq(t, "run with an open dead letter", f.get("dl").Status, store.RunCompleted)
	})

	parallel(t, "a pending alert keeps its tree", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "al"})
		f.endWith("al", store.RunFailed, at(time.Minute), store.Transition{
			Alerts: []store.AlertWrite{{Alert: "ops", Event: "failed", Message: "boom"}},
		})
		eq(t, "tree with a pending alert", f.prune(store.RunPruneParams{Before: cutoff}), store.PruneResult{})
	})

	parallel(t, "limit bounds one call", newStore, func(t *testing.T, f *fixture) {
		for _, id := range []string{"a", "b", "c"} {
			f.finished(id, "", store.RunCompleted, at(time.Minute), 1)
		}
		eq(t, "first call", f.prune(store.RunPruneParams{Before: cutoff, Limit: 2}).Runs, 2)
		eq(t, "second call", f.prune(store.RunPruneParams{Before: cutoff, Limit: 2}).Runs, 1)
		eq(t, "third call", f.prune(store.RunPruneParams{Before: cutoff, Limit: 2}).Runs, 0)
	})

	parallel(t, "a cutoff is required", newStore, func(t *testing.T, f *fixture) {
		if _, err := f.s.RunPrune(f.ctx, store.RunPruneParams{}); err == nil {
			t.Fatal("RunPrune without a cutoff succeeded")
		}
	})
}

// finished inserts a run and ends it with status at finishedAt, with n
// completed steps, each with one attempt.
func (f *fixture) finished(id, parent string, status store.RunStatus, finishedAt time.Time, n int) {
	f.t.Helper()
	f.insert(store.RunInsertParams{ID: id, ParentRunID: parent, Events: []store.EventWrite{{Kind: "run_created"}}})
	f.end(id, status, finishedAt, n)
}

// end claims a run and ends it with status at finishedAt, writing n
// completed steps with one attempt each and an event.
func (f *fixture) end(id string, status store.RunStatus, finishedAt time.Time, n int) {
	f.t.Helper()
	var tr store.Transition
	for i := range n {
		key := string(rune('a' + i))
		tr.Steps = append(tr.Steps, store.StepWrite{Key: key, Step: key, Index: -1, Iteration: -1, Status: store.StepCompleted,
			Attempts: 1, Output: []byte(`{"v":1}`), StartedAt: finishedAt, FinishedAt: finishedAt})
		tr.Attempts = append(tr.Attempts, store.AttemptWrite{StepKey: key, Attempt: 1, Status: store.AttemptCompleted,
			Owner: "w", StartedAt: finishedAt, FinishedAt: finishedAt, Output: []byte(`{"v":1}`)})
	}
	f.endWith(id, status, finishedAt, tr)
}

// endWith claims a run and commits tr with the run's end.
func (f *fixture) endWith(id string, status store.RunStatus, finishedAt time.Time, tr store.Transition) {
	f.t.Helper()
	run := f.claimOne("w", id, finishedAt)
	tr.RunID, tr.Lease, tr.Now = id, run.Lease, finishedAt
	tr.Run = &store.RunUpdate{Status: &status, FinishedAt: &finishedAt, Release: true}
	tr.Events = append(tr.Events, store.EventWrite{Kind: "run_" + string(status)})
	if res := f.commit(tr); res.Err != nil {
		f.t.Fatalf("ending run %s: %v", id, res.Err)
	}
}

func (f *fixture) prune(p store.RunPruneParams) store.PruneResult {
	f.t.Helper()
	res, err := f.s.RunPrune(f.ctx, p)
	if err != nil {
		f.t.Fatalf("RunPrune(%+v): %v", p, err)
	}
	return res
}

// gone fails the test unless the run no longer exists.
func (f *fixture) gone(id string) {
	f.t.Helper()
	if _, err := f.s.RunGet(f.ctx, id); !errors.Is(err, store.ErrNotFound) {
		f.t.Fatalf("RunGet(%s) after prune: %v, want ErrNotFound", id, err)
	}
}
