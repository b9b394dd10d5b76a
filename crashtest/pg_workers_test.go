package crashtest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPostgresWorkersProof is issue #7's "many hosts, proven": several
// `flowrun worker` processes, each with a host identity of its own
// (--host), share one Postgres schema while `flowrun apply --detach`
// enqueues runs of the 10-step workflow testdata/fleet.hcl. Part-way,
// distinct workers are SIGKILLed, each while it holds runs, and are not
// restarted. Since every worker
// names another host, nobody may reclaim a dead worker's runs by testing
// its pid: they must be taken over when their lease expires. Then:
//
//   - every run completed, with the output its input calls for;
//   - no two workers ever worked on one run at once (checkExclusive, from
//     attempt owners and times and the events' commit order);
//   - every exec step ran to its end once in its completed attempt, and
//     more than once only in attempts a kill cut short (checkExecutions);
//   - each killed worker's runs were taken over by another host, and not
//     before its lease could have expired (--lease after its last
//     heartbeat, which came at most a third of the lease before the kill);
//   - no run failed, no enqueue or worker exited with an error, nothing is
//     left running, and the surviving workers drain on SIGTERM.
//
// It runs only when FLOWRUN_TEST_PG_DURABLE is set (scripts/pg start
// --durable prints it),
// in a schema of its own. CI runs it small; `scripts/proof pg` runs it at
// full size (4 workers, 2,000 runs, 2 kills). Environment:
// FLOWRUN_PG_PROOF_WORKERS (default 3), FLOWRUN_PG_PROOF_RUNS (60),
// FLOWRUN_PG_PROOF_KILLS (2; fewer than the workers),
// FLOWRUN_PG_PROOF_CONCURRENCY (runs per worker, 8),
// FLOWRUN_PG_PROOF_ENQUEUERS (2), FLOWRUN_PG_PROOF_LEASE (3s),
// FLOWRUN_PG_PROOF_PREFILL (1: enqueue every run before the workers
// start; default 0: while they work), FLOWRUN_PG_PROOF_SEED (1) and
// FLOWRUN_PG_PROOF_TIMEOUT (90s).
func TestPostgresWorkersProof(t *testing.T) {
	base := needPostgres(t)
	nWorkers := int(envInt(t, "FLOWRUN_PG_PROOF_WORKERS", 3))
	nRuns := int(envInt(t, "FLOWRUN_PG_PROOF_RUNS", 60))
	nKills := int(envInt(t, "FLOWRUN_PG_PROOF_KILLS", 2))
	concurrency := int(envInt(t, "FLOWRUN_PG_PROOF_CONCURRENCY", 8))
	nEnqueuers := int(envInt(t, "FLOWRUN_PG_PROOF_ENQUEUERS", 2))
	lease := envDuration(t, "FLOWRUN_PG_PROOF_LEASE", 3*time.Second)
	seed := envInt(t, "FLOWRUN_PG_PROOF_SEED", 1)
	timeout := envDuration(t, "FLOWRUN_PG_PROOF_TIMEOUT", 90*time.Second)
	prefill := envInt(t, "FLOWRUN_PG_PROOF_PREFILL", 0) == 1
	if nWorkers < 1 || nRuns < 1 || concurrency < 1 || nEnqueuers < 1 {
		t.Fatal("FLOWRUN_PG_PROOF_WORKERS, _RUNS, _CONCURRENCY and _ENQUEUERS must be at least 1")
	}
	if nKills >= nWorkers {
		t.Fatalf("FLOWRUN_PG_PROOF_KILLS=%d must be fewer than FLOWRUN_PG_PROOF_WORKERS=%d: killed workers are not restarted, and someone must finish the runs", nKills, nWorkers)
	}
	t.Logf("%d workers (distinct hosts) × %d runs at once, %d runs of 10 steps, %d kills, lease %s, %d enqueuers, seed %d",
		nWorkers, concurrency, nRuns, nKills, lease, nEnqueuers, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7e57a6))
	wf := testdataPath(t, "fleet.hcl")
	dsn, rdb := pgSchema(t, base, "workers")
	log := filepath.Join(t.TempDir(), "fleet.log")
	began := wall.Now()

	// The first enqueue creates flowrun's tables and stores the workflow.
	if r := flowrun(t, nil, "--db", dsn, "apply", wf, "--detach", "--input", "n=0"); r.code != 0 {
		t.Fatalf("apply --detach exited %d; stderr:\n%s", r.code, r.stderr)
	}
	// The other runs are enqueued while the workers work, or, with
	// FLOWRUN_PG_PROOF_PREFILL=1, before they start, so that every worker
	// holds its fill of runs when it is killed.
	enq := startEnqueuers(dsn, wf, nRuns, nEnqueuers)
	t.Cleanup(enq.stop)
	if prefill {
		enq.wait()
		if err := enq.failed(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d runs enqueued in %s", nRuns, wall.Now().Sub(began).Round(time.Millisecond))
	}

	workers := make([]*proc, nWorkers)
	for i := range workers {
		workers[i] = start(t, fmt.Sprintf("worker %d (host-%d)", i, i), []string{"FLEET_LOG=" + log, fmt.Sprintf("FLOWRUN_HOST=host-%d", i)},
			"--db", dsn, "worker", "--concurrency", fmt.Sprint(concurrency), "--lease", lease.String())
	}

	killed := map[int]killing{}       // by pid
	dead := map[int]bool{}            // by worker index
	expires := map[string]time.Time{} // by leaseKey(run, holder): the lease a killed worker left
	deadline := wall.Now().Add(timeout)
	for kill := 1; ; {
		counts := runStatusCounts(t, rdb)
		if n := counts["failed"] + counts["canceled"]; n > 0 {
			t.Fatalf("%d runs failed or were canceled (%v); the first: %s", n, counts, firstBadRun(t, rdb))
		}
		for i, w := range workers {
			if !dead[i] && w.exited() {
				t.Fatalf("%s exited by itself (exit %d); stderr:\n%s", w.name, w.exitCode(), w.stderr())
			}
		}
		if err := enq.failed(); err != nil {
			t.Fatal(err)
		}
		if counts["completed"] == nRuns && enq.finished() {
			break
		}
		// Kill k when k/(kills+1) of the runs have completed, each time a
		// worker still alive, so the kills spread over the work.
		if kill <= nKills && counts["completed"] >= kill*nRuns/(nKills+1) {
			// The victim is a live worker that holds runs now: a kill of
			// an idle one (the queue may run dry while runs are enqueued)
			// would leave nothing to take over.
			held := pgHeldByHost(t, rdb)
			var busy []int
			for i := range workers {
				if !dead[i] && held[fmt.Sprintf("host-%d", i)] > 0 {
					busy = append(busy, i)
				}
			}
			if len(busy) == 0 {
				sleep(20 * time.Millisecond)
				continue
			}
			sleep(time.Duration(rng.Int64N(int64(100 * time.Millisecond))))
			i := busy[rng.IntN(len(busy))]
			w := workers[i]
			ok, k := w.kill()
			if !ok {
				t.Fatalf("%s had exited (exit %d) before kill %d; stderr:\n%s", w.name, w.exitCode(), kill, w.stderr())
			}
			killed[w.pid()] = k
			dead[i] = true
			pgLeaseExpiries(t, rdb, fmt.Sprintf("host-%d/%d/", i, w.pid()), expires)
			t.Logf("kill %d: %s (pid %d), holding %d runs, at %d of %d runs completed; it is not restarted",
				kill, w.name, w.pid(), held[fmt.Sprintf("host-%d", i)], counts["completed"], nRuns)
			kill++
			continue
		}
		if wall.Now().After(deadline) {
			t.Fatalf("after %s, runs by status: %v (want %d completed); raise FLOWRUN_PG_PROOF_TIMEOUT if the machine is slow\n%s",
				timeout, counts, nRuns, workerLogs(workers))
		}
		sleep(50 * time.Millisecond)
	}
	t.Logf("%d runs completed in %s", nRuns, wall.Now().Sub(began).Round(time.Millisecond))

	// Drain the survivors: SIGTERM, exit 0.
	for i, w := range workers {
		if !dead[i] {
			if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatalf("signaling %s: %v", w.name, err)
			}
		}
	}
	for i, w := range workers {
		if dead[i] {
			continue
		}
		select {
		case <-w.done:
		case <-time.After(time.Minute):
			t.Fatalf("%s did not drain within a minute of SIGTERM", w.name)
		}
		if w.exitCode() != 0 || !strings.Contains(w.stderr(), "drained and stopped") {
			t.Errorf("%s exited %d after SIGTERM, want 0 and \"drained and stopped\"; stderr:\n%s", w.name, w.exitCode(), w.stderr())
		}
	}
	checkFleetOutputs(t, rdb, nRuns, true)

	// An exec child of a killed worker lives on for up to its 0.1 s sleep;
	// let the last ones end before reading the log.
	if after := retiredAt(killed).Add(time.Second); len(killed) > 0 && wall.Now().Before(after) {
		sleep(after.Sub(wall.Now()))
	}

	all := attempts(t, rdb, "")
	evs := pgEvents(t, rdb)
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
	if len(byRun) != nRuns {
		t.Errorf("the store has attempts of %d runs, want %d", len(byRun), nRuns)
	}
	var violations []string
	for id, as := range byRun {
		violations = append(violations, checkExclusive(id, evs[id], as, killed)...)
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
	takeovers, takeViolations := checkTakeovers(evs, killed, expires, lease)
	violations = append(violations, takeViolations...)
	sort.Strings(violations)
	for i, v := range violations {
		if i == 20 {
			t.Errorf("... and %d more violations", len(violations)-20)
			break
		}
		t.Error(v)
	}
	for pid, ds := range takeovers {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		t.Logf("worker pid %d: %d runs taken over by other hosts, %s to %s after the kill (lease %s)",
			pid, len(ds), ds[0].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond), lease)
	}
	t.Logf("%d attempts, %d interrupted by the %d kills; %d exec steps ran more than once; %s in all",
		len(all), interrupted, len(killed), reran(marks), wall.Now().Sub(began).Round(time.Millisecond))
	if nKills > 0 && len(takeovers) < nKills {
		t.Errorf("only %d of the %d killed workers held runs that others took over, so the proof proved little: raise FLOWRUN_PG_PROOF_CONCURRENCY or FLOWRUN_PG_PROOF_RUNS", len(takeovers), nKills)
	}
}

