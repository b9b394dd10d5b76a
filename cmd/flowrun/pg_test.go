package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdPGSchema creates a schema of its own on the FLOWRUN_TEST_PG server,
// dropped when the script ends, and sets PGDB to a DSN for it (with a
// password, which the test server ignores and no message may show) and
// PGAPP to the application_name of that DSN's connections:
//
//	pgschema
func cmdPGSchema(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pgschema")
	}
	base := os.Getenv("FLOWRUN_TEST_PG")
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "flowrun_script_" + hex.EncodeToString(b)
	pgAdmin(ts, base, "CREATE SCHEMA "+schema)
	ts.Defer(func() { pgAdmin(ts, base, "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(base)
	ts.Check(err)
	u.User = url.UserPassword(u.User.Username(), "s3cret-pw")
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	ts.Setenv("PGDB", u.String())
	ts.Setenv("PGAPP", schema)
	ts.Setenv("PGSCHEMA", schema)
}

func pgAdmin(ts *testscript.TestScript, dsn, sql string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	ts.Check(err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	ts.Check(err)
}

// cmdPGLock takes an ACCESS EXCLUSIVE lock on the runs table of the
// script's schema and holds it until the script ends: every read of runs
// waits for it, as a statement that runs long would run on.
//
//	pglock
func cmdPGLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pglock")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv("FLOWRUN_TEST_PG"))
	ts.Check(err)
	tx, err := conn.Begin(ctx)
	ts.Check(err)
	_, err = tx.Exec(ctx, "LOCK TABLE "+ts.Getenv("PGSCHEMA")+".runs IN ACCESS EXCLUSIVE MODE")
	ts.Check(err)
	ts.Defer(func() {
		_ = tx.Rollback(ctx)
		conn.Close(ctx)
	})
}

// cmdPGBackends waits, at most ten seconds, until exactly N backends of
// the script's connections (PGAPP) are running a statement on runs, and
// fails if that does not happen:
//
//	pgbackends N
func cmdPGBackends(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgbackends N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv("FLOWRUN_TEST_PG"))
	ts.Check(err)
	defer conn.Close(ctx)
	var n int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ts.Check(conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND state = 'active' AND query LIKE '%FROM runs%'`, ts.Getenv("PGAPP")).Scan(&n))
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%d backends of %s run a statement on runs after 10s, want %d", n, ts.Getenv("PGAPP"), want)
		}
	}
}

// cmdPGTables fails unless the script's schema (pgschema) holds exactly N
// tables:
//
//	pgtables N
func cmdPGTables(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgtables N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv("FLOWRUN_TEST_PG"))
	ts.Check(err)
	defer conn.Close(ctx)
	var n int
	ts.Check(conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = $1`, ts.Getenv("PGSCHEMA")).Scan(&n))
	if n != want {
		ts.Fatalf("schema %s holds %d tables, want %d", ts.Getenv("PGSCHEMA"), n, want)
	}
}

// cmdPGExec runs one statement in the script's schema (pgschema), as a
// newer flowrun or another program could have left it:
//
//	pgexec SQL
func cmdPGExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgexec SQL")
	}
	pgAdmin(ts, os.Getenv("FLOWRUN_TEST_PG"), "SET search_path = "+ts.Getenv("PGSCHEMA")+"; "+args[0])
}
