package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testCapabilities checks the optional capabilities of package store
// (TransitionClaimer, CancelPoller, WorkWaiter) on a store that has them.
func testCapabilities(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "transition commit claim: claim first, then the transitions, in one transaction", newStore, func(t *testing.T, f *fixture) {
		tc, ok := f.s.(store.TransitionClaimer)
		if !ok {
			t.Skip("the store is not a store.TransitionClaimer")
		}
		f.insert(store.RunInsertParams{ID: "a"})
		f.insert(store.RunInsertParams{ID: "b"})
		held := f.claimOne("w1", "a", at(0))
		done := store.RunCompleted
		// a ends and is released in the same transaction that claims: the
		// claim comes first, so it cannot take a back.
		res, runs, err := tc.TransitionCommitClaim(f.ctx, []store.Transition{{RunID: "a", Lease: held.Lease, Now: at(time.Second),
			Run: &store.RunUpdate{Status: &done, Release: true}}},
			store.RunClaimParams{Owner: "w1", Now: at(time.Second), LeaseFor: time.Minute, Limit: 5})
		noErr(t, "TransitionCommitClaim", err)
		eq(t, "results", len(res), 1)
		noErr(t, "transition of a", res[0].Err)
		eq(t, "claimed", ids(runs), []string{"b"})
		eq(t, "a", f.get("a").Status, store.RunCompleted)
		b := f.get("b")
		eq(t, "b's owner", b.Lease.Owner, "w1")
		eq(t, "b's status", b.Status, store.RunRunning)

		// A limit below 1 claims nothing and still applies the transitions.
		res, runs, err = tc.TransitionCommitClaim(f.ctx, []store.Transition{{RunID: "b", Lease: b.Lease, Now: at(2 * time.Second),
			Run: &store.RunUpdate{Status: &done, Release: true}}}, store.RunClaimParams{})
		noErr(t, "TransitionCommitClaim without a claim", err)
		eq(t, "claimed", len(runs), 0)
		noErr(t, "transition of b", res[0].Err)
		eq(t, "b", f.get("b").Status, store.RunCompleted)

		// A claim without an owner is refused and nothing applies.
		f.insert(store.RunInsertParams{ID: "c"})
		_, _, err = tc.TransitionCommitClaim(f.ctx, nil, store.RunClaimParams{Now: at(3 * time.Second), LeaseFor: time.Minute, Limit: 1})
		if err == nil {
			t.Fatal("a claim without an owner was accepted")
		}
		eq(t, "c untouched", f.get("c").Lease.Owner, "")
	})

	parallel(t, "transition commit claim: a failed batch applies neither", newStore, func(t *testing.T, f *fixture) {
		tc, ok := f.s.(store.TransitionClaimer)
		if !ok {
			t.Skip("the store is not a store.TransitionClaimer")
		}
		f.insert(store.RunInsertParams{ID: "a"})
		f.insert(store.RunInsertParams{ID: "b"})
		held := f.claimOne("w1", "a", at(0))
		done := store.RunCompleted
		_, _, err := tc.TransitionCommitClaim(f.ctx, []store.Transition{
			{RunID: "a", Lease: held.Lease, Now: at(time.Second), Run: &store.RunUpdate{Status: &done, Release: true}},
			{RunID: "nope", Now: at(time.Second), Run: &store.RunUpdate{Status: &done}},
		}, store.RunClaimParams{Owner: "w1", Now: at(time.Second), LeaseFor: time.Minute, Limit: 5})
		isErr(t, "a transition of an unknown run", err, store.ErrNotFound)
		eq(t, "a not completed", f.get("a").Status, store.RunRunning)
		eq(t, "b not claimed", f.get("b").Lease.Owner, "")
	})

	parallel(t, "cancel requested lists the given runs with a pending cancel", newStore, func(t *testing.T, f *fixture) {
		cp, ok := f.s.(store.CancelPoller)
		if !ok {
			t.Skip("the store is not a store.CancelPoller")
		}
		for _, id := range []string{"a", "b", "c"} {
			f.insert(store.RunInsertParams{ID: id})
			f.claimOne("w1", id, at(0))
		}
		got, err := cp.RunCancelRequested(f.ctx, []string{"a", "b", "c"})
		noErr(t, "RunCancelRequested", err)
		eq(t, "before any cancel", len(got), 0)
		for _, id := range []string{"a", "c"} {
			_, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: id, Now: at(time.Second)})
			noErr(t, "RunCancel", err)
		}
		got, err = cp.RunCancelRequested(f.ctx, []string{"a", "b", "nope"})
		noErr(t, "RunCancelRequested", err)
		slices.Sort(got)
		eq(t, "pending cancels among a, b, nope", got, []string{"a"})
		got, err = cp.RunCancelRequested(f.ctx, nil)
		noErr(t, "RunCancelRequested of no run", err)
		eq(t, "of no run", len(got), 0)
	})

	parallel(t, "wait for work returns after another connection's commit", newStore, func(t *testing.T, f *fixture) {
		ww, ok := f.s.(store.WorkWaiter)
		if !ok {
			t.Skip("the store is not a store.WorkWaiter")
		}
		if err := ww.WaitForWork(f.ctx); err != nil {
			t.Skipf("the store cannot tell of commits here (%v): callers poll", err)
		}
		// A wait with nothing committed ends with its context.
		ctx, cancel := context.WithTimeout(f.ctx, 50*time.Millisecond)
		err := ww.WaitForWork(ctx)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitForWork with nothing committed: %v", err)
		}
		// A commit while a caller waits ends the wait. The commit is made
		// again until the wait returns, since a backend may start
		// listening only after the call began; the bound is generous, so
		// only a store that never tells fails it.
		wctx, cancel := context.WithCancel(f.ctx)
		done := make(chan error, 1)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); done <- ww.WaitForWork(wctx) }()
		defer wg.Wait()
		defer cancel()
		for i := 0; ; i++ {
			f.insert(store.RunInsertParams{ID: "r" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
			select {
			case err := <-done:
				noErr(t, "WaitForWork after a commit", err)
				return
			case <-time.After(100 * time.Millisecond):
			}
			if i == 200 {
				t.Fatal("WaitForWork did not return within 20 s of commits")
			}
		}
	})
}