// checkTakeovers finds, in each run's events, the claims of a run whose
// previous holder was a killed process, made after the kill: the
// takeovers. It returns each killed pid's takeover delays (claim time
// minus kill time) and one sentence per takeover that came before the
// dead holder's lease had expired. The expiry is the one the store held
// once the holder was dead (expires, read right after each kill; no
// heartbeat can move it after that); a run missing there is bounded by
// the holder's own claim plus one lease, which a claim grants and a
// heartbeat only extends. (A takeover by pid test would come at once.) A
// small slack covers the store's rounding. Nothing assumes the holder's
// heartbeats came on time: on a loaded machine they can lag.
func checkTakeovers(evs map[string][]event, killed map[int]killing, expires map[string]time.Time, lease time.Duration) (map[int][]time.Duration, []string) {
	const slack = 20 * time.Millisecond
	took := map[int][]time.Duration{}
	var bad []string
	for runID, es := range evs {
		holder := ""
		var claimedAt time.Time
		for _, ev := range es {
			if ev.Kind != "claimed" {
				continue
			}
			pid := attempt{Owner: holder}.ownerPID()
			if k, ok := killed[pid]; ok && holder != "" && ev.Owner != holder && !ev.At.Before(k.sent.Truncate(time.Microsecond)) {
				d := ev.At.Sub(k.sent)
				took[pid] = append(took[pid], d)
				if hostOf(ev.Owner) == hostOf(holder) {
					bad = append(bad, fmt.Sprintf("run %s: %s took over from killed %s on the same host; every worker of the proof has a host of its own", runID, ev.Owner, holder))
				}
				exp, known := expires[leaseKey(runID, holder)]
				if !known {
					exp = claimedAt.Add(lease)
				}
				if ev.At.Before(exp.Add(-slack)) {
					bad = append(bad, fmt.Sprintf("run %s: %s took over from killed %s %s after the kill, %s before its lease expired",
						runID, ev.Owner, holder, d.Round(time.Millisecond), exp.Sub(ev.At).Round(time.Millisecond)))
				}
			}
			holder, claimedAt = ev.Owner, ev.At
		}
	}
	return took, bad
}

