package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testKeyRace starts one workflow and key from 16 goroutines at once,
// eight on each of two handles of one database (two processes' worth),
// each with a run id of its own, keeping the newest run while it is
// unfinished: exactly one run is created, and every start answers it
// (language.md §2: one key, one run). A second round on a key whose run
// ended (keep says no) creates exactly one new run.
func testKeyRace(t *testing.T, newPair func(t *testing.T) (store.Store, store.Store)) {
	s1, s2 := newPair(t)
	ctx := t.Context()
	keepUnfinished := func(old store.Run) (bool, error) { return !old.Status.Terminal(), nil }
	race := func(round string, keep func(store.Run) (bool, error)) (created []string, answered map[string]bool) {
		t.Helper()
		const racers = 16
		var wg sync.WaitGroup
		var mu sync.Mutex
		answered = map[string]bool{}
		start := make(chan struct{})
		for i := range racers {
			s := s1
			if i%2 == 1 {
				s = s2
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				p := store.RunInsertParams{ID: fmt.Sprintf("%s-%02d", round, i), Workflow: "wf", Version: "1.0.0", GraphHash: "h1",
					Key: "k", Now: at(time.Second)}
				r, made, err := s.RunInsertKeyed(ctx, p, keep)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("RunInsertKeyed %s: %v", p.ID, err)
					return
				}
				if made {
					created = append(created, r.ID)
				}
				answered[r.ID] = true
			}()
		}
		close(start)
		wg.Wait()
		return created, answered
	}
	created, answered := race("a", keepUnfinished)
	if len(created) != 1 || len(answered) != 1 {
		t.Fatalf("16 concurrent starts of one key created %v and answered %v; want one run for all", created, answered)
	}
	// The run ends; the key names it no more for this keep: one new run.
	first := created[0]
	h := &fixture{t: t, ctx: ctx, s: s1}
	run := h.claimOne("w", first, at(2*time.Second))
	done := store.RunFailed
	h.commit(store.Transition{RunID: first, Lease: run.Lease, Now: at(3 * time.Second),
		Run: &store.RunUpdate{Status: &done, FinishedAt: ptr(at(3 * time.Second)), Release: true}})
	created, answered = race("b", keepUnfinished)
	if len(created) != 1 || len(answered) != 1 || created[0] == first {
		t.Fatalf("after the run failed, 16 starts created %v and answered %v; want one new run", created, answered)
	}
	// keep's error writes nothing.
	boom := fmt.Errorf("inputs differ")
	_, made, err := s1.RunInsertKeyed(ctx, store.RunInsertParams{ID: "c", Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Key: "k", Now: at(4 * time.Second)},
		func(store.Run) (bool, error) { return false, boom })
	if err == nil || made {
		t.Fatalf("RunInsertKeyed with keep failing = made %v, %v; want the error", made, err)
	}
	if _, err := s1.RunGet(ctx, "c"); err == nil {
		t.Fatal("a refused start wrote its run")
	}
	// An empty key inserts every time.
	for _, id := range []string{"n1", "n2"} {
		if _, made, err := s1.RunInsertKeyed(ctx, store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Now: at(5 * time.Second)},
			keepUnfinished); err != nil || !made {
			t.Fatalf("RunInsertKeyed without a key = made %v, %v", made, err)
		}
	}
}

// testBatchKeyed: RunInsertBatchKeyed inserts when every key's newest run
// is the one the caller saw, and writes nothing (ErrKeyRace) when one got
// a newer run meanwhile.
func testBatchKeyed(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "seen keys", newStore, func(t *testing.T, f *fixture) {
		mk := func(id, key string) store.RunInsertParams {
			return store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h1", Key: key, Now: at(time.Second)}
		}
		noErr(t, "first batch", f.s.RunInsertBatchKeyed(f.ctx, "wf", []store.RunInsertParams{mk("a1", "a"), mk("b1", "b")},
			map[string]string{"a": "", "b": ""}))
		// b got b1 since a caller read "none": refused, nothing written.
		err := f.s.RunInsertBatchKeyed(f.ctx, "wf", []store.RunInsertParams{mk("a2", "a"), mk("b2", "b")},
			map[string]string{"a": "a1", "b": ""})
		isErr(t, "a stale read", err, store.ErrKeyRace)
		if _, err := f.s.RunGet(f.ctx, "a2"); err == nil {
			t.Fatal("a refused batch wrote a run")
		}
		noErr(t, "a fresh read", f.s.RunInsertBatchKeyed(f.ctx, "wf", []store.RunInsertParams{mk("a2", "a"), mk("b2", "b")},
			map[string]string{"a": "a1", "b": "b1"}))
		eq(t, "a's newest", f.get("a2").Key, "a")
	})
}
