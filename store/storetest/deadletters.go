package storetest

import (
	"errors"
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

	parallel(t, "one retry at a time: a claim refuses a second owner until it lapses", newStore, func(t *testing.T, f *fixture) {
		r := f.claimOne("w", f.insert(store.RunInsertParams{ID: "r"}).ID, at(0))
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(time.Second), DeadLetters: []store.DeadLetterWrite{
			{Step: "each", StepKey: "each[0]", Index: 0, Item: []byte(`"a"`), Error: []byte(`{"kind":"exec","message":"no"}`)},
		}})
		ds, err := f.s.DeadLetterList(f.ctx, store.DeadLetterListParams{})
		noErr(t, "DeadLetterList", err)
		id := ds[0].ID
		claim := func(owner string, now time.Duration) (store.DeadLetter, error) {
			return f.s.DeadLetterClaim(f.ctx, store.DeadLetterClaimParams{ID: id, Owner: owner, Now: at(now), LeaseFor: 30 * time.Second})
		}
		d, err := claim("a", time.Minute)
		noErr(t, "first claim", err)
		eq(t, "claimed by", d.ClaimOwner, "a")
		timeEq(t, "claimed until", d.ClaimUntil, at(time.Minute+30*time.Second))
		got, err := f.s.DeadLetterGet(f.ctx, id)
		noErr(t, "DeadLetterGet", err)
		eq(t, "claim read back", got.ClaimOwner, "a")

		// A second retry, or a drop, while the first holds it is refused
		// with the holder and when its claim lapses.
		_, err = claim("b", time.Minute+10*time.Second)
		var held *store.LetterHeldError
		if !errors.As(err, &held) {
			t.Fatalf("a second owner's claim: err = %v, want *store.LetterHeldError", err)
		}
		eq(t, "held by", held.Owner, "a")
		timeEq(t, "held until", held.Until, at(time.Minute+30*time.Second))
		_, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: id, Status: store.DeadLetterDropped, Now: at(time.Minute + 10*time.Second)})
		if !errors.As(err, &held) {
			t.Fatalf("a drop during a retry: err = %v, want *store.LetterHeldError", err)
		}
		_, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: id, Owner: "b", Status: store.DeadLetterRetried, Now: at(time.Minute + 10*time.Second)})
		isErr(t, "an update by an owner without the claim", err, store.ErrLeaseLost)

		// A holder the caller knows is dead (a process of its own host
		// that no longer exists) is taken over at once; no other.
		_, err = f.s.DeadLetterClaim(f.ctx, store.DeadLetterClaimParams{ID: id, Owner: "b", Now: at(time.Minute + 10*time.Second), LeaseFor: 30 * time.Second, Gone: "z"})
		if !errors.As(err, &held) {
			t.Fatalf("a claim naming another owner gone: err = %v, want *store.LetterHeldError", err)
		}
		d, err = f.s.DeadLetterClaim(f.ctx, store.DeadLetterClaimParams{ID: id, Owner: "g", Now: at(time.Minute + 10*time.Second), LeaseFor: 10 * time.Second, Gone: "a"})
		noErr(t, "takeover of a dead holder", err)
		eq(t, "taken over from the dead holder by", d.ClaimOwner, "g")
		d, err = claim("a", time.Minute+20*time.Second) // g's lease lapsed at 1m20s
		noErr(t, "claim after g's lapse", err)
		eq(t, "claimed again by", d.ClaimOwner, "a")

		// The holder renews; once it stops renewing (killed), the claim
		// lapses and another takes it over.
		d, err = claim("a", time.Minute+20*time.Second)
		noErr(t, "renewal", err)
		timeEq(t, "renewed until", d.ClaimUntil, at(time.Minute+50*time.Second))
		_, err = claim("b", time.Minute+49*time.Second)
		if !errors.As(err, &held) {
			t.Fatalf("a claim before the renewed lease lapsed: err = %v, want *store.LetterHeldError", err)
		}
		d, err = claim("b", time.Minute+50*time.Second)
		noErr(t, "claim of a lapsed lease", err)
		eq(t, "taken over by", d.ClaimOwner, "b")
		_, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: id, Owner: "a", Status: store.DeadLetterRetried, Now: at(2 * time.Minute)})
		isErr(t, "the old holder's update after the takeover", err, store.ErrLeaseLost)

		// The holder's update ends its claim: a failed retry leaves the
		// letter open and free.
		d, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: id, Owner: "b", Status: store.DeadLetterOpen,
			Error: []byte(`{"kind":"exec","message":"again"}`), Now: at(2 * time.Minute)})
		noErr(t, "the holder's update", err)
		eq(t, "claim released", d.ClaimOwner, "")
		eq(t, "claim time released", d.ClaimUntil.IsZero(), true)
		_, err = claim("c", 2*time.Minute)
		noErr(t, "claim after a release", err)
		_, err = f.s.DeadLetterUpdate(f.ctx, store.DeadLetterUpdateParams{ID: id, Owner: "c", Status: store.DeadLetterRetried, Now: at(3 * time.Minute)})
		noErr(t, "close", err)
		_, err = claim("d", 3*time.Minute)
		isErr(t, "claim of a closed letter", err, store.ErrConflict)
		_, err = f.s.DeadLetterClaim(f.ctx, store.DeadLetterClaimParams{ID: 999, Owner: "d", Now: at(3 * time.Minute), LeaseFor: time.Second})
		isErr(t, "claim of an unknown letter", err, store.ErrNotFound)
	})
}
