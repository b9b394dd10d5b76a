package crashtest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPostgresScaling is issue #7's speed benchmark: the same batch of runs
// of testdata/bench.hcl (10 steps, 5 of them http calls to a server in this
// test that answers after FLOWRUN_PG_BENCH_SLEEP) worked off by 1, 2 and 4
// `flowrun worker`
// processes in turn, each with the same --concurrency, against one
// Postgres server, each in a fresh schema. Every batch is enqueued before
// its workers start; the clock runs from their start until every run has
// completed. It logs steps/s and runs/s of each, and the ratio of 4 workers
// to 1, and fails when that ratio is below FLOWRUN_PG_BENCH_MIN_RATIO.
//
// A benchmark, not a proof: it runs only with FLOWRUN_PG_BENCH=1 (and
// FLOWRUN_TEST_PG_DURABLE); `scripts/proof pg-bench` runs it. Environment:
// FLOWRUN_PG_BENCH_RUNS (runs per batch, default 480),
// FLOWRUN_PG_BENCH_CONCURRENCY (runs per worker at once, 8),
// FLOWRUN_PG_BENCH_SLEEP (seconds each http call waits, 0.05),
// FLOWRUN_PG_BENCH_WORKERS (the worker counts, "1 2 4"),
// FLOWRUN_PG_BENCH_MIN_RATIO (2.5) and FLOWRUN_PG_BENCH_TIMEOUT (per
// batch, 5m).
func TestPostgresScaling(t *testing.T) {
	base := needPostgres(t)
	if os.Getenv("FLOWRUN_PG_BENCH") != "1" {
		t.Skip("a benchmark: set FLOWRUN_PG_BENCH=1 to run it (scripts/proof pg-bench does)")
	}
	nRuns := int(envInt(t, "FLOWRUN_PG_BENCH_RUNS", 480))
	concurrency := int(envInt(t, "FLOWRUN_PG_BENCH_CONCURRENCY", 8))
	timeout := envDuration(t, "FLOWRUN_PG_BENCH_TIMEOUT", 5*time.Minute)
	sleepFor := envOr("FLOWRUN_PG_BENCH_SLEEP", "0.05")
	if f, err := strconv.ParseFloat(sleepFor, 64); err != nil || f < 0 {
		t.Fatalf("FLOWRUN_PG_BENCH_SLEEP=%q: want seconds such as 0.05", sleepFor)
	}
	minRatio, err := strconv.ParseFloat(envOr("FLOWRUN_PG_BENCH_MIN_RATIO", "2.5"), 64)
	if err != nil {
		t.Fatalf("FLOWRUN_PG_BENCH_MIN_RATIO=%q: want a number such as 2.5", os.Getenv("FLOWRUN_PG_BENCH_MIN_RATIO"))
	}
	var counts []int
	for _, f := range strings.Fields(envOr("FLOWRUN_PG_BENCH_WORKERS", "1 2 4")) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			t.Fatalf("FLOWRUN_PG_BENCH_WORKERS=%q: want worker counts such as \"1 2 4\"", os.Getenv("FLOWRUN_PG_BENCH_WORKERS"))
		}
		counts = append(counts, n)
	}
	if nRuns < 1 || concurrency < 1 {
		t.Fatal("FLOWRUN_PG_BENCH_RUNS and _CONCURRENCY must be at least 1")
	}
	t.Logf("%d runs of 10 steps per batch, %d runs per worker at once, http calls wait %ss", nRuns, concurrency, sleepFor)

	type figure struct {
		workers            int
		took               time.Duration
		stepsPerS, runsPer float64
	}
	var figs []figure
	for _, n := range counts {
		took, steps := benchBatch(t, base, n, nRuns, concurrency, sleepFor, timeout)
		f := figure{workers: n, took: took, stepsPerS: float64(steps) / took.Seconds(), runsPer: float64(nRuns) / took.Seconds()}
		figs = append(figs, f)
		t.Logf("%d worker(s): %d runs, %d steps in %s: %.1f steps/s, %.2f runs/s", n, nRuns, steps, took.Round(time.Millisecond), f.stepsPerS, f.runsPer)
	}
	var one, four *figure
	for i := range figs {
		switch figs[i].workers {
		case 1:
			one = &figs[i]
		case 4:
			four = &figs[i]
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "workers  steps/s  runs/s  vs 1 worker\n")
	for _, f := range figs {
		ratio := "-"
		if one != nil {
			ratio = fmt.Sprintf("%.2fx", f.stepsPerS/one.stepsPerS)
		}
		fmt.Fprintf(&b, "%7d  %7.1f  %6.2f  %s\n", f.workers, f.stepsPerS, f.runsPer, ratio)
	}
	t.Logf("figures:\n%s", b.String())
	if one != nil && four != nil {
		ratio := four.stepsPerS / one.stepsPerS
		t.Logf("scaling: 4 workers reach %.2fx the steps/s of 1 worker (want at least %.2fx)", ratio, minRatio)
		if ratio < minRatio {
			t.Errorf("4 workers reached only %.2fx the throughput of 1 worker, want at least %.2fx", ratio, minRatio)
		}
	}
}

