package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// The benchmarks run under FULL and NORMAL synchronous. BenchmarkRawCommit
// is the floor: one single-row INSERT per BEGIN IMMEDIATE ... COMMIT on the
// same pragmas. The store's numbers are read against it.

var syncModes = []string{"FULL", "NORMAL"}

func BenchmarkRawCommit(b *testing.B) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "raw.db")
			db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(5000)"+
				"&_pragma=journal_mode(WAL)&_pragma=synchronous("+mode+")&_pragma=foreign_keys(1)")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			if _, err := db.Exec(`CREATE TABLE bench (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
				b.Fatal(err)
			}
			ins, err := db.Prepare(`INSERT INTO bench (v) VALUES (?1)`)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				tx, err := db.Begin()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.Stmt(ins).Exec("value " + strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var benchNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// claimed inserts n runs and claims them.
func claimed(b *testing.B, s *sqlite.Store, n int) []store.Run {
	b.Helper()
	for i := range n {
		if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: fmt.Sprintf("run-%04d", i), Workflow: "wf", Version: "1.0.0",
			GraphHash: "h", Inputs: []byte(`{"n":1}`), Now: benchNow}); err != nil {
			b.Fatal(err)
		}
	}
	rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "bench/1/w", Now: benchNow, LeaseFor: time.Hour, Limit: n})
	if err != nil || len(rs) != n {
		b.Fatalf("claim: %d runs, %v", len(rs), err)
	}
	return rs
}

// stepDone is the transition of a step completion: the step's final state,
// its attempt closed with the output, an event, the run's attempt count.
func stepDone(r store.Run, i int) store.Transition {
	key := "step" + strconv.Itoa(i)
	now := benchNow.Add(time.Duration(i) * time.Millisecond)
	out := json.RawMessage(`{"stdout":"deployed build 1234 to production","exit_code":0,"duration_ms":1532}`)
	return store.Transition{RunID: r.ID, Lease: r.Lease, Now: now,
		Run:      &store.RunUpdate{AttemptsUsed: &i},
		Steps:    []store.StepWrite{{Key: key, Step: key, Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1, Output: out, StartedAt: now, FinishedAt: now}},
		Attempts: []store.AttemptWrite{{StepKey: key, Attempt: 1, Status: store.AttemptCompleted, Owner: r.Lease.Owner, StartedAt: now, FinishedAt: now, Output: out}},
		Events:   []store.EventWrite{{Kind: "step_completed", StepKey: key, Data: []byte(`{"attempt":1}`)}},
	}
}

func BenchmarkTransitionCommit(b *testing.B) { benchTransitions(b, stepDone) }

// benchTransitions commits, in each synchronous mode, one transition of
// a claimed run per op, the i-th built by mk.
func benchTransitions(b *testing.B, mk func(store.Run, int) store.Transition) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			s := openTemp(b, sqlite.Options{Synchronous: mode})
			r := claimed(b, s, 1)[0]
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				res, err := s.TransitionCommit(ctx, []store.Transition{mk(r, i)})
				if err != nil || res[0].Err != nil {
					b.Fatal(err, res)
				}
			}
		})
	}
}

func BenchmarkTransitionBatch16(b *testing.B) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			s := openTemp(b, sqlite.Options{Synchronous: mode})
			rs := claimed(b, s, 16)
			ts := make([]store.Transition, len(rs))
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				for j, r := range rs {
					ts[j] = stepDone(r, i)
				}
				if _, err := s.TransitionCommit(ctx, ts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rs)), "ns/transition")
		})
	}
}

func BenchmarkClaim(b *testing.B) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "flowrun.db")
			s, err := sqlite.Open(ctx, path, sqlite.Options{Synchronous: mode})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// 10k due runs, inserted in one transaction behind the store's back.
			const runs = 10000
			db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(5000)")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			for i := range runs {
				if _, err := tx.Exec(`INSERT INTO runs (id, workflow, version, graph_hash, status, created_at, available_at, root_run_id, updated_at)
					VALUES (?1, 'wf', '1.0.0', 'h', 'pending', ?2, ?2, ?1, ?2)`, fmt.Sprintf("run-%05d", i), benchNow.UnixMicro()); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				// The fake time moves 1µs per claim and a lease lasts 100µs:
				// each claim skips the ~100 runs still leased, and the pool
				// of due runs never runs dry.
				now := benchNow.Add(time.Duration(i) * time.Microsecond)
				rs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "bench/1/w", Now: now, LeaseFor: 100 * time.Microsecond, Limit: 1})
				if err != nil || len(rs) != 1 {
					b.Fatal(len(rs), err)
				}
			}
		})
	}
}

// execStep is the transition between two sequential exec steps: step i
// completes (its attempt closed with the output) and step i+1 starts (its
// first attempt opened), with an event each.
func execStep(r store.Run, i int) store.Transition {
	key, next := "step"+strconv.Itoa(i), "step"+strconv.Itoa(i+1)
	now := benchNow.Add(time.Duration(i) * time.Millisecond)
	out := json.RawMessage(`{"exit_code":0,"json":null,"stderr":"","stdout":""}`)
	used := i + 1
	return store.Transition{RunID: r.ID, Lease: r.Lease, Now: now,
		Run: &store.RunUpdate{AttemptsUsed: &used},
		Steps: []store.StepWrite{
			{Key: key, Step: key, Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1, Output: out, StartedAt: now, FinishedAt: now},
			{Key: next, Step: next, Index: -1, Iteration: -1, Status: store.StepRunning, Attempts: 1, StartedAt: now},
		},
		Attempts: []store.AttemptWrite{
			{StepKey: key, Attempt: 1, Status: store.AttemptCompleted, FinishedAt: now, Output: out},
			{StepKey: next, Attempt: 1, Status: store.AttemptRunning, Owner: r.Lease.Owner, StartedAt: now, IdempotencyKey: r.ID + "/" + next},
		},
		Events: []store.EventWrite{
			{Kind: "step_completed", StepKey: key, Data: []byte(`{"attempt":1}`)},
			{Kind: "step_started", StepKey: next, Data: []byte(`{"attempt":1}`)},
		},
	}
}

// BenchmarkTransitionExecStep is the one commit of a sequential exec step.
func BenchmarkTransitionExecStep(b *testing.B) { benchTransitions(b, execStep) }

// BenchmarkStepHeads10000 reads the status of every key of a run of
// 10,000 finished steps (what resuming a long run reads first).
func BenchmarkStepHeads10000(b *testing.B) {
	s := openTemp(b, sqlite.Options{})
	r := claimed(b, s, 1)[0]
	out := json.RawMessage(`{"v":1}`)
	for i := 0; i < 10000; i += 100 {
		var steps []store.StepWrite
		for k := i; k < i+100; k++ {
			key := "s" + strconv.Itoa(k)
			steps = append(steps, store.StepWrite{Key: key, Step: key, Index: -1, Iteration: -1, Status: store.StepCompleted, Attempts: 1, Output: out})
		}
		res, err := s.TransitionCommit(ctx, []store.Transition{{RunID: r.ID, Lease: r.Lease, Now: benchNow, Steps: steps}})
		if err != nil || res[0].Err != nil {
			b.Fatal(err, res)
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
