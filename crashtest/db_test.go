package crashtest

import (
	"database/sql"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver, to read attempts directly
)

// The proofs read the SQLite file directly, read-only, for what the
// command line does not print: each attempt's owner and times. The column
// conventions are store/sqlite's (times are unix microseconds, NULL when
// zero).

// openReadOnly opens a flowrun SQLite database for reading only: SQLite
// itself refuses any write on this handle.
func openReadOnly(t *testing.T, path string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.ToSlash(path)}
	db, err := sql.Open("sqlite", u.String()+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatalf("opening %s read-only: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// attempt is one row of step_attempts.
type attempt struct {
	RunID      string
	StepKey    string
	Attempt    int
	Status     string
	Owner      string
	Started    time.Time
	Finished   time.Time // zero while running
	Idempotent string    // the idempotency key
}

// String names the attempt for messages.
func (a attempt) String() string {
	fin := "-"
	if !a.Finished.IsZero() {
		fin = a.Finished.Format("15:04:05.000000")
	}
	return a.StepKey + "#" + strconv.Itoa(a.Attempt) + " " + a.Status + " by " + a.Owner +
		" [" + a.Started.Format("15:04:05.000000") + ", " + fin + "]"
}

// ownerPID is the process id in an attempt owner "host/pid/worker".
func (a attempt) ownerPID() int {
	rest := a.Owner
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		rest = rest[i+1:]
	}
	pid, err := strconv.Atoi(rest)
	if err != nil {
		return -1
	}
	return pid
}

// attempts reads every attempt of the database, or of one run when runID
// is set, in (run, start time, id) order.
func attempts(t *testing.T, db *sql.DB, runID string) []attempt {
	t.Helper()
	q := `SELECT run_id, step_key, attempt, status, COALESCE(owner, ''), COALESCE(started_at, 0),
	             COALESCE(finished_at, 0), COALESCE(idempotency_key, '')
	        FROM step_attempts`
	var args []any
	if runID != "" {
		q += ` WHERE run_id = ?`
		args = append(args, runID)
	}
	q += ` ORDER BY run_id, started_at, id`
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("reading step_attempts: %v", err)
	}
	defer rows.Close()
	var out []attempt
	for rows.Next() {
		var a attempt
		var started, finished int64
		if err := rows.Scan(&a.RunID, &a.StepKey, &a.Attempt, &a.Status, &a.Owner, &started, &finished, &a.Idempotent); err != nil {
			t.Fatalf("reading step_attempts: %v", err)
		}
		a.Started = micros(started)
		a.Finished = micros(finished)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading step_attempts: %v", err)
	}
	return out
}

// runStatusCounts counts the runs of the database by status.
func runStatusCounts(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT status, COUNT(*) FROM runs GROUP BY status`)
	if err != nil {
		t.Fatalf("counting runs: %v", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatalf("counting runs: %v", err)
		}
		out[s] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("counting runs: %v", err)
	}
	return out
}

func micros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

// event is one row of the events table: the run's history in commit order.
type event struct {
	ID      int64
	At      time.Time
	Kind    string
	StepKey string
	Owner   string // the owner of a "claimed" event
	Attempt int    // the attempt of a "step_started" or "interrupted" event
}

// events reads the events of one run in commit (id) order.
func events(t *testing.T, db *sql.DB, runID string) []event {
	t.Helper()
	rows, err := db.Query(`SELECT id, at, kind, COALESCE(step_key, ''), COALESCE(data, '') FROM events WHERE run_id = ? ORDER BY id`, runID)
	if err != nil {
		t.Fatalf("reading events: %v", err)
	}
	defer rows.Close()
	var out []event
	for rows.Next() {
		var e event
		var at int64
		var data string
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.StepKey, &data); err != nil {
			t.Fatalf("reading events: %v", err)
		}
		e.At = micros(at)
		if data != "" {
			var d struct {
				Owner   string `json:"owner"`
				Attempt int    `json:"attempt"`
			}
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				t.Fatalf("event %d of run %s has data that is not a JSON object: %q", e.ID, runID, data)
			}
			e.Owner, e.Attempt = d.Owner, d.Attempt
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading events: %v", err)
	}
	return out
}
