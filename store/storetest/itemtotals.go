package storetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testItemTotals: a run's view folded by step reads its steps' own rows and
// until iterations (StepTops, in StepList's order, a foreach step's output
// not assembled from its items), the counts and summed attempts of its
// items by step and status (StepItemTotals) and pages of one step's items
// by index (StepItems, one status or all, from an index, up to a limit);
// none of them reads another step's items (a step named with the first's
// name as prefix among them), an item's iterations or another run's rows.
func testItemTotals(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "a run's steps folded: tops, item totals, item pages", newStore, func(t *testing.T, f *fixture) {
		for _, id := range []string{"r", "other"} {
			f.insert(store.RunInsertParams{ID: id})
		}
		cur := f.claimOne("w", "r", at(0))
		item := func(step string, i int, status store.StepStatus, attempts int) store.StepWrite {
			return store.StepWrite{Key: store.StepKey(step, i, -1), Step: step, Index: i, Iteration: -1, Status: status,
				Attempts: attempts, Output: json.RawMessage(`{"i":1}`), Error: errFor(status)}
		}
		var ws []store.StepWrite
		ws = append(ws, store.StepWrite{Key: "a", Step: "a", Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1,
			Output: json.RawMessage(`{"v":1}`), StartedAt: at(0), FinishedAt: at(time.Second)})
		// each: items 0..11 (written out of order), 3 and 10 and 11 failed
		// with 3 attempts, 5 skipped, 7 running, the rest completed.
		for _, i := range []int{11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10} {
			switch i {
			case 3, 10, 11:
				ws = append(ws, item("each", i, store.StepFailed, 3))
			case 5:
				ws = append(ws, item("each", i, store.StepSkipped, 0))
			case 7:
				ws = append(ws, item("each", i, store.StepRunning, 1))
			default:
				ws = append(ws, item("each", i, store.StepCompleted, 1))
			}
		}
		ws = append(ws,
			store.StepWrite{Key: store.StepKey("each", 2, 0), Step: "each", Index: 2, Iteration: 0, Status: store.StepFailed, Attempts: 9},
			item("eachx", 0, store.StepFailed, 2),
			store.StepWrite{Key: "each", Step: "each", Index: -1, Iteration: -1, Status: store.StepFailed, Attempts: 0, Output: store.ItemOutputs},
			store.StepWrite{Key: "loop#0", Step: "loop", Index: -1, Iteration: 0, Status: store.StepCompleted, Attempts: 1},
			store.StepWrite{Key: "loop#1", Step: "loop", Index: -1, Iteration: 1, Status: store.StepCompleted, Attempts: 1},
			store.StepWrite{Key: "loop", Step: "loop", Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 2})
		noErr(t, "steps", f.commit(store.Transition{RunID: "r", Lease: cur.Lease, Now: at(time.Second), Steps: ws}).Err)
		oth := f.claimOne("w", "other", at(2*time.Second))
		noErr(t, "another run's items", f.commit(store.Transition{RunID: "other", Lease: oth.Lease, Now: at(2 * time.Second),
			Steps: []store.StepWrite{item("each", 0, store.StepFailed, 5), item("each", 12, store.StepFailed, 5)}}).Err)

		tops, err := f.s.StepTops(f.ctx, "r")
		noErr(t, "StepTops", err)
		var keys []string
		for _, s := range tops {
			keys = append(keys, s.Key)
		}
		// StepList's order, less the items.
		var want []string
		for _, s := range f.steps("r") {
			if s.Index < 0 {
				want = append(want, s.Key)
			}
		}
		eq(t, "StepTops keys", keys, want)
		eq(t, "StepTops keys", strings.Join(keys, " "), "a each loop#0 loop#1 loop")
		eq(t, "a step's own row", string(tops[0].Output), `{"v":1}`)
		eq(t, "a step's own row", tops[0].Attempts, 1)
		timeEq(t, "a step's own row", tops[0].FinishedAt, at(time.Second))
		eq(t, "a foreach step's output is not assembled", len(tops[1].Output), 0)
		eq(t, "a foreach step's status", tops[1].Status, store.StepFailed)

		totals, err := f.s.StepItemTotals(f.ctx, "r")
		noErr(t, "StepItemTotals", err)
		slices.SortFunc(totals, func(a, b store.ItemTotal) int {
			return strings.Compare(a.Step+" "+string(a.Status), b.Step+" "+string(b.Status))
		})
		eq(t, "StepItemTotals", totals, []store.ItemTotal{
			{Step: "each", Status: store.StepCompleted, Items: 7, Attempts: 7},
			{Step: "each", Status: store.StepFailed, Items: 3, Attempts: 9},
			{Step: "each", Status: store.StepRunning, Items: 1, Attempts: 1},
			{Step: "each", Status: store.StepSkipped, Items: 1, Attempts: 0},
			{Step: "eachx", Status: store.StepFailed, Items: 1, Attempts: 2},
		})
		totals, err = f.s.StepItemTotals(f.ctx, "nope")
		noErr(t, "StepItemTotals of an unknown run", err)
		eq(t, "StepItemTotals of an unknown run", len(totals), 0)

		page := func(p store.StepItemsParams) []int {
			t.Helper()
			p.RunID = "r"
			rows, err := f.s.StepItems(f.ctx, p)
			noErr(t, "StepItems", err)
			idx := []int{}
			for _, s := range rows {
				if s.RunID != "r" || s.Step != p.Step || s.Iteration != -1 {
					t.Errorf("StepItems %+v returned row %+v", p, s)
				}
				idx = append(idx, s.Index)
			}
			return idx
		}
		eq(t, "every item of each", page(store.StepItemsParams{Step: "each"}), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
		eq(t, "the failed items of each", page(store.StepItemsParams{Step: "each", Status: store.StepFailed}), []int{3, 10, 11})
		eq(t, "the first two failed", page(store.StepItemsParams{Step: "each", Status: store.StepFailed, Limit: 2}), []int{3, 10})
		eq(t, "a page from 4", page(store.StepItemsParams{Step: "each", From: 4, Limit: 3}), []int{4, 5, 6})
		eq(t, "past the end", page(store.StepItemsParams{Step: "each", From: 12}), []int{})
		eq(t, "the step named with each as prefix", page(store.StepItemsParams{Step: "eachx"}), []int{0})
		eq(t, "a step without items", page(store.StepItemsParams{Step: "loop"}), []int{})
		rows, err := f.s.StepItems(f.ctx, store.StepItemsParams{RunID: "r", Step: "each", From: 3, Limit: 1})
		noErr(t, "StepItems", err)
		eq(t, "an item's row", len(rows), 1)
		eq(t, "an item's row", string(rows[0].Output), `{"i":1}`)
		eq(t, "an item's row", rows[0].Attempts, 3)
		jsonEq(t, "an item's error", rows[0].Error, errFor(store.StepFailed))
	})
}

// errFor is the error a failed item's row holds (nil for other statuses).
func errFor(status store.StepStatus) json.RawMessage {
	if status != store.StepFailed {
		return nil
	}
	return json.RawMessage(`{"kind":"exec","message":"boom"}`)
}
