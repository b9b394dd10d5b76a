package crashtest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scheduledWorkflow fires every second; overlap allow (the runs are
// independent) and catch_up all with room for every slot of the test, so
// the spec's count is exact: every slot after the activation and up to the
// pause fires, once, whichever worker is alive (spec/semantics.md §18).
const scheduledWorkflow = `workflow "every" {
  version = "1.0.0"
  input "at" { type = string }
  schedule "tick" {
    every        = "1s"
    overlap      = "allow"
    catch_up     = "all"
    max_catch_up = 100
    inputs       = { at = "{{ schedule.time }}" }
  }
  step "s" {
    set { at = "{{ input.at }}" }
  }
}
`

// TestSchedulesProof is issue #19's proof with real processes: a workflow
// with every = "1s" and four flowrun worker processes on one SQLite file
// for FLOWRUN_SCHED_PROOF_SECONDS (default 16); one worker is SIGKILLed
// twice (at a third and at two thirds) and restarted after a second (with
// FLOWRUN_SCHED_PROOF_WORKERS=1 nobody fires meanwhile, and the restarted
// worker's catch-up fires the slots missed). Then the schedule is paused
// and:
//
//   - every slot from the first after the activation to the last before
//     the pause is recorded fired, once (the primary key), none skipped and
//     none missing, and the scheduler kept up to within a few seconds;
//   - each fire's run exists, with the key schedule:tick@SLOT and the slot
//     as its input, and no two runs share a slot: one run per slot;
//   - every run completes, and every worker drains on SIGTERM.
func TestSchedulesProof(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "sched.db")
	wf := filepath.Join(dir, "every.hcl")
	if err := os.WriteFile(wf, []byte(scheduledWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := flowrun(t, nil, "--db", db, "apply", wf); r.code != 0 {
		t.Fatalf("apply exited %d; stderr:\n%s", r.code, r.stderr)
	}
	schedulesProof(t, db, openReadOnly(t, db), int(envInt(t, "FLOWRUN_SCHED_PROOF_WORKERS", 4)))
}

// TestPostgresSchedulesProof is TestSchedulesProof on Postgres
// (FLOWRUN_TEST_PG_DURABLE; scripts/pg start --durable).
func TestPostgresSchedulesProof(t *testing.T) {
	base := needPostgres(t)
	dsn, ro := pgSchema(t, base, "schedules")
	wf := filepath.Join(t.TempDir(), "every.hcl")
	if err := os.WriteFile(wf, []byte(scheduledWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := flowrun(t, nil, "--db", dsn, "apply", wf); r.code != 0 {
		t.Fatalf("apply exited %d; stderr:\n%s", r.code, r.stderr)
	}
	schedulesProof(t, dsn, ro, int(envInt(t, "FLOWRUN_SCHED_PROOF_WORKERS", 4)))
}

func schedulesProof(t *testing.T, db string, rdb *sql.DB, nWorkers int) {
	seconds := envInt(t, "FLOWRUN_SCHED_PROOF_SECONDS", 16)
	span := time.Duration(seconds) * time.Second
	workers := make([]*proc, nWorkers)
	starts := 0
	startWorker := func(i int) {
		starts++
		workers[i] = start(t, fmt.Sprintf("worker %d (start %d)", i, starts), nil, "--db", db, "worker")
	}
	for i := range workers {
		startWorker(i)
	}
	began := wall.Now()
	for kill := 1; kill <= 2; kill++ {
		sleep(began.Add(span * time.Duration(kill) / 3).Sub(wall.Now()))
		w := workers[0]
		if ok, _ := w.kill(); !ok {
			t.Fatalf("%s had exited (exit %d) before kill %d; stderr:\n%s", w.name, w.exitCode(), kill, w.stderr())
		}
		t.Logf("kill %d: %s (pid %d) at %s", kill, w.name, w.pid(), wall.Now().Sub(began).Round(time.Millisecond))
		sleep(1500 * time.Millisecond) // at least one slot comes due while it is dead
		startWorker(0)
	}
	sleep(began.Add(span).Sub(wall.Now()))
	pausedAt := wall.Now()
	if r := flowrun(t, nil, "--db", db, "schedules", "pause", "every/tick"); r.code != 0 {
		t.Fatalf("schedules pause exited %d; stderr:\n%s", r.code, r.stderr)
	}

	// Every run completes.
	deadline := wall.Now().Add(30 * time.Second)
	for {
		var open int
		if err := rdb.QueryRow(`SELECT COUNT(*) FROM runs WHERE workflow = 'every' AND status NOT IN ('completed')`).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if open == 0 {
			break
		}
		if wall.Now().After(deadline) {
			t.Fatalf("%d runs not completed 30 s after the pause", open)
		}
		sleep(100 * time.Millisecond)
	}
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
		if w.exitCode() != 0 {
			t.Errorf("%s exited %d after SIGTERM; stderr:\n%s", w.name, w.exitCode(), w.stderr())
		}
	}

	var since int64
	if err := rdb.QueryRow(`SELECT since FROM schedules WHERE workflow = 'every' AND name = 'tick'`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	rows, err := rdb.Query(`SELECT f.slot, f.status, COALESCE(f.reason, ''), COALESCE(f.run_id, ''), COALESCE(r.key, '')
		FROM schedule_fires f LEFT JOIN runs r ON r.id = f.run_id
		WHERE f.workflow = 'every' AND f.schedule = 'tick' ORDER BY f.slot`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var slots []time.Time
	var runIDs []string
	for rows.Next() {
		var us int64
		var status, reason, runID, key string
		if err := rows.Scan(&us, &status, &reason, &runID, &key); err != nil {
			t.Fatal(err)
		}
		slot := time.UnixMicro(us).UTC()
		want := "schedule:tick@" + slot.Format(time.RFC3339Nano)
		switch {
		case status != "fired":
			t.Errorf("slot %s was %s (%s), want fired", slot, status, reason)
		case runID == "" || key != want:
			t.Errorf("slot %s: run %q has key %q, want a run with key %q", slot, runID, key, want)
		}
		slots = append(slots, slot)
		runIDs = append(runIDs, runID)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	first := time.UnixMicro(since).UTC().Truncate(time.Second).Add(time.Second)
	if len(slots) == 0 || !slots[0].Equal(first) {
		t.Fatalf("the first slot fired is %v, want %s, the first after the activation", slots[:min(1, len(slots))], first)
	}
	for i, s := range slots {
		if want := first.Add(time.Duration(i) * time.Second); !s.Equal(want) {
			t.Fatalf("fire %d is slot %s, want %s: a slot is missing", i, s, want)
		}
	}
	last := slots[len(slots)-1]
	if lag := pausedAt.Sub(last); lag > 3*time.Second {
		t.Errorf("the last slot fired is %s, %s before the pause: the scheduler fell behind", last, lag)
	}
	// The runs' inputs are their slots' (schedule.time), through the CLI.
	for _, i := range []int{0, len(slots) / 2, len(slots) - 1} {
		r := flowrun(t, nil, "--db", db, "show", runIDs[i], "--json")
		if want := `"at": "` + slots[i].Format(time.RFC3339) + `"`; r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("show %s (slot %s) exited %d; want %s in:\n%s", runIDs[i], slots[i], r.code, want, r.stdout)
		}
	}
	var runs, keys int
	if err := rdb.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT key) FROM runs WHERE workflow = 'every'`).Scan(&runs, &keys); err != nil {
		t.Fatal(err)
	}
	if runs != len(slots) || keys != runs {
		t.Errorf("%d runs with %d distinct keys for %d slots fired: want one run per slot", runs, keys, len(slots))
	}
	t.Logf("%d slots in %s, each fired once, by %d workers with 2 kills", len(slots), last.Sub(first)+time.Second, nWorkers)
}
