package crashtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The Postgres proofs give each test a schema of its own in the database
// of FLOWRUN_TEST_PG_DURABLE (scripts/pg start --durable prints it), point
// the flowrun processes at it with search_path, and read what the command
// line does not print (attempt owners and times, events) through a
// read-only connection. Column conventions are store/postgres's, the same
// as store/sqlite's: times are BIGINT unix microseconds, NULL when zero.
//
// They run only against a durable server: one with fsync,
// synchronous_commit or full_page_writes off may lose commits it has
// acknowledged when it crashes, and a proof that nothing is lost or done
// twice means nothing there. scripts/pg's default server (FLOWRUN_TEST_PG)
// is such a fast one, for the unit tests.

// durableEnv names the DSN of the durable test server.
const durableEnv = "FLOWRUN_TEST_PG_DURABLE"

// needPostgres returns FLOWRUN_TEST_PG_DURABLE, or skips the test when it
// is unset. It fails the test when that server does not commit durably.
func needPostgres(t *testing.T) string {
	t.Helper()
	needBinary(t)
	dsn := os.Getenv(durableEnv)
	if dsn == "" {
		t.Skip("needs a durable Postgres server: set " + durableEnv + " (eval \"$(scripts/pg start --durable)\" starts a local one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", durableEnv, err)
	}
	defer conn.Close(ctx)
	if err := checkDurable(ctx, conn); err != nil {
		t.Fatalf("%s: %v; use scripts/pg start --durable", durableEnv, err)
	}
	return dsn
}

// checkDurable returns an error naming the settings among fsync,
// synchronous_commit and full_page_writes that the server has off: a
// crash proof needs every commit the server acknowledged to survive.
func checkDurable(ctx context.Context, conn *pgx.Conn) error {
	var off []string
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return fmt.Errorf("reading the server's %s: %w", name, err)
		}
		if v == "off" {
			off = append(off, name)
		}
	}
	if len(off) > 0 {
		return fmt.Errorf("the server runs with %s off, so a crash may lose commits it acknowledged", strings.Join(off, ", "))
	}
	return nil
}

// pgSchema creates a fresh schema in the database of base, drops it at the
// end of the test, and returns the DSN of flowrun processes working in it
// and a read-only handle on it for the checks.
func pgSchema(t *testing.T, base, name string) (dsn string, ro *sql.DB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	schema := fmt.Sprintf("crash_%s_%d_%d", name, os.Getpid(), wall.Now().UnixNano())
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to %s: %v", durableEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("connecting to drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	dsn = withParams(t, base, map[string]string{"search_path": schema})
	roDSN := withParams(t, dsn, map[string]string{"default_transaction_read_only": "on"})
	ro = sql.OpenDB(pgxConnector{dsn: roDSN})
	t.Cleanup(func() { ro.Close() })
	return dsn, ro
}

// withParams returns the URL DSN with the query parameters set.
func withParams(t *testing.T, dsn string, params map[string]string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%q: want a postgres:// URL such as scripts/pg start --durable prints", dsn)
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// pgEvents reads the events of every run, each run's in commit (id) order.
func pgEvents(t *testing.T, db *sql.DB) map[string][]event {
	t.Helper()
	rows, err := db.Query(`SELECT run_id, id, at, kind, COALESCE(step_key, ''), COALESCE(data, '') FROM events ORDER BY run_id, id`)
	if err != nil {
		t.Fatalf("reading events: %v", err)
	}
	defer rows.Close()
	out := map[string][]event{}
	for rows.Next() {
		var e event
		var runID, data string
		var at int64
		if err := rows.Scan(&runID, &e.ID, &at, &e.Kind, &e.StepKey, &data); err != nil {
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
		out[runID] = append(out[runID], e)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading events: %v", err)
	}
	return out
}

// stepsDone counts the steps of the database that completed.
func stepsDone(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM steps WHERE status = 'completed'`).Scan(&n); err != nil {
		t.Fatalf("counting completed steps: %v", err)
	}
	return n
}
