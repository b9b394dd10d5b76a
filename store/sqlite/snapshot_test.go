package sqlite

import (
	"context"
	"crypto/sha256"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func digestOf(t *testing.T, s *Store) [sha256.Size]byte {
	t.Helper()
	h := sha256.New()
	if err := s.Digest(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// seedRun stores a version and a run claimed by owner with one attempt of
// step s running.
func seedRun(t *testing.T, s *Store, owner string) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := s.VersionPut(ctx, store.VersionPutParams{Workflow: "wf", Version: "1.0.0", Major: 1, Hash: "h", Graph: []byte(`{}`), Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: "run-a", Workflow: "wf", Version: "1.0.0", GraphHash: "h", Key: "run-a", Now: now,
		Events: []store.EventWrite{{Kind: "run_created"}}}); err != nil {
		t.Fatal(err)
	}
	runs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: owner, Now: now, LeaseFor: time.Minute, Limit: 1, RunID: "run-a"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("claim: %v (%d runs)", err, len(runs))
	}
	if _, err := s.TransitionCommit(ctx, []store.Transition{{RunID: "run-a", Lease: runs[0].Lease, Now: now,
		Steps:    []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepRunning}},
		Attempts: []store.AttemptWrite{{StepKey: "s", Attempt: 1, Status: store.AttemptRunning, Owner: owner, StartedAt: now}},
		Events:   []store.EventWrite{{Kind: "step_started", StepKey: "s"}}}}); err != nil {
		t.Fatal(err)
	}
}

// TestDigestLeavesOutTheHolder: two stores that hold the same run, claimed
// by different owners (another lease owner, epoch and attempt owner) and
// with other events, digest alike; a step's status or a column not named
// in digestSkipColumns changes the digest.
func TestDigestLeavesOutTheHolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := scratch(t), scratch(t)
	seedRun(t, a, "engine-1")
	seedRun(t, b, "engine-2")
	if _, err := b.w.ExecContext(ctx, `UPDATE runs SET lease_epoch = lease_epoch + 6, lease_expires_at = lease_expires_at + 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.w.ExecContext(ctx, `INSERT INTO events (run_id, kind, at) SELECT run_id, 'run_claimed', at FROM events`); err != nil {
		t.Fatal(err)
	}
	if digestOf(t, a) != digestOf(t, b) {
		t.Fatal("the same run held by another engine digests differently")
	}
	before := digestOf(t, b)
	if _, err := b.w.ExecContext(ctx, `UPDATE steps SET status = 'completed'`); err != nil {
		t.Fatal(err)
	}
	if digestOf(t, b) == before {
		t.Fatal("a step's status does not change the digest")
	}
	before = digestOf(t, b)
	if _, err := b.w.ExecContext(ctx, `UPDATE runs SET available_at = available_at + 1`); err != nil {
		t.Fatal(err)
	}
	if digestOf(t, b) == before {
		t.Fatal("a run's available_at does not change the digest")
	}
}

// TestDigestNamesEveryColumn: every table and column digestSkip* names is
// in the schema (a renamed or dropped lease column would silently enter
// the digest otherwise).
func TestDigestNamesEveryColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := scratch(t)
	have := map[string]bool{}
	rows, err := s.r.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		have[table], have[table+"."+col] = true, true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range digestSkipColumns {
		if !have[name] {
			t.Errorf("digestSkipColumns names %s, which the schema does not have", name)
		}
	}
	for name := range digestSkipTables {
		if !have[name] && name != "sqlite_sequence" { // made by SQLite on the first AUTOINCREMENT insert
			t.Errorf("digestSkipTables names %s, which the schema does not have", name)
		}
	}
}

// TestSnapshotRestore: a snapshot taken before a change, restored, brings
// the store (its digest, and what its reads answer) back to that state.
func TestSnapshotRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := scratch(t)
	seedRun(t, s, "engine-1")
	path := filepath.Join(t.TempDir(), "snap.db")
	if err := s.Snapshot(ctx, path); err != nil {
		t.Fatal(err)
	}
	before := digestOf(t, s)
	if _, err := s.w.ExecContext(ctx, `UPDATE steps SET status = 'completed'`); err != nil {
		t.Fatal(err)
	}
	if digestOf(t, s) == before {
		t.Fatal("the change did not change the digest")
	}
	if err := s.Restore(ctx, path); err != nil {
		t.Fatal(err)
	}
	if digestOf(t, s) != before {
		t.Fatal("the restored store digests differently from the snapshot")
	}
	steps, err := s.StepList(ctx, "run-a")
	if err != nil || len(steps) != 1 || steps[0].Status != store.StepRunning {
		t.Fatalf("after the restore StepList = %+v, %v; want step s running", steps, err)
	}
}
