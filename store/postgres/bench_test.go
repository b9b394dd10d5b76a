package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestEventCursorSeesEveryEvent follows the event log by id while several
// writers commit concurrently, as `flowrun logs --follow` does, and checks
// that the cursor never moves past an event that commits later.
func TestEventCursorSeesEveryEvent(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	const writers, commits = 4, 25
	leases := make([]store.Lease, writers)
	for w := range writers {
		insert(t, s, fmt.Sprintf("r%d", w), t0)
		rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Hour, RunID: fmt.Sprintf("r%d", w)})
		if err != nil || len(rs) != 1 {
			t.Fatalf("RunClaim: %v, %v", rs, err)
		}
		leases[w] = rs[0].Lease
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("r%d", w)
			for i := range commits {
				res, err := s.TransitionCommit(ctx, []store.Transition{{RunID: id, Lease: leases[w], Now: t0,
					Events: []store.EventWrite{{Kind: fmt.Sprintf("e%d", i)}}}})
				if err == nil {
					err = res[0].Err
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	var seen []int64
	var after int64
	follow := func() {
		evs, err := s.EventList(ctx, store.EventListParams{AfterID: after})
		if err != nil {
			t.Fatalf("EventList: %v", err)
		}
		for _, e := range evs {
			seen = append(seen, e.ID)
			after = e.ID
		}
	}
	for done := false; !done; {
		select {
		case <-writing:
			done = true
		default:
		}
		follow()
	}
	follow()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*commits {
		t.Fatalf("%d events stored, want %d", len(all), writers*commits)
	}
	if len(seen) != len(all) {
		t.Fatalf("the cursor saw %d of %d events: it skipped some that committed after a higher id", len(seen), len(all))
	}
}

// benchStore opens a store on a fresh schema with n due runs r000000....
func benchStore(b *testing.B, n int) store.Store {
	b.Helper()
	s := openTemp(b)
	ctx := context.Background()
	for i := range n {
		if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: fmt.Sprintf("r%06d", i), Workflow: "wf", Version: "1.0.0",
			GraphHash: "h", Now: t0}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkClaim claims runs one at a time from a queue of due runs.
func BenchmarkClaim(b *testing.B) {
	s := benchStore(b, b.N)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Minute, Limit: 1})
		if err != nil || len(rs) != 1 {
			b.Fatalf("RunClaim = %v, %v", rs, err)
		}
	}
}

// BenchmarkTransitionCommit commits the typical transition of a finished
// step: the step, its attempt and an event, fenced by the run's lease.
func BenchmarkTransitionCommit(b *testing.B) {
	s := benchStore(b, 1)
	ctx := context.Background()
	r := benchClaimed(b, s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := fmt.Sprintf("s%d", i)
		res, err := s.TransitionCommit(ctx, []store.Transition{{RunID: r.ID, Lease: r.Lease, Now: t0,
			Run:      &store.RunUpdate{AttemptsUsed: &i},
			Steps:    []store.StepWrite{{Key: key, Step: key, Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1, Output: []byte(`{"ok":true}`)}},
			Attempts: []store.AttemptWrite{{StepKey: key, Attempt: 1, Status: store.AttemptCompleted, Output: []byte(`{"ok":true}`)}},
			Events:   []store.EventWrite{{Kind: "step_completed", StepKey: key}},
		}})
		if err != nil || res[0].Err != nil {
			b.Fatalf("TransitionCommit = %v, %v", res, err)
		}
	}
}

// BenchmarkStepHeads10000 reads the status of every key of a run of
// 10,000 finished steps (what resuming a long run reads first).
func BenchmarkStepHeads10000(b *testing.B) {
	s := benchStore(b, 1)
	ctx := context.Background()
	r := benchClaimed(b, s)
	out := []byte(`{"v":1}`)
	for i := 0; i < 10000; i += 100 {
		var steps []store.StepWrite
		for k := i; k < i+100; k++ {
			key := fmt.Sprintf("s%d", k)
			steps = append(steps, store.StepWrite{Key: key, Step: key, Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1, Output: out})
		}
		res, err := s.TransitionCommit(ctx, []store.Transition{{RunID: r.ID, Lease: r.Lease, Now: t0, Steps: steps}})
		if err != nil || res[0].Err != nil {
			b.Fatalf("TransitionCommit = %v, %v", res, err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		hs, err := s.StepHeads(ctx, r.ID)
		if err != nil || len(hs) != 10000 {
			b.Fatalf("StepHeads = %d, %v", len(hs), err)
		}
	}
}

// benchClaimed claims the one run of a benchStore.
func benchClaimed(b *testing.B, s store.Store) store.Run {
	b.Helper()
	rs, err := s.RunClaim(context.Background(), store.RunClaimParams{Owner: "w", Now: t0, LeaseFor: time.Hour, Limit: 1})
	if err != nil || len(rs) != 1 {
		b.Fatalf("RunClaim = %v, %v", rs, err)
	}
	return rs[0]
}
