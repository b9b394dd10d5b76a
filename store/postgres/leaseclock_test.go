package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
)

// TestLeasesOnTheDatabasesClock: two workers whose clocks disagree by far
// more than the lease share a store. The one ahead never takes a run the
// other holds, however its clock reads; the one behind renews its lease
// for a lease from now, not into the past; and a lease that lapsed on the
// database's clock is taken over by a worker whose clock says it cannot
// have. Leases are the database's; everything else is the callers' clock
// (a run is due by its available_at on the caller's clock).
func TestLeasesOnTheDatabasesClock(t *testing.T) {
	dsn, _ := newSchema(t)
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	real := time.Now()
	behind, ahead := real.Add(-time.Hour), real.Add(time.Hour) // the two workers' clocks
	const lease = 30 * time.Second
	for _, id := range []string{"held", "lapsed"} {
		if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h1",
			Now: real.Add(-2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(owner string, now time.Time, id string, leaseFor time.Duration) []store.Run {
		t.Helper()
		rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: owner, Now: now, LeaseFor: leaseFor, Limit: 1, RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}

	if rs := claim("behind/1/w1", behind, "held", lease); len(rs) != 1 {
		t.Fatal("the worker whose clock is behind could not claim a due run")
	}
	if rs := claim("ahead/2/w1", ahead, "held", lease); len(rs) != 0 {
		t.Fatal("a worker whose clock runs an hour ahead took a run whose 30s lease is live")
	}
	hb, err := s.RunHeartbeat(ctx, store.RunHeartbeatParams{Owner: "behind/1/w1", Leases: map[string]int64{"held": 1}, Now: behind, LeaseFor: lease})
	if err != nil || len(hb) != 1 || hb[0].Lost {
		t.Fatalf("the heartbeat of the lease holder = %+v, %v", hb, err)
	}
	if rs := claim("ahead/2/w1", ahead, "held", lease); len(rs) != 0 {
		t.Fatal("after a heartbeat from a clock an hour behind, the lease is in the past")
	}
	if q, err := s.RunQueue(ctx, ahead); err != nil || q.Due != 1 {
		t.Fatalf("RunQueue on the clock ahead = %+v, %v; want only the unleased run due", q, err)
	}
	owners, err := s.RunLeaseOwners(ctx, ahead)
	if err != nil || len(owners) != 1 || owners[0] != "behind/1/w1" {
		t.Fatalf("RunLeaseOwners on the clock ahead = %v, %v; want the holder", owners, err)
	}
	r, err := s.RunCancel(ctx, store.RunCancelParams{RunID: "held", Now: ahead})
	if err != nil || r.Status == store.RunCanceled || !r.CancelRequested {
		t.Fatalf("RunCancel from the clock ahead = %s (requested %v), %v; want a request the holder carries out", r.Status, r.CancelRequested, err)
	}

	// A lease that lapsed on the database's clock is taken over, even by
	// a worker whose clock is an hour behind the one that set it.
	if rs := claim("ahead/2/w1", ahead, "lapsed", time.Millisecond); len(rs) != 1 {
		t.Fatal("the worker ahead could not claim a due run")
	}
	time.Sleep(5 * time.Millisecond)
	rs := claim("behind/1/w1", behind, "lapsed", lease)
	if len(rs) != 1 || rs[0].Lease.Epoch != 2 {
		t.Fatalf("a lease that lapsed on the database's clock was not taken over: %+v", rs)
	}
}
