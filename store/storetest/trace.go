package storetest

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testTrace checks that a run's trace ids are kept as given, for a run
// inserted on its own and a child run inserted by a transition, and that
// RunQueue counts what a claim could take.
func testTrace(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "run trace", newStore, func(t *testing.T, f *fixture) {
		tr := store.Trace{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}
		r := f.insert(store.RunInsertParams{ID: "tr", Trace: tr})
		for _, got := range []store.Run{r, f.get("tr"), f.claimOne("w", "tr", at(time.Second))} {
			eq(t, "trace", got.Trace, tr)
		}
		child := store.Trace{TraceID: tr.TraceID, SpanID: "b7ad6b7169203331", ParentSpanID: tr.SpanID}
		f.commit(store.Transition{RunID: "tr", Lease: f.get("tr").Lease, Children: []store.RunInsertParams{{ID: "tr-child", Workflow: "wf",
			Version: "1.0.0", GraphHash: "h1", Now: at(2 * time.Second), ParentRunID: "tr", ParentStepKey: "c", Trace: child}},
			Now: at(2 * time.Second)})
		eq(t, "trace of a child inserted by a transition", f.get("tr-child").Trace, child)
		eq(t, "trace of a run inserted without one", f.insert(store.RunInsertParams{ID: "notrace"}).Trace, store.Trace{})
	})

	parallel(t, "run queue", newStore, func(t *testing.T, f *fixture) {
		q, err := f.s.RunQueue(f.ctx, at(0))
		noErr(t, "RunQueue of an empty store", err)
		eq(t, "due of an empty store", q, store.QueueStats{})
		f.insert(store.RunInsertParams{ID: "a", Now: at(0)})
		f.insert(store.RunInsertParams{ID: "b", Now: at(0), AvailableAt: at(2 * time.Second)})
		f.insert(store.RunInsertParams{ID: "c", Now: at(0), AvailableAt: at(time.Hour)})
		f.insert(store.RunInsertParams{ID: "leased", Now: at(0)})
		f.claimOne("w", "leased", at(time.Second)) // leased for a minute from 1s
		q, err = f.s.RunQueue(f.ctx, at(3*time.Second))
		noErr(t, "RunQueue", err)
		eq(t, "due at 3s (a and b; c later, leased held)", q.Due, 2)
		timeEq(t, "oldest due", q.Oldest, at(0))
		q, err = f.s.RunQueue(f.ctx, at(2*time.Hour))
		noErr(t, "RunQueue", err)
		eq(t, "due at 2h (the lease expired)", q.Due, 4)

	})

	// A run whose worker is gone is due since its lease expired, not since
	// it became available: a run that ran for an hour is not an hour late
	// the moment its lease lapses (flowrun_oldest_due_run_age_seconds).
	parallel(t, "run queue of an expired lease", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "held", Now: at(0)})
		held := f.claimOne("w", "held", at(time.Second))
		q, err := f.s.RunQueue(f.ctx, at(2*time.Hour))
		noErr(t, "RunQueue", err)
		eq(t, "due at 2h (the lease expired)", q.Due, 1)
		timeEq(t, "oldest due of a run whose lease expired", q.Oldest, held.LeaseExpiresAt)
	})
}
