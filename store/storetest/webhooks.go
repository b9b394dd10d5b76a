package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testWebhooks checks what flowrun serve relies on: RunInsertBatch creates
// every run of a batch or none, a webhook delivery is recorded with its
// run and a second one with the same id writes nothing, and a version
// records the directory it was applied from.
func testWebhooks(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "batch insert creates every run", newStore, func(t *testing.T, f *fixture) {
		var ps []store.RunInsertParams
		for i := range 3 {
			id := fmt.Sprintf("b%d", i)
			ps = append(ps, store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Key: "k" + id,
				Inputs: []byte(fmt.Sprintf(`{"n":%d}`, i)), Now: at(time.Duration(i) * time.Millisecond), RootRunID: id,
				WorkDir: "/srv/wf", Events: []store.EventWrite{{Kind: "run_created", Data: []byte(`{"version":"1.0.0"}`)}}})
		}
		noErr(t, "RunInsertBatch", f.s.RunInsertBatch(f.ctx, ps))
		for i, p := range ps {
			r := f.get(p.ID)
			eq(t, p.ID+" status", r.Status, store.RunPending)
			eq(t, p.ID+" key", r.Key, p.Key)
			eq(t, p.ID+" work dir", r.WorkDir, "/srv/wf")
			eq(t, p.ID+" inputs", string(r.Inputs), fmt.Sprintf(`{"n":%d}`, i))
			eq(t, p.ID+" events", len(f.events(p.ID)), 1)
		}
		rs, err := f.s.RunClaim(f.ctx, store.RunClaimParams{Owner: "w", Now: at(time.Second), LeaseFor: time.Minute, Limit: 10})
		noErr(t, "RunClaim", err)
		eq(t, "claimable runs of the batch", len(rs), 3)
		noErr(t, "an empty batch", f.s.RunInsertBatch(f.ctx, nil))
	})

	parallel(t, "runs by keys", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "k1old", Key: "k1", Now: at(time.Second)})
		f.insert(store.RunInsertParams{ID: "k1new", Key: "k1", Now: at(2 * time.Second)})
		f.insert(store.RunInsertParams{ID: "k2", Key: "k2", Now: at(time.Second)})
		f.insert(store.RunInsertParams{ID: "other", Workflow: "other", Key: "k3", Now: at(time.Second)})
		f.insert(store.RunInsertParams{ID: "nokey", Now: at(time.Second)})
		got, err := f.s.RunsByKeys(f.ctx, "wf", []string{"k1", "k2", "k3", "k4", ""})
		noErr(t, "RunsByKeys", err)
		ids := map[string]string{}
		for k, r := range got {
			ids[k] = r.ID
			single, err := f.s.RunGetByKey(f.ctx, "wf", k)
			noErr(t, "RunGetByKey", err)
			eq(t, "run of key "+k, r, single)
		}
		eq(t, "runs by key", ids, map[string]string{"k1": "k1new", "k2": "k2"})
		none, err := f.s.RunsByKeys(f.ctx, "wf", nil)
		noErr(t, "RunsByKeys of no key", err)
		eq(t, "runs of no key", len(none), 0)
	})

	parallel(t, "a failing batch writes nothing", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "taken"})
		ps := []store.RunInsertParams{
			{ID: "x0", Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Now: t0, Events: []store.EventWrite{{Kind: "run_created"}}},
			{ID: "x1", Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Now: t0, Delivery: &store.Delivery{Webhook: "push", ID: "d1"}},
			{ID: "taken", Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Now: t0},
		}
		err := f.s.RunInsertBatch(f.ctx, ps)
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("RunInsertBatch with a taken id: %v, want ErrConflict", err)
		}
		f.gone("x0")
		f.gone("x1")
		if _, err := f.s.DeliveryRun(f.ctx, "wf", "push", "d1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DeliveryRun of a failed batch: %v, want ErrNotFound", err)
		}
		eq(t, "events of the failed batch", len(f.events("x0")), 0)
	})

	parallel(t, "a delivery id starts one run", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r1", Delivery: &store.Delivery{Webhook: "push", ID: "d-1"}})
		id, err := f.s.DeliveryRun(f.ctx, "wf", "push", "d-1")
		noErr(t, "DeliveryRun", err)
		eq(t, "run of the delivery", id, "r1")

		_, err = f.s.RunInsert(f.ctx, store.RunInsertParams{ID: "r2", Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Now: t0,
			Events: []store.EventWrite{{Kind: "run_created"}}, Delivery: &store.Delivery{Webhook: "push", ID: "d-1"}})
		if !errors.Is(err, store.ErrDuplicateDelivery) {
			t.Fatalf("RunInsert with a recorded delivery: %v, want ErrDuplicateDelivery", err)
		}
		f.gone("r2")
		eq(t, "events of the refused run", len(f.events("r2")), 0)

		// the same id for another webhook or workflow is another delivery
		f.insert(store.RunInsertParams{ID: "r3", Delivery: &store.Delivery{Webhook: "tag", ID: "d-1"}})
		f.insert(store.RunInsertParams{ID: "r4", Workflow: "other", Delivery: &store.Delivery{Webhook: "push", ID: "d-1"}})
		id, err = f.s.DeliveryRun(f.ctx, "other", "push", "d-1")
		noErr(t, "DeliveryRun other", err)
		eq(t, "run of the other workflow's delivery", id, "r4")
		if _, err := f.s.DeliveryRun(f.ctx, "wf", "push", "d-2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DeliveryRun of an unknown delivery: %v, want ErrNotFound", err)
		}

		// a batch holding a recorded delivery writes nothing
		err = f.s.RunInsertBatch(f.ctx, []store.RunInsertParams{
			{ID: "r5", Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Now: t0},
			{ID: "r6", Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Now: t0, Delivery: &store.Delivery{Webhook: "push", ID: "d-1"}},
		})
		if !errors.Is(err, store.ErrDuplicateDelivery) {
			t.Fatalf("RunInsertBatch with a recorded delivery: %v, want ErrDuplicateDelivery", err)
		}
		f.gone("r5")
	})

	parallel(t, "a delivery goes with its pruned run", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "old", Delivery: &store.Delivery{Webhook: "push", ID: "d-old"}})
		f.end("old", store.RunCompleted, at(time.Minute), 0)
		eq(t, "pruned", f.prune(store.RunPruneParams{Before: at(time.Hour)}).Runs, 1)
		if _, err := f.s.DeliveryRun(f.ctx, "wf", "push", "d-old"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("DeliveryRun after its run was pruned: %v, want ErrNotFound", err)
		}
	})

	parallel(t, "a version records its directory", newStore, func(t *testing.T, f *fixture) {
		put := func(dir string) {
			t.Helper()
			_, err := f.s.VersionPut(f.ctx, store.VersionPutParams{Workflow: "wf", Version: "1.0.0", Major: 1,
				Hash: "h1", Graph: []byte(`{}`), Now: t0, WorkDir: dir})
			noErr(t, "VersionPut", err)
		}
		dir := func() string {
			t.Helper()
			d, err := f.s.VersionWorkDir(f.ctx, "wf", "1.0.0")
			noErr(t, "VersionWorkDir", err)
			return d
		}
		put("")
		eq(t, "directory never recorded", dir(), "")
		put("/srv/a")
		eq(t, "directory recorded", dir(), "/srv/a")
		put("/srv/b")
		eq(t, "directory of the last apply", dir(), "/srv/b")
		put("")
		eq(t, "directory kept by a put without one", dir(), "/srv/b")
		if _, err := f.s.VersionWorkDir(f.ctx, "wf", "2.0.0"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("VersionWorkDir of a version not stored: %v, want ErrNotFound", err)
		}
	})
}
