package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the raw baseline's driver, the store's own
)

// openRaw opens a plain database/sql SQLite handle on path with the
// pragmas of the store's writer (WAL, the synchronous mode, busy timeout,
// foreign keys, its page cache, BEGIN IMMEDIATE) and one connection, as the
// store's writer has.
func openRaw(path, sync string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_txlock", "immediate")
	for _, p := range []string{"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(" + sync + ")", "foreign_keys(1)", "cache_size(-512)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening the raw baseline database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// rawCommits measures single-row commits per second: n transactions of one
// INSERT each, on a file of its own in dir with the same pragmas as the
// store. This is the floor every write figure is read against.
func rawCommits(ctx context.Context, dir, sync string, n int) (Baseline, error) {
	db, err := openRaw(filepath.Join(dir, "raw-"+sync+".db"), sync)
	if err != nil {
		return Baseline{}, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		return Baseline{}, fmt.Errorf("raw baseline: %w", err)
	}
	ins, err := db.PrepareContext(ctx, `INSERT INTO t (v) VALUES (?1)`)
	if err != nil {
		return Baseline{}, fmt.Errorf("raw baseline: %w", err)
	}
	defer ins.Close()
	start := now()
	for i := range n {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return Baseline{}, fmt.Errorf("raw baseline: %w", err)
		}
		if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, "row "+strconv.Itoa(i)); err != nil {
			tx.Rollback()
			return Baseline{}, fmt.Errorf("raw baseline: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return Baseline{}, fmt.Errorf("raw baseline: %w", err)
		}
	}
	return Baseline{Name: "raw single-row commits, " + sync, Value: perSec(n, now().Sub(start)), Unit: "commits/s"}, nil
}

// commitMS turns a commits/s baseline into milliseconds per commit.
func commitMS(b Baseline) Baseline {
	v := 0.0
	if b.Value > 0 {
		v = 1000 / b.Value
	}
	return Baseline{Name: b.Name + " (one commit)", Value: v, Unit: "ms"}
}

// spawnTrue measures the mean time to start and wait for `true` directly
// with os/exec, n times: the process spawn an exec step cannot avoid.
func spawnTrue(ctx context.Context, n int) (time.Duration, error) {
	path, err := exec.LookPath("true")
	if err != nil {
		return 0, fmt.Errorf("spawn baseline: the program true is not on PATH: %w", err)
	}
	start := now()
	for range n {
		if err := exec.CommandContext(ctx, path).Run(); err != nil {
			return 0, fmt.Errorf("spawn baseline: running %s: %w", path, err)
		}
	}
	return now().Sub(start) / time.Duration(n), nil
}

// rawCommitSpawn measures the floor of a durable exec step: n times, one
// single-row commit (as rawCommits, at sync) and then a spawn of true, on a
// file of its own in dir. A commit's fsync and a spawn slow each other
// down when they alternate (caches, the disk's background work), so the
// floor is more than the two measured apart. It returns the time per
// pair.
func rawCommitSpawn(ctx context.Context, dir, sync string, n int) (time.Duration, error) {
	path, err := exec.LookPath("true")
	if err != nil {
		return 0, fmt.Errorf("floor baseline: the program true is not on PATH: %w", err)
	}
	db, err := openRaw(filepath.Join(dir, "floor-"+sync+".db"), sync)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		return 0, fmt.Errorf("floor baseline: %w", err)
	}
	ins, err := db.PrepareContext(ctx, `INSERT INTO t (v) VALUES (?1)`)
	if err != nil {
		return 0, fmt.Errorf("floor baseline: %w", err)
	}
	defer ins.Close()
	start := now()
	for i := range n {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, fmt.Errorf("floor baseline: %w", err)
		}
		if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, "row "+strconv.Itoa(i)); err != nil {
			tx.Rollback()
			return 0, fmt.Errorf("floor baseline: %w", err)
		}
		if err := tx.Commit(); err != nil {
			return 0, fmt.Errorf("floor baseline: %w", err)
		}
		if err := exec.CommandContext(ctx, path).Run(); err != nil {
			return 0, fmt.Errorf("floor baseline: running %s: %w", path, err)
		}
	}
	return now().Sub(start) / time.Duration(n), nil
}

// countAttempts counts the attempts of a run in the store at path, on a
// connection of its own.
func countAttempts(ctx context.Context, path, runID string) (int, error) {
	db, err := openRaw(path, "NORMAL")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM step_attempts WHERE run_id = ?1`, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the attempts of run %s: %w", runID, err)
	}
	return n, nil
}
