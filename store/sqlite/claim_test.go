package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// TestTransitionCommitClaim: the group commit's claim applies with the
// transitions in one database transaction; it comes first, so a run that a
// transition of the batch releases (due now) is not taken back by it; a
// batch that fails applies neither its transitions nor its claim.
func TestTransitionCommitClaim(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := openTemp(t, sqlite.Options{})
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: id, Now: t0, AvailableAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	held, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Minute, Limit: 1})
	if err != nil || len(held) != 1 || held[0].ID != "a" {
		t.Fatalf("RunClaim = %v, %v; want run a", held, err)
	}
	// a parks due now (released) while the same commit claims up to 3.
	pending := store.RunPending
	res, claimed, err := s.TransitionCommitClaim(ctx, []store.Transition{{RunID: "a", Lease: held[0].Lease, Now: t0,
		Run: &store.RunUpdate{Status: &pending, AvailableAt: &t0, Release: true}}},
		store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Minute, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("results = %+v, want one applied transition", res)
	}
	var ids []string
	for _, r := range claimed {
		ids = append(ids, r.ID)
		if r.Lease.Owner != "w" || r.Status != store.RunRunning {
			t.Errorf("claimed run %s: lease %+v status %s, want leased to w and running", r.ID, r.Lease, r.Status)
		}
	}
	if len(ids) != 2 || ids[0] != "b" || ids[1] != "c" {
		t.Fatalf("claimed %v, want [b c] (not a, which the same commit released)", ids)
	}
	if a, err := s.RunGet(ctx, "a"); err != nil || a.Lease.Owner != "" || a.Status != store.RunPending {
		t.Fatalf("run a = %s lease %+v (%v), want pending and released", a.Status, a.Lease, err)
	}

	// A failing batch (unknown run) applies nothing: c's transition and
	// the claim of a are both rolled back.
	completed := store.RunCompleted
	_, claimed, err = s.TransitionCommitClaim(ctx, []store.Transition{
		{RunID: "c", Lease: claimed[1].Lease, Now: t0, Run: &store.RunUpdate{Status: &completed, Release: true}},
		{RunID: "nope", Lease: store.Lease{Owner: "w", Epoch: 1}, Now: t0},
	}, store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Minute, Limit: 1})
	if !errors.Is(err, store.ErrNotFound) || claimed != nil {
		t.Fatalf("TransitionCommitClaim with an unknown run = %v, %v; want ErrNotFound and no runs", claimed, err)
	}
	if a, _ := s.RunGet(ctx, "a"); a.Lease.Owner != "" {
		t.Errorf("run a is leased to %q after a failed batch, want the claim rolled back", a.Lease.Owner)
	}
	if c, _ := s.RunGet(ctx, "c"); c.Status != store.RunRunning {
		t.Errorf("run c is %s after a failed batch, want running (the transition rolled back)", c.Status)
	}

	// Limit 0 claims nothing.
	_, claimed, err = s.TransitionCommitClaim(ctx, nil, store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Minute})
	if err != nil || len(claimed) != 0 {
		t.Fatalf("TransitionCommitClaim with limit 0 = %v, %v; want nothing claimed", claimed, err)
	}
	if a, _ := s.RunGet(ctx, "a"); a.Lease.Owner != "" {
		t.Errorf("run a was claimed by a limit-0 commit")
	}
}