// leaseKey keys a lease expiry by run and holder: a run can be held, in
// turn, by two workers that are both killed, and each takeover must be
// checked against the lease of the holder it took over from.
func leaseKey(runID, owner string) string { return runID + "\x00" + owner }

// pgLeaseExpiries reads the lease expiry of every run that the given
// owner still holds, keyed by leaseKey.
func pgLeaseExpiries(t *testing.T, db *sql.DB, ownerPrefix string, into map[string]time.Time) {
	t.Helper()
	rows, err := db.Query(`SELECT id, lease_owner, lease_expires_at FROM runs WHERE lease_owner LIKE $1 AND lease_expires_at IS NOT NULL`, ownerPrefix+"%")
	if err != nil {
		t.Fatalf("reading leases: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, owner string
		var us int64
		if err := rows.Scan(&id, &owner, &us); err != nil {
			t.Fatalf("reading leases: %v", err)
		}
		into[leaseKey(id, owner)] = time.UnixMicro(us)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading leases: %v", err)
	}
}

// hostOf is the host of an owner "host/pid/worker".
func hostOf(owner string) string {
	host, _, _ := strings.Cut(owner, "/")
	return host
}

// pgHeldByHost counts the running runs leased to each host.
func pgHeldByHost(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT lease_owner, COUNT(*) FROM runs WHERE status = 'running' AND lease_owner IS NOT NULL GROUP BY lease_owner`)
	if err != nil {
		t.Fatalf("counting leased runs: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var owner string
		var n int
		if err := rows.Scan(&owner, &n); err != nil {
			t.Fatalf("counting leased runs: %v", err)
		}
		out[hostOf(owner)] += n
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("counting leased runs: %v", err)
	}
	return out
}
