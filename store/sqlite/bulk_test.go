package sqlite_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// TestBulkStepsAndEvents: a transition with several steps and events
// (written with one statement each) stores exactly what the same writes
// store one at a time (a transition of one step and one event): JSON
// strings, numbers, objects and nulls, optional texts and times, the
// first start kept on update, and events in order with increasing ids.
func TestBulkStepsAndEvents(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	writes := []store.StepWrite{
		{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1,
			Output: json.RawMessage(`"just a string"`), StartedAt: t0, FinishedAt: t0.Add(time.Second)},
		{Key: "b[2]", Step: "b", Index: 2, Iteration: -1, Status: store.StepWaiting, Attempts: 2,
			Error: json.RawMessage(`{"kind":"exec","message":"é \"quoted\" \\ back"}`), StartedAt: t0,
			WakeAt: t0.Add(time.Hour), Detail: "retry 2/4", State: json.RawMessage(`{"wait":"retry","delay_ms":1000}`)},
		{Key: "c", Step: "c", Index: -1, Iteration: 3, Status: store.StepRunning, Attempts: 0,
			Output: json.RawMessage(`12345678901234`)},
		{Key: "d", Step: "d", Index: -1, Iteration: -1, Status: store.StepPending, Output: json.RawMessage(`null`)},
	}
	events := []store.EventWrite{
		{Kind: "step_completed", StepKey: "a", Data: json.RawMessage(`{"attempts":1}`)},
		{Kind: "retry_scheduled", StepKey: "b[2]", Data: json.RawMessage(`"text"`)},
		{Kind: "run_note"},
		{Kind: "step_started", StepKey: "c", Data: json.RawMessage(`[1,2,{"x":null}]`)},
	}
	write := func(s *sqlite.Store, id string, batches [][]store.StepWrite, evs [][]store.EventWrite) ([]store.Step, []store.Event) {
		t.Helper()
		if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: id, Now: t0, AvailableAt: t0}); err != nil {
			t.Fatal(err)
		}
		rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Minute, RunID: id})
		if err != nil || len(rs) != 1 {
			t.Fatalf("claim %s: %v %v", id, rs, err)
		}
		for i := range batches {
			res, err := s.TransitionCommit(ctx, []store.Transition{{RunID: id, Lease: rs[0].Lease, Now: t0, Steps: batches[i], Events: evs[i]}})
			if err != nil || res[0].Err != nil {
				t.Fatalf("commit %s: %v %v", id, err, res)
			}
			if len(res[0].EventIDs) != len(evs[i]) {
				t.Fatalf("commit %s: %d event ids for %d events", id, len(res[0].EventIDs), len(evs[i]))
			}
		}
		steps, err := s.StepList(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.EventList(ctx, store.EventListParams{RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		return steps, all
	}
	s := openTemp(t, sqlite.Options{})
	// Bulk: everything in one transition; then an update of a and b[2] in
	// bulk again, which keeps their first start.
	upd := []store.StepWrite{writes[0], writes[1]}
	upd[0].StartedAt, upd[1].StartedAt = time.Time{}, time.Time{}
	upd[1].Status, upd[1].Detail, upd[1].WakeAt = store.StepCompleted, "", time.Time{}
	bulkSteps, bulkEvents := write(s, "bulk", [][]store.StepWrite{writes, upd}, [][]store.EventWrite{events, events[:2]})
	// One at a time: the same writes, one per transition.
	var single [][]store.StepWrite
	var singleEv [][]store.EventWrite
	for i, w := range append(append([]store.StepWrite{}, writes...), upd...) {
		single = append(single, []store.StepWrite{w})
		all := append(append([]store.EventWrite{}, events...), events[:2]...)
		singleEv = append(singleEv, []store.EventWrite{all[i]})
	}
	oneSteps, oneEvents := write(s, "one", single, singleEv)
	for i := range bulkSteps {
		bulkSteps[i].RunID, oneSteps[i].RunID = "", ""
	}
	if !reflect.DeepEqual(bulkSteps, oneSteps) {
		t.Errorf("steps written in bulk:\n%+v\none at a time:\n%+v", bulkSteps, oneSteps)
	}
	if len(bulkEvents) != len(oneEvents) {
		t.Fatalf("%d events in bulk, %d one at a time", len(bulkEvents), len(oneEvents))
	}
	for i := range bulkEvents {
		b, o := bulkEvents[i], oneEvents[i]
		if b.Kind != o.Kind || b.StepKey != o.StepKey || string(b.Data) != string(o.Data) || !b.At.Equal(o.At) {
			t.Errorf("event %d: bulk %+v, one at a time %+v", i, b, o)
		}
		if i > 0 && b.ID <= bulkEvents[i-1].ID {
			t.Errorf("event ids not increasing in order: %d after %d", b.ID, bulkEvents[i-1].ID)
		}
	}
	if bulkSteps[0].Key != "a" || !bulkSteps[0].StartedAt.Equal(t0) || bulkSteps[1].Status != store.StepCompleted {
		t.Errorf("updated steps = %+v, want a's first start kept and b[2] completed", bulkSteps[:2])
	}
}
