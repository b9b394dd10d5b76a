package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testItemOutputs: a foreach step's row written with store.ItemOutputs
// reads, through StepList and StepGet, as the JSON list of its item keys'
// outputs in index order (10 after 9), each as stored, null for an item
// that did not complete or completed without an output; its until
// iterations, another step's items and another run's are not part of it.
func testItemOutputs(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "a foreach row written with ItemOutputs reads as its items' outputs", newStore, func(t *testing.T, f *fixture) {
		for _, id := range []string{"r", "other"} {
			f.insert(store.RunInsertParams{ID: id})
		}
		cur := f.claimOne("w", "r", at(0))
		item := func(i, iter int, status store.StepStatus, out string) store.StepWrite {
			w := store.StepWrite{Key: store.StepKey("each", i, iter), Step: "each", Index: i, Iteration: iter, Status: status}
			if out != "" {
				w.Output = json.RawMessage(out)
			}
			return w
		}
		var first, second []store.StepWrite
		want := "["
		for i := range 12 {
			if i > 0 {
				want += ","
			}
			out := fmt.Sprintf(`{"v": %d}`, i)
			status := store.StepCompleted
			switch i {
			case 3:
				status = store.StepFailed // its last attempt's output stays on the row
				want += "null"
			case 5:
				status, out = store.StepSkipped, ""
				want += "null"
			case 7:
				out = "" // completed without an output
				want += "null"
			default:
				want += out
			}
			w := item(i, -1, status, out)
			if i < 6 {
				first = append(first, w)
			} else {
				second = append(second, w)
			}
		}
		want += "]"
		first = append(first,
			item(1, 0, store.StepCompleted, `"iteration"`),
			store.StepWrite{Key: "other[0]", Step: "other", Index: 0, Iteration: -1, Status: store.StepCompleted, Output: json.RawMessage(`"another step"`)},
			store.StepWrite{Key: "each", Step: "each", Index: -1, Iteration: -1, Status: store.StepRunning})
		noErr(t, "items", f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(time.Second), Steps: first}).Err)
		second = append(second, store.StepWrite{Key: "each", Step: "each", Index: -1, Iteration: -1,
			Status: store.StepCompleted, Output: store.ItemOutputs})
		noErr(t, "the step", f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(2 * time.Second), Steps: second}).Err)
		oth := f.claimOne("w", "other", at(3*time.Second))
		noErr(t, "another run's item", f.commit(store.Transition{RunID: "other", Lease: oth.Lease, Now: at(3 * time.Second),
			Steps: []store.StepWrite{item(12, -1, store.StepCompleted, `"another run"`)}}).Err)

		row, err := f.s.StepGet(f.ctx, "r", "each")
		noErr(t, "StepGet", err)
		eq(t, "StepGet output", string(row.Output), want)
		eq(t, "StepGet status", row.Status, store.StepCompleted)
		found := false
		for _, s := range f.steps("r") {
			switch s.Key {
			case "each":
				found = true
				eq(t, "StepList output", string(s.Output), want)
			case "each[4]":
				eq(t, "an item's own output", string(s.Output), `{"v": 4}`)
			}
		}
		eq(t, "StepList holds the step", found, true)
	})

	parallel(t, "a foreach row written with ItemOutputs and no items reads as an empty list", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		cur := f.claimOne("w", "r", at(0))
		noErr(t, "the step", f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(time.Second),
			Steps: []store.StepWrite{{Key: "each", Step: "each", Index: -1, Iteration: -1, Status: store.StepCompleted, Output: store.ItemOutputs}}}).Err)
		row, err := f.s.StepGet(f.ctx, "r", "each")
		noErr(t, "StepGet", err)
		eq(t, "StepGet output", string(row.Output), "[]")
	})
}
