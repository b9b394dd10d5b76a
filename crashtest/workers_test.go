package crashtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWorkersProof is issue #4, item 9: several `flowrun worker` processes
// share one SQLite file while `flowrun apply --detach` enqueues runs of
// the 10-step workflow testdata/fleet.hcl; a random worker is SIGKILLed
// and restarted, spread over the work. Then:
//
//   - every run completed, with the output its input calls for;
//   - no two workers ever worked on one run at once (checkExclusive: commit
//     order, attempt times and owners; an attempt was closed interrupted
//     only when its worker had been killed);
//   - every exec step ran to its end once in its completed attempt, and
//     more than once only in attempts a kill cut short (checkExecutions);
//   - nothing failed because the database was busy: no run failed, no
//     enqueue or worker exited with an error, and no worker said "busy" or
//     "locked";
//   - nothing is left running, and every worker drains on SIGTERM.
//
// CI runs it small; scripts/proof runs it at full size (4 workers, 500
// runs, 10 kills). Environment: FLOWRUN_PROOF_WORKERS (default 2),
// FLOWRUN_PROOF_RUNS (40), FLOWRUN_PROOF_KILLS (3),
// FLOWRUN_PROOF_CONCURRENCY (runs per worker, 4), FLOWRUN_PROOF_ENQUEUERS
// (apply processes enqueuing at once, 2), FLOWRUN_PROOF_PREFILL (1: enqueue
// every run before the workers start; default 0: while they work),
// FLOWRUN_PROOF_SEED (1) and FLOWRUN_PROOF_TIMEOUT (how long the runs may
// take, 45s).
func TestWorkersProof(t *testing.T) {
	needBinary(t)
	nWorkers := int(envInt(t, "FLOWRUN_PROOF_WORKERS", 2))
	nRuns := int(envInt(t, "FLOWRUN_PROOF_RUNS", 40))
	nKills := int(envInt(t, "FLOWRUN_PROOF_KILLS", 3))
	concurrency := int(envInt(t, "FLOWRUN_PROOF_CONCURRENCY", 4))
	nEnqueuers := int(envInt(t, "FLOWRUN_PROOF_ENQUEUERS", 2))
	seed := envInt(t, "FLOWRUN_PROOF_SEED", 1)
	timeout := envDuration(t, "FLOWRUN_PROOF_TIMEOUT", 45*time.Second)
	prefill := envInt(t, "FLOWRUN_PROOF_PREFILL", 0) == 1
	if nWorkers < 1 || nRuns < 1 || concurrency < 1 || nEnqueuers < 1 {
		t.Fatal("FLOWRUN_PROOF_WORKERS, _RUNS, _CONCURRENCY and _ENQUEUERS must be at least 1")
	}
	t.Logf("%d workers × %d runs at once, %d runs of 10 steps, %d kills, %d enqueuers, seed %d",
		nWorkers, concurrency, nRuns, nKills, nEnqueuers, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x3017e5))
	wf := testdataPath(t, "fleet.hcl")
	dir := t.TempDir()
	db, log := filepath.Join(dir, "fleet.db"), filepath.Join(dir, "fleet.log")
	began := wall.Now()

	// The first enqueue creates the database and stores the workflow.
	if r := flowrun(t, nil, "--db", db, "apply", wf, "--detach", "--input", "n=0"); r.code != 0 {
		t.Fatalf("apply --detach exited %d; stderr:\n%s", r.code, r.stderr)
	}
	rdb := openReadOnly(t, db)

	workerArgs := []string{"--db", db, "worker", "--concurrency", fmt.Sprint(concurrency)}
	workers := make([]*proc, nWorkers)
	var retired []*proc // killed workers, for their stderr
	starts := 0
	startWorker := func(i int) {
		starts++
		workers[i] = start(t, fmt.Sprintf("worker %d (start %d)", i, starts), []string{"FLEET_LOG=" + log}, workerArgs...)
	}

	// The other runs are enqueued while the workers work, or, with
	// FLOWRUN_PROOF_PREFILL=1, before they start, so that they contend
	// for a full queue.
	enq := startEnqueuers(db, wf, nRuns, nEnqueuers)
	t.Cleanup(enq.stop)
	if prefill {
		enq.wait()
		if err := enq.failed(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d runs enqueued in %s", nRuns, wall.Now().Sub(began).Round(time.Millisecond))
	}
	for i := range workers {
		startWorker(i)
	}

	killed := map[int]killing{}
	deadline := wall.Now().Add(timeout)
	var counts map[string]int
	for kill := 1; ; {
		counts = runStatusCounts(t, rdb)
		if n := counts["failed"] + counts["canceled"]; n > 0 {
			t.Fatalf("%d runs failed or were canceled (%v); the first: %s", n, counts, firstBadRun(t, rdb))
		}
		for _, w := range workers {
			if w.exited() {
				t.Fatalf("%s exited by itself (exit %d); stderr:\n%s", w.name, w.exitCode(), w.stderr())
			}
		}
		if err := enq.failed(); err != nil {
			t.Fatal(err)
		}
		if counts["completed"] == nRuns && enq.finished() {
			break
		}
		// Kill k when k/(kills+1) of the runs have completed, so the kills
		// spread over the work whatever the machine's pace.
		if kill <= nKills && counts["completed"] >= kill*nRuns/(nKills+1) {
			sleep(time.Duration(rng.Int64N(int64(100 * time.Millisecond))))
			i := rng.IntN(nWorkers)
			w := workers[i]
			ok, k := w.kill()
			if !ok {
				t.Fatalf("%s had exited (exit %d) before kill %d; stderr:\n%s", w.name, w.exitCode(), kill, w.stderr())
			}
			killed[w.pid()] = k
			retired = append(retired, w)
			t.Logf("kill %d: %s (pid %d) at %d of %d runs completed", kill, w.name, w.pid(), counts["completed"], nRuns)
			startWorker(i)
			kill++
			continue
		}
		if wall.Now().After(deadline) {
			t.Fatalf("after %s, runs by status: %v (want %d completed); raise FLOWRUN_PROOF_TIMEOUT if the machine is slow\n%s",
				timeout, counts, nRuns, workerLogs(workers))
		}
		sleep(50 * time.Millisecond)
	}
	t.Logf("%d runs completed in %s", nRuns, wall.Now().Sub(began).Round(time.Millisecond))

	// Drain every worker: SIGTERM, exit 0.
	for _, w := range workers {
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatalf("signaling %s: %v", w.name, err)
		}
	}
	for _, w := range workers {
		select {
		case <-w.done:
		case <-time.After(time.Minute):
			t.Fatalf("%s did not drain within a minute of SIGTERM", w.name)
		}
		if w.exitCode() != 0 || !strings.Contains(w.stderr(), "drained and stopped") {
			t.Errorf("%s exited %d after SIGTERM, want 0 and \"drained and stopped\"; stderr:\n%s", w.name, w.exitCode(), w.stderr())
		}
	}

	// The database was never too busy: every enqueue and every worker went
	// through without a store error.
	for _, w := range append(retired, workers...) {
		for _, line := range strings.Split(w.stderr(), "\n") {
			if busyWords.MatchString(line) {
				t.Errorf("%s: %s", w.name, line)
			}
		}
	}

	// Every run completed, with the right output, and the CLI agrees.
	list := flowrun(t, nil, "--db", db, "runs", "--json", "--limit", "0")
	var summaries []struct {
		RunID      string `json:"run_id"`
		Status     string `json:"status"`
		StepsTotal int    `json:"steps_total"`
		StepsDone  int    `json:"steps_done"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &summaries); list.code != 0 || err != nil {
		t.Fatalf("runs --json exited %d (%v):\n%s%s", list.code, err, list.stdout, list.stderr)
	}
	if len(summaries) != nRuns {
		t.Errorf("runs --json lists %d runs, want %d", len(summaries), nRuns)
	}
	for _, s := range summaries {
		if s.Status != "completed" || s.StepsTotal != 10 || s.StepsDone != 10 {
			t.Errorf("run %s is %s with %d of %d steps done, want completed with 10 of 10", s.RunID, s.Status, s.StepsDone, s.StepsTotal)
		}
	}
	checkFleetOutputs(t, rdb, nRuns, false)

	// An exec child of a killed worker lives on for up to its 0.1 s sleep;
	// let the last ones end before reading the log.
	if len(retired) > 0 {
		if after := retiredAt(killed).Add(time.Second); wall.Now().Before(after) {
			sleep(after.Sub(wall.Now()))
		}
	}

	// No two workers at once, every step ran, and more than once only in
	// attempts that a kill cut short; nothing is left running.
	all := attempts(t, rdb, "")
	byRun := map[string][]attempt{}
	byKey := map[string][]attempt{}
	interrupted := 0
	for _, a := range all {
		byRun[a.RunID] = append(byRun[a.RunID], a)
		byKey[a.Idempotent] = append(byKey[a.Idempotent], a)
		switch a.Status {
		case "running":
			t.Errorf("attempt %s of run %s is left running", a, a.RunID)
		case "interrupted":
			interrupted++
		}
	}
	var violations []string
	for id, as := range byRun {
		violations = append(violations, checkExclusive(id, events(t, rdb, id), as, killed)...)
	}
	marks := readMarks(t, log)
	for key, as := range byKey {
		violations = append(violations, checkExecutions(key, as, marks[key])...)
	}
	for key := range marks {
		if byKey[key] == nil {
			violations = append(violations, fmt.Sprintf("%s ran, but the store has no attempt of it", key))
		}
	}
	if want := nRuns * 6; len(byKey) != want {
		violations = append(violations, fmt.Sprintf("the store has attempts of %d exec steps, want %d (6 per run)", len(byKey), want))
	}
	sort.Strings(violations)
	for i, v := range violations {
		if i == 20 {
			t.Errorf("... and %d more violations", len(violations)-20)
			break
		}
		t.Error(v)
	}
	t.Logf("%d attempts, %d interrupted by the %d kills; %d exec steps ran more than once; %d worker processes in all; %s in all",
		len(all), interrupted, len(killed), reran(marks), starts, wall.Now().Sub(began).Round(time.Millisecond))
	if n := orphanOverlaps(readLines(t, log)); n > 0 {
		t.Logf("%d times an exec child of a killed worker was still running when its step's next attempt began (SIGKILL does not reach the action's process group; the idempotency key is what makes this safe)", n)
	}
	if nKills > 0 && interrupted == 0 {
		t.Errorf("no kill interrupted an attempt, so the proof proved little: raise FLOWRUN_PROOF_CONCURRENCY or FLOWRUN_PROOF_RUNS")
	}
}

// busyWords matches what a store error of a busy database says.
var busyWords = regexp.MustCompile(`(?i)busy|locked`)

// fleetOutput is the output "v" of fleet.hcl for input n: exec steps
// compute (v*31+i) % 1000003, set steps (v*7+i) % 1000003.
func fleetOutput(n int64) int64 {
	v := n
	for i := int64(1); i <= 10; i++ {
		switch i {
		case 2, 5, 8, 10:
			v = (v*7 + i) % 1000003
		default:
			v = (v*31 + i) % 1000003
		}
	}
	return v
}

// checkFleetOutputs checks that the runs are inputs 0..n-1, once each,
// and that each one's output is fleetOutput of its input.
//
// SQLite keeps a run's inputs in run_inputs (its migration 0005); Postgres
// keeps them in the runs row.
func checkFleetOutputs(t *testing.T, db *sql.DB, n int, postgres bool) {
	t.Helper()
	query := `SELECT r.id, r.status, COALESCE(i.inputs, r.inputs, ''), COALESCE(r.outputs, '')
		FROM runs r LEFT JOIN run_inputs i ON i.run_id = r.id`
	if postgres {
		query = `SELECT id, status, COALESCE(inputs::text, ''), COALESCE(outputs::text, '') FROM runs`
	}
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("reading runs: %v", err)
	}
	defer rows.Close()
	seen := map[int64]string{}
	for rows.Next() {
		var id, status, inputs, outputs string
		if err := rows.Scan(&id, &status, &inputs, &outputs); err != nil {
			t.Fatalf("reading runs: %v", err)
		}
		var in struct{ N *int64 }
		var out struct{ V *int64 }
		if json.Unmarshal([]byte(inputs), &in) != nil || in.N == nil {
			t.Errorf("run %s has inputs %q, want {\"n\": N}", id, inputs)
			continue
		}
		if prev, dup := seen[*in.N]; dup {
			t.Errorf("runs %s and %s both have input n=%d: one enqueue made two runs", prev, id, *in.N)
		}
		seen[*in.N] = id
		if json.Unmarshal([]byte(outputs), &out) != nil || out.V == nil || *out.V != fleetOutput(*in.N) {
			t.Errorf("run %s (n=%d, %s) has outputs %q, want {\"v\": %d}", id, *in.N, status, outputs, fleetOutput(*in.N))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading runs: %v", err)
	}
	for i := range int64(n) {
		if _, ok := seen[i]; !ok {
			t.Errorf("no run has input n=%d", i)
		}
	}
}

// firstBadRun describes the oldest failed or canceled run.
func firstBadRun(t *testing.T, db *sql.DB) string {
	t.Helper()
	var id, status, errText string
	err := db.QueryRow(`SELECT id, status, COALESCE(error, '') FROM runs WHERE status IN ('failed', 'canceled') ORDER BY created_at LIMIT 1`).
		Scan(&id, &status, &errText)
	if err != nil {
		return fmt.Sprintf("(reading it: %v)", err)
	}
	return fmt.Sprintf("run %s is %s: %s", id, status, errText)
}

// workerLogs is the stderr of the workers, for a failure message.
func workerLogs(ws []*proc) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "--- %s:\n%s", w.name, tail(w.stderr(), 30))
	}
	return b.String()
}

// tail keeps the last n lines of s.
func tail(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// enqueuers run `flowrun apply --detach --input n=I` for I = 1..n-1 from a
// few goroutines at once; the test owns them and waits for them in stop.
type enqueuers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	left   int
	err    error
}

func startEnqueuers(db, wf string, n, parallel int, extra ...string) *enqueuers {
	ctx, cancel := context.WithCancel(context.Background())
	e := &enqueuers{cancel: cancel, left: n - 1}
	next := make(chan int, n)
	for i := 1; i < n; i++ {
		next <- i
	}
	close(next)
	for range parallel {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			for i := range next {
				args := append([]string{"--db", db, "apply", wf, "--detach", "--input", fmt.Sprintf("n=%d", i)}, extra...)
				r, err := runFlowrun(ctx, nil, args...)
				if err == nil && r.code != 0 {
					err = fmt.Errorf("enqueuing run n=%d: apply --detach exited %d; stderr:\n%s", i, r.code, r.stderr)
				}
				e.mu.Lock()
				e.left--
				if err != nil && e.err == nil && ctx.Err() == nil {
					e.err = err
				}
				e.mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	return e
}

// finished reports whether every run is enqueued.
func (e *enqueuers) finished() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.left == 0
}

// failed returns the first enqueue that failed.
func (e *enqueuers) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// wait waits until every enqueue has ended.
func (e *enqueuers) wait() { e.wg.Wait() }

// stop cancels what is still enqueuing and waits for the goroutines.
func (e *enqueuers) stop() {
	e.cancel()
	e.wg.Wait()
}

// retiredAt is when the last killed process was reaped.
func retiredAt(killed map[int]killing) time.Time {
	var last time.Time
	for _, k := range killed {
		if k.reaped.After(last) {
			last = k.reaped
		}
	}
	return last
}
