package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testClaims(t *testing.T, newStore func(t *testing.T) store.Store) {
	claim := func(f *fixture, p store.RunClaimParams) []store.Run {
		f.t.Helper()
		if p.LeaseFor == 0 {
			p.LeaseFor = time.Minute
		}
		rs, err := f.s.RunClaim(f.ctx, p)
		noErr(f.t, "RunClaim", err)
		return rs
	}

	parallel(t, "a claimed run carries its inputs, as RunGet does; RunGetHead leaves them out", newStore, func(t *testing.T, f *fixture) {
		big := `{"items":[` + strings.Repeat(`1,`, 50000) + `2]}`
		f.insert(store.RunInsertParams{ID: "big", Inputs: []byte(big)})
		f.insert(store.RunInsertParams{ID: "small", Inputs: []byte(`{"a":"b"}`)})
		f.insert(store.RunInsertParams{ID: "none"})
		rs := claim(f, store.RunClaimParams{Owner: "w1", Now: at(time.Second), Limit: 10})
		eq(t, "claimed", ids(rs), []string{"big", "none", "small"})
		jsonEq(t, "big run's inputs", rs[0].Inputs, []byte(big))
		eq(t, "none's inputs", len(rs[1].Inputs), 0)
		jsonEq(t, "small run's inputs", rs[2].Inputs, []byte(`{"a":"b"}`))
		for _, id := range []string{"big", "small"} {
			jsonEq(t, id+": RunGet's inputs", f.get(id).Inputs, rs[map[string]int{"big": 0, "small": 2}[id]].Inputs)
		}
		eq(t, "RunGet of a run without inputs", len(f.get("none").Inputs), 0)
		for _, id := range []string{"big", "small", "none"} {
			head, err := f.s.RunGetHead(f.ctx, id)
			noErr(t, "RunGetHead", err)
			full := f.get(id)
			eq(t, id+": RunGetHead's inputs", len(head.Inputs), 0)
			full.Inputs = nil
			eq(t, id+": RunGetHead is RunGet but the inputs", head, full)
		}
		_, err := f.s.RunGetHead(f.ctx, "nope")
		isErr(t, "RunGetHead of an unknown run", err, store.ErrNotFound)
	})

	parallel(t, "due only, in order", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "later", AvailableAt: at(time.Hour)})
		f.insert(store.RunInsertParams{ID: "b", AvailableAt: at(time.Second)})
		f.insert(store.RunInsertParams{ID: "a", AvailableAt: at(time.Second)})
		f.insert(store.RunInsertParams{ID: "first", AvailableAt: at(0)})
		rs := claim(f, store.RunClaimParams{Owner: "w1", Now: at(time.Second), Limit: 10, LeaseFor: 2 * time.Hour})
		eq(t, "claimed", ids(rs), []string{"first", "a", "b"})
		r := rs[0]
		eq(t, "status", r.Status, store.RunRunning)
		eq(t, "lease", r.Lease, store.Lease{Owner: "w1", Epoch: 1})
		timeEq(t, "lease expiry", r.LeaseExpiresAt, at(time.Second+2*time.Hour))
		timeEq(t, "started", r.StartedAt, at(time.Second))
		timeEq(t, "updated", r.UpdatedAt, at(time.Second))
		eq(t, "stored lease", f.get("a").Lease, store.Lease{Owner: "w1", Epoch: 1})
		eq(t, "nothing left that is due", len(claim(f, store.RunClaimParams{Owner: "w2", Now: at(time.Second), Limit: 10})), 0)
		eq(t, "the later one once due", ids(claim(f, store.RunClaimParams{Owner: "w2", Now: at(time.Hour), Limit: 10})), []string{"later"})
	})

	parallel(t, "own: an owner takes back its own unexpired lease, and only its own", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		f.insert(store.RunInsertParams{ID: "other"})
		eq(t, "w1 claims r", ids(claim(f, store.RunClaimParams{Owner: "w1", Now: at(0), RunID: "r"})), []string{"r"})
		eq(t, "w2 claims other", ids(claim(f, store.RunClaimParams{Owner: "w2", Now: at(0), RunID: "other"})), []string{"other"})
		eq(t, "w1 without Own", len(claim(f, store.RunClaimParams{Owner: "w1", Now: at(time.Second), RunID: "r"})), 0)
		eq(t, "w1 with Own, another's lease", len(claim(f, store.RunClaimParams{Owner: "w1", Now: at(time.Second), RunID: "other", Own: true})), 0)
		back := claim(f, store.RunClaimParams{Owner: "w1", Now: at(time.Second), RunID: "r", Own: true})
		eq(t, "w1 with Own, its own lease", ids(back), []string{"r"})
		eq(t, "a new epoch", back[0].Lease, store.Lease{Owner: "w1", Epoch: 2})
		timeEq(t, "renewed expiry", back[0].LeaseExpiresAt, at(time.Second+time.Minute))
		eq(t, "still w2's", f.get("other").Lease, store.Lease{Owner: "w2", Epoch: 1})
	})

	parallel(t, "limit", newStore, func(t *testing.T, f *fixture) {
		for i := range 5 {
			f.insert(store.RunInsertParams{ID: fmt.Sprintf("r%d", i), AvailableAt: at(time.Duration(i) * time.Second)})
		}
		eq(t, "limit 2", ids(claim(f, store.RunClaimParams{Owner: "w", Now: at(time.Minute), Limit: 2})), []string{"r0", "r1"})
		eq(t, "limit 0 claims one", ids(claim(f, store.RunClaimParams{Owner: "w", Now: at(time.Minute)})), []string{"r2"})
	})

	parallel(t, "lease respected and expired lease reclaimed", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		first := claim(f, store.RunClaimParams{Owner: "w1", Now: at(0), LeaseFor: time.Minute})
		eq(t, "first claim", ids(first), []string{"r"})
		eq(t, "claim while leased", len(claim(f, store.RunClaimParams{Owner: "w2", Now: at(59 * time.Second)})), 0)
		second := claim(f, store.RunClaimParams{Owner: "w2", Now: at(time.Minute)})
		eq(t, "claim at lease expiry", ids(second), []string{"r"})
		eq(t, "lease after takeover", second[0].Lease, store.Lease{Owner: "w2", Epoch: 2})
		timeEq(t, "started stays the first start", second[0].StartedAt, at(0))
	})

	parallel(t, "blocked and finished runs are never claimed", newStore, func(t *testing.T, f *fixture) {
		for _, id := range []string{"blocked", "done", "failed"} {
			f.insert(store.RunInsertParams{ID: id})
			r := f.claimOne("w", id, at(0))
			st := map[string]store.RunStatus{"blocked": store.RunBlocked, "done": store.RunCompleted, "failed": store.RunFailed}[id]
			f.commit(store.Transition{RunID: id, Lease: r.Lease, Now: at(0), Run: &store.RunUpdate{Status: &st, Release: true}})
		}
		eq(t, "claimed", len(claim(f, store.RunClaimParams{Owner: "w", Now: at(time.Hour), Limit: 10})), 0)
		_, ok, err := f.s.RunNextAvailable(f.ctx, "")
		noErr(t, "RunNextAvailable", err)
		eq(t, "next available with only blocked and finished runs", ok, false)
	})

	parallel(t, "waiting run claimed when due", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		waiting := store.RunWaiting
		f.commit(store.Transition{RunID: "r", Lease: r.Lease, Now: at(0), Run: &store.RunUpdate{
			Status: &waiting, AvailableAt: ptr(at(time.Hour)), WaitReason: ptr("timer"), Release: true}})
		got := f.get("r")
		eq(t, "parked", [2]string{string(got.Status), got.WaitReason}, [2]string{"waiting", "timer"})
		eq(t, "parked run has no owner", got.Lease.Owner, "")
		eq(t, "epoch kept on release", got.Lease.Epoch, int64(1))
		eq(t, "claim before due", len(claim(f, store.RunClaimParams{Owner: "w", Now: at(time.Minute)})), 0)
		rs := claim(f, store.RunClaimParams{Owner: "w", Now: at(time.Hour)})
		eq(t, "claim when due", ids(rs), []string{"r"})
		eq(t, "claimed waiting run is running", rs[0].Status, store.RunRunning)
		eq(t, "wait reason cleared", rs[0].WaitReason, "")
		eq(t, "epoch", rs[0].Lease.Epoch, int64(2))
	})

	parallel(t, "restricted to a run or a root", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "a"})
		f.insert(store.RunInsertParams{ID: "b"})
		f.insert(store.RunInsertParams{ID: "b-child", ParentRunID: "b", RootRunID: "b"})
		f.insert(store.RunInsertParams{ID: "c"})
		eq(t, "by run id", ids(claim(f, store.RunClaimParams{Owner: "w", Now: at(0), Limit: 10, RunID: "c"})), []string{"c"})
		eq(t, "by root", ids(claim(f, store.RunClaimParams{Owner: "w", Now: at(0), Limit: 10, RootRunID: "b"})), []string{"b", "b-child"})
		eq(t, "the rest", ids(claim(f, store.RunClaimParams{Owner: "w", Now: at(0), Limit: 10})), []string{"a"})
	})

	parallel(t, "concurrent claimers never share a run", newStore, func(t *testing.T, f *fixture) {
		const runs, workers = 40, 4
		for i := range runs {
			f.insert(store.RunInsertParams{ID: fmt.Sprintf("r%02d", i)})
		}
		var mu sync.Mutex
		got := map[string]string{}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("w%d", w)
				for {
					rs, err := f.s.RunClaim(f.ctx, store.RunClaimParams{Owner: owner, Now: at(0), LeaseFor: time.Minute, Limit: 3})
					if err != nil {
						errs <- err
						return
					}
					if len(rs) == 0 {
						return
					}
					mu.Lock()
					for _, r := range rs {
						if prev, dup := got[r.ID]; dup {
							errs <- fmt.Errorf("run %s claimed by %s and %s", r.ID, prev, owner)
						}
						got[r.ID] = owner
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		eq(t, "runs claimed", len(got), runs)
	})
}

func testLeases(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "heartbeat extends and reports lost", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "a"})
		f.insert(store.RunInsertParams{ID: "b"})
		a := f.claimOne("w1", "a", at(0))
		b := f.claimOne("w1", "b", at(0))
		// b's lease expires and w2 takes it over.
		b2, err := f.s.RunClaim(f.ctx, store.RunClaimParams{Owner: "w2", Now: at(2 * time.Minute), LeaseFor: time.Minute, RunID: "b"})
		noErr(t, "takeover", err)
		eq(t, "takeover", ids(b2), []string{"b"})
		hb, err := f.s.RunHeartbeat(f.ctx, store.RunHeartbeatParams{Owner: "w1", Now: at(2 * time.Minute), LeaseFor: time.Minute,
			Leases: map[string]int64{"a": a.Lease.Epoch, "b": b.Lease.Epoch, "gone": 1}})
		noErr(t, "RunHeartbeat", err)
		eq(t, "heartbeat", hb, []store.Heartbeat{{RunID: "a"}, {RunID: "b", Lost: true}, {RunID: "gone", Lost: true}})
		timeEq(t, "extended (even after expiry, while nobody took it)", f.get("a").LeaseExpiresAt, at(3*time.Minute))
		timeEq(t, "not extended", f.get("b").LeaseExpiresAt, at(3*time.Minute))
		eq(t, "b still w2's", f.get("b").Lease, store.Lease{Owner: "w2", Epoch: 2})

		// A stale epoch of the same owner is lost too.
		hb, err = f.s.RunHeartbeat(f.ctx, store.RunHeartbeatParams{Owner: "w2", Now: at(2 * time.Minute), LeaseFor: time.Minute,
			Leases: map[string]int64{"b": 1}})
		noErr(t, "RunHeartbeat", err)
		eq(t, "stale epoch", hb, []store.Heartbeat{{RunID: "b", Lost: true}})
	})

	parallel(t, "heartbeat reports cancel requests", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		r := f.claimOne("w", "r", at(0))
		_, err := f.s.RunCancel(f.ctx, store.RunCancelParams{RunID: "r", Now: at(time.Second)})
		noErr(t, "RunCancel", err)
		hb, err := f.s.RunHeartbeat(f.ctx, store.RunHeartbeatParams{Owner: "w", Now: at(2 * time.Second), LeaseFor: time.Minute,
			Leases: map[string]int64{"r": r.Lease.Epoch}})
		noErr(t, "RunHeartbeat", err)
		eq(t, "heartbeat", hb, []store.Heartbeat{{RunID: "r", CancelRequested: true}})
	})

	parallel(t, "owners and expire", newStore, func(t *testing.T, f *fixture) {
		for _, id := range []string{"a", "b", "c", "d"} {
			f.insert(store.RunInsertParams{ID: id, AvailableAt: at(-time.Hour)})
		}
		f.claimOne("host/1/w", "a", at(0))
		f.claimOne("host/1/w", "b", at(0))
		f.claimOne("host/2/w", "c", at(0))
		f.claimOne("host/3/w", "d", at(-time.Hour)) // long expired
		owners, err := f.s.RunLeaseOwners(f.ctx, at(time.Second))
		noErr(t, "RunLeaseOwners", err)
		eq(t, "owners of live leases", owners, []string{"host/1/w", "host/2/w"})

		n, err := f.s.LeaseExpire(f.ctx, store.LeaseExpireParams{Owners: []string{"host/1/w", "nobody"}, Now: at(time.Second)})
		noErr(t, "LeaseExpire", err)
		eq(t, "leases freed", n, 2)
		a := f.get("a")
		eq(t, "freed lease", a.Lease, store.Lease{Epoch: 1})
		eq(t, "status kept", a.Status, store.RunRunning)
		rs, err := f.s.RunClaim(f.ctx, store.RunClaimParams{Owner: "host/9/w", Now: at(2 * time.Second), LeaseFor: time.Minute, Limit: 10})
		noErr(t, "RunClaim", err)
		eq(t, "claimable at once", ids(rs), []string{"a", "b", "d"})
		eq(t, "epoch after reclaim", rs[0].Lease.Epoch, int64(2))
		n, err = f.s.LeaseExpire(f.ctx, store.LeaseExpireParams{Now: at(time.Second)})
		noErr(t, "LeaseExpire of no owners", err)
		eq(t, "leases freed", n, 0)
	})

	parallel(t, "next available", newStore, func(t *testing.T, f *fixture) {
		_, ok, err := f.s.RunNextAvailable(f.ctx, "")
		noErr(t, "RunNextAvailable", err)
		eq(t, "empty store", ok, false)
		f.insert(store.RunInsertParams{ID: "root", AvailableAt: at(time.Hour)})
		f.insert(store.RunInsertParams{ID: "child", ParentRunID: "root", RootRunID: "root", AvailableAt: at(30 * time.Minute)})
		f.insert(store.RunInsertParams{ID: "other", AvailableAt: at(10 * time.Minute)})
		next := func(root string) time.Time {
			t.Helper()
			at, ok, err := f.s.RunNextAvailable(f.ctx, root)
			noErr(t, "RunNextAvailable", err)
			eq(t, "found", ok, true)
			return at
		}
		timeEq(t, "any", next(""), at(10*time.Minute))
		timeEq(t, "within root", next("root"), at(30*time.Minute))
		// A leased run counts from its lease expiry, not its (past) available_at.
		f.claimOne("w", "other", at(20*time.Minute))
		timeEq(t, "with other leased until 21m", next(""), at(21*time.Minute))
		_, ok, err = f.s.RunNextAvailable(f.ctx, "nothing")
		noErr(t, "RunNextAvailable", err)
		eq(t, "unknown root", ok, false)
	})
}
