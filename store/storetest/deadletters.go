package storetest

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testDeadLetters(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "stored in the transition, listed, retried once, dropped", newStore, func(t *testing.T, f *fixture) {
		r := f.claimOne("w", f.insert(store.RunInsertParams{ID: "r"}).ID, at(0))
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second), DeadLetters: []store.DeadLetterWrite{
			{Step: "each", StepKey: "each[1]", Index: 1, Item: []byte(`"b"`), Error: []byte(`{"kind":"exec","message":"no"}`)},
			{Step: "each", StepKey: "each[3]", Index: 3, Item: []byte(`{"n":3}`), Error: []byte(`{"kind":"exec","message":"no"}`)},
		}})
		ds, err := f.s.DeadLetterList(f.ctx, store.DeadLetterListParams{})
		noErr(t, "DeadLetterList", err)
		eq(t, "open letters", len(ds), 2)
		n, err := f.s.DeadLetterOpenCount(f.ctx)
		noErr(t, "DeadLetterOpenCount", err)
		eq(t, "open letters counted", n, 2)
		d := ds[0]
		eq(t, "run", d.RunID, "r")
		eq(t, "step", d.Step, "each")
		eq(t, "key", d.StepKey, "each[1]")
		eq(t, "index", d.Index, 1)
		jsonEq(t, "item", d.Item, []byte(`"b"`))
		eq(t, "status", d.Status, store.DeadLetterOpen)
		timeEq(t, "created", d.CreatedAt, at(time.Second))

		// A failed retry keeps it open with the new error.
		_, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: d.ID, Status: store.DeadLetterOpen,
			Error: []byte(`{"kind":"exec","message":"again"}`), Now: at(time.Minute),
			Events: []store.EventWrite{{Kind: "dead_letter_retry_failed", StepKey: "each[1]"}}})
		noErr(t, "update open", err)
		got, err := f.s.DeadLetterGet(f.ctx, d.ID)
		noErr(t, "DeadLetterGet", err)
		jsonEq(t, "new error", got.Error, []byte(`{"kind":"exec","message":"again"}`))
		got, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: d.ID, Status: store.DeadLetterRetried,
			Output: []byte(`{"ok":true}`), Now: at(2 * time.Minute),
			Events: []store.EventWrite{{Kind: "dead_letter_retried", StepKey: "each[1]"}}})
		noErr(t, "close", err)
		eq(t, "closed", got.Status, store.DeadLetterRetried)
		timeEq(t, "closed at", got.ClosedAt, at(2*time.Minute))
		evs := kinds(f.events("r"))
		eq(t, "events", evs[len(evs)-2:], []string{"dead_letter_retry_failed", "dead_letter_retried"})
		_, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: d.ID, Status: store.DeadLetterDropped, Now: at(3 * time.Minute)})
		isErr(t, "closing twice", err, store.ErrConflict)
		_, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: 999, Status: store.DeadLetterDropped, Now: at(3 * time.Minute)})
		isErr(t, "unknown id", err, store.ErrNotFound)
		_, err = f.s.DeadLetterGet(f.ctx, 999)
		isErr(t, "get unknown id", err, store.ErrNotFound)

		ds, _ = f.s.DeadLetterList(f.ctx, store.DeadLetterListParams{})
		eq(t, "open after retry", len(ds), 1)
		n, err = f.s.DeadLetterOpenCount(f.ctx)
		noErr(t, "DeadLetterOpenCount", err)
		eq(t, "open letters counted after retry", n, 1)
		ds, _ = f.s.DeadLetterList(f.ctx, store.DeadLetterListParams{All: true, RunID: "r"})
		eq(t, "all of the run", len(ds), 2)
		ds, _ = f.s.DeadLetterList(f.ctx, store.DeadLetterListParams{RunID: "other"})
		eq(t, "other run", len(ds), 0)
	})
}
