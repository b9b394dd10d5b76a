package sqlite_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// BenchmarkRunListBigRows lists the first page of runs (50) on a store of
// 200 finished runs whose outputs are small or 1 MiB each. finished_at is
// stored after outputs: a listing that read it from the row would walk
// every output's overflow pages; read from the covering listing index
// (migration 0004) its time does not depend on the outputs' size.
func BenchmarkRunListBigRows(b *testing.B) {
	for _, size := range []int{16, 1 << 20} {
		b.Run(fmt.Sprintf("outputs=%dB", size), func(b *testing.B) {
			s := openTemp(b, sqlite.Options{Synchronous: "NORMAL"})
			out := json.RawMessage(`{"blob":"` + strings.Repeat("x", size) + `"}`)
			const n = 200
			for i := range n {
				now := benchNow.Add(time.Duration(i) * time.Second)
				if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: fmt.Sprintf("run-%04d", i), Workflow: "wf", Version: "1.0.0",
					GraphHash: "h", Inputs: []byte(`{"n":1}`), Now: now, AvailableAt: now}); err != nil {
					b.Fatal(err)
				}
			}
			end := benchNow.Add(time.Hour)
			rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "bench/1/w", Now: end, LeaseFor: time.Hour, Limit: n})
			if err != nil || len(rs) != n {
				b.Fatal(len(rs), err)
			}
			done := store.RunCompleted
			for _, r := range rs {
				res, err := s.TransitionCommit(ctx, []store.Transition{{RunID: r.ID, Lease: r.Lease, Now: end,
					Run: &store.RunUpdate{Status: &done, Outputs: out, FinishedAt: &end, Release: true}}})
				if err != nil || res[0].Err != nil {
					b.Fatal(err, res)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				page, err := s.RunList(ctx, store.RunListParams{Limit: 50})
				if err != nil || len(page) != 50 || page[0].FinishedAt.IsZero() {
					b.Fatal(len(page), err)
				}
			}
		})
	}
}

// BenchmarkTransitionBigInputs commits step completions of a run whose
// inputs are small or 1 MiB. Every transition updates the run's row (its
// fence) and SQLite rewrites a whole row on an update, so inputs kept in
// that row were paid on every commit; in run_inputs (migration 0005) they
// are written once.
func BenchmarkTransitionBigInputs(b *testing.B) {
	for _, size := range []int{16, 1 << 20} {
		b.Run(fmt.Sprintf("inputs=%dB", size), func(b *testing.B) {
			s := openTemp(b, sqlite.Options{Synchronous: "NORMAL"})
			big := json.RawMessage(`{"blob":"` + strings.Repeat("x", size) + `"}`)
			if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: "run-big", Workflow: "wf", Version: "1.0.0",
				GraphHash: "h", Inputs: big, Now: benchNow, AvailableAt: benchNow}); err != nil {
				b.Fatal(err)
			}
			rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "bench/1/w", Now: benchNow, LeaseFor: time.Hour, Limit: 1})
			if err != nil || len(rs) != 1 {
				b.Fatal(len(rs), err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				res, err := s.TransitionCommit(ctx, []store.Transition{stepDone(rs[0], i)})
				if err != nil || res[0].Err != nil {
					b.Fatal(err, res)
				}
			}
		})
	}
}
