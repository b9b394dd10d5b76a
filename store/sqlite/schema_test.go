package sqlite

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite store/sqlite/schema.sql from the migrations")

// migratedDB builds a database the long way, every migration in turn,
// and returns it open.
func migratedDB(t *testing.T) *sql.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "migrated.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, createMigrationsSQL); err != nil {
		t.Fatal(err)
	}
	if _, err := migrateFrom(ctx, tx, ms, 0); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestFreshSchema: schema.sql is what the migrations build (-update-schema
// rewrites it), and a new store created from it holds the same schema,
// the same recorded migrations and no rows, as one migrated step by step.
func TestFreshSchema(t *testing.T) {
	ctx := context.Background()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	migrated := migratedDB(t)
	dump, err := dumpSchema(ctx, migrated)
	if err != nil {
		t.Fatal(err)
	}
	want := "-- after migration " + strconv.Itoa(len(ms)) + "\n" + dump
	if *updateSchema {
		if err := os.WriteFile("schema.sql", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if freshSchema != want {
		t.Fatalf("schema.sql is not the schema the migrations build; run: go test ./store/sqlite -run TestFreshSchema -update-schema")
	}

	st, err := Open(ctx, filepath.Join(t.TempDir(), "fresh.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, q := range []string{
		`SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name`,
		`SELECT version, name, '', '' FROM schema_migrations ORDER BY version`,
	} {
		got, want := readRows(t, st.r, q), readRows(t, migrated, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nnew store %q\nmigrated  %q", q, got, want)
		}
	}
	for _, row := range readRows(t, st.r, `SELECT name, '', '', '' FROM sqlite_master WHERE type = 'table' AND name NOT IN ('schema_migrations', 'sqlite_sequence')`) {
		var n int
		if err := st.r.QueryRowContext(ctx, `SELECT count(*) FROM "`+row[0]+`"`).Scan(&n); err != nil || n != 0 {
			t.Errorf("table %s of a new store holds %d rows (%v)", row[0], n, err)
		}
	}
}

func readRows(t *testing.T, db *sql.DB, q string) [][4]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][4]string
	for rows.Next() {
		var r [4]string
		if err := rows.Scan(&r[0], &r[1], &r[2], &r[3]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// dumpSchema is the schema of a database as freshSchema holds it: each
// object's CREATE statement, in the order they were created, without
// SQLite's own objects and schema_migrations (apply creates it first).
func dumpSchema(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (string, error) {
	rows, err := q.QueryContext(ctx, `SELECT sql FROM sqlite_master
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY rowid`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var stmt string
		if err := rows.Scan(&stmt); err != nil {
			return "", err
		}
		b.WriteString(stmt)
		b.WriteString(";\n")
	}
	return b.String(), rows.Err()
}