// benchBatch enqueues nRuns runs of bench.hcl in a fresh schema, then
// starts nWorkers workers and waits until every run has completed. It
// returns the time from the workers' start to the last completion and the
// steps completed.
func benchBatch(t *testing.T, base string, nWorkers, nRuns, concurrency int, sleepFor string, timeout time.Duration) (time.Duration, int) {
	t.Helper()
	wf := testdataPath(t, "bench.hcl")
	dsn, rdb := pgSchema(t, base, fmt.Sprintf("bench%d", nWorkers))
	srv := benchServer(t, sleepFor)
	if r := flowrun(t, nil, "--db", dsn, "apply", wf, "--detach", "--input", "n=0", "--input", "base="+srv); r.code != 0 {
		t.Fatalf("apply --detach exited %d; stderr:\n%s", r.code, r.stderr)
	}
	enq := startEnqueuers(dsn, wf, nRuns, 4, "--input", "base="+srv)
	enq.wait()
	if err := enq.failed(); err != nil {
		t.Fatal(err)
	}

	began := wall.Now()
	workers := make([]*proc, nWorkers)
	for i := range workers {
		workers[i] = start(t, fmt.Sprintf("bench worker %d of %d", i, nWorkers),
			[]string{fmt.Sprintf("FLOWRUN_HOST=bench-%d", i)},
			"--db", dsn, "worker", "--concurrency", fmt.Sprint(concurrency))
	}
	deadline := began.Add(timeout)
	var took time.Duration
	for {
		counts := runStatusCounts(t, rdb)
		if n := counts["failed"] + counts["canceled"]; n > 0 {
			t.Fatalf("%d runs failed or were canceled (%v); the first: %s", n, counts, firstBadRun(t, rdb))
		}
		if counts["completed"] == nRuns {
			took = wall.Now().Sub(began)
			break
		}
		for _, w := range workers {
			if w.exited() {
				t.Fatalf("%s exited by itself (exit %d); stderr:\n%s", w.name, w.exitCode(), w.stderr())
			}
		}
		if wall.Now().After(deadline) {
			t.Fatalf("after %s, runs by status: %v (want %d completed); raise FLOWRUN_PG_BENCH_TIMEOUT\n%s", timeout, counts, nRuns, workerLogs(workers))
		}
		sleep(20 * time.Millisecond)
	}
	for _, w := range workers {
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatalf("signaling %s: %v", w.name, err)
		}
	}
	for _, w := range workers {
		<-w.done
		if w.exitCode() != 0 {
			t.Errorf("%s exited %d after SIGTERM, want 0; stderr:\n%s", w.name, w.exitCode(), w.stderr())
		}
	}
	checkBenchOutputs(t, rdb, nRuns)
	return took, stepsDone(t, rdb)
}

// benchServer serves GET /inc?n=N: after waiting sleepFor seconds (an
// action waiting on something outside), it answers {"n": N+1}. It costs the
// workers almost no CPU per step, unlike spawning a process, so the
// benchmark measures the store and the workers, not fork and exec on a
// small machine. It returns the server's base URL.
func benchServer(t *testing.T, sleepFor string) string {
	t.Helper()
	secs, err := strconv.ParseFloat(sleepFor, 64)
	if err != nil {
		t.Fatal(err)
	}
	delay := time.Duration(secs * float64(time.Second))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		if r.URL.Path != "/inc" || err != nil {
			http.Error(w, "want GET /inc?n=INTEGER", http.StatusBadRequest)
			return
		}
		sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"n": %d}`, n+1)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// checkBenchOutputs checks that there are n runs and every one's output
// is its input plus 10: the benchmark counts only work done right.
func checkBenchOutputs(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	rows, err := db.Query(`SELECT id, COALESCE(inputs, ''), COALESCE(outputs, '') FROM runs`)
	if err != nil {
		t.Fatalf("reading runs: %v", err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var id, inputs, outputs string
		if err := rows.Scan(&id, &inputs, &outputs); err != nil {
			t.Fatalf("reading runs: %v", err)
		}
		seen++
		var in struct{ N *int64 }
		var out struct{ V *int64 }
		if json.Unmarshal([]byte(inputs), &in) != nil || in.N == nil ||
			json.Unmarshal([]byte(outputs), &out) != nil || out.V == nil || *out.V != *in.N+10 {
			t.Errorf("run %s has inputs %q and outputs %q, want {\"v\": n+10}", id, inputs, outputs)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading runs: %v", err)
	}
	if seen != n {
		t.Errorf("the benchmark's schema holds %d runs, want %d", seen, n)
	}
}

// envOr reads a setting from the environment, or returns def.
func envOr(name, def string) string {
	if s := os.Getenv(name); s != "" {
		return s
	}
	return def
}
