package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// migrationFiles are the schema changes, NNNN_name.sql, applied in order
// (those missing, in one transaction: migrate) and recorded in
// schema_migrations. A released
// file never changes; a change of schema is a new file, and schema.sql is
// then written again (go test ./store/sqlite -run TestFreshSchema
// -update-schema).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]sqlrow.Migration, error) {
	return sqlrow.Migrations(migrationFiles, "migrations")
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int { return sqlrow.SchemaVersion(migrationFiles, "migrations") }

// probe reads the database without writing to it and refuses a file
// flowrun must not touch: not a database, a database of another program, a
// schema from a newer flowrun. Without a -wal file everything is in the
// main file, which is read as immutable: no lock, no -shm, no side effect
// at all. With one, a read-only connection (mode=ro: no checkpoint on
// close) reads the main file and the log together.
//
// An immutable read takes no lock, so a process creating the same file at
// that very moment could show it half-written; when the immutable read
// fails it is tried again with a locking read-only connection.
func probe(ctx context.Context, path string, opts Options) error {
	var tables []string
	var have int
	var err error
	if _, statErr := os.Stat(path + "-wal"); errors.Is(statErr, os.ErrNotExist) {
		tables, have, err = readSchema(ctx, path, opts, "immutable")
	}
	if err != nil || tables == nil {
		tables, have, err = readSchema(ctx, path, opts, "ro")
	}
	if err != nil {
		return (&Store{path: path, opts: opts}).openErr(err)
	}
	if len(tables) == 0 {
		return nil // a new, empty database
	}
	if !slices.Contains(tables, "schema_migrations") {
		shown := tables
		if len(shown) > 3 {
			shown = append(shown[:3:3], "...")
		}
		return fmt.Errorf("%s is not a flowrun database: it holds other tables (%s); point --db or FLOWRUN_DB at a flowrun database or a new file",
			path, strings.Join(shown, ", "))
	}
	return checkVersion(path, have)
}

// readSchema lists the tables of the database (non-nil, maybe empty) and
// the highest recorded migration.
func readSchema(ctx context.Context, path string, opts Options, mode string) (tables []string, have int, err error) {
	db, err := sql.Open("sqlite", dsn(path, mode, "deferred",
		"busy_timeout("+strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)+")"))
	if err != nil {
		return nil, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return nil, 0, err
	}
	tables = []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, 0, err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if slices.Contains(tables, "schema_migrations") {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return nil, 0, err
		}
	}
	return tables, have, nil
}

func checkVersion(path string, have int) error {
	if known := SchemaVersion(); have > known {
		return fmt.Errorf("%s has schema version %d but this flowrun knows only up to %d; upgrade flowrun to use it: %w",
			path, have, known, store.ErrSchemaTooNew)
	}
	return nil
}

// migrate applies the missing migrations, all of them in one BEGIN
// IMMEDIATE transaction (a new database gets its whole schema in one
// commit, and an upgrade is all or nothing). The version is read again
// inside the transaction, so several processes opening a new file at once
// apply each migration once. A database already at this binary's schema is
// only read: opening it takes no write lock, so a command that only reads
// is not held up by another process's long write.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	var have int
	if err := s.w.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err == nil {
		if err := checkVersion(s.path, have); err != nil {
			return err
		}
		if have >= len(ms) {
			return nil
		}
	}
	return s.apply(ctx, ms)
}

// createMigrationsSQL makes the table of the applied migrations.
const createMigrationsSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER NOT NULL PRIMARY KEY,
		name    TEXT    NOT NULL
	)`

// apply runs, in one transaction, each of ms newer than the recorded
// version, recording each; a new, empty database gets the schema they
// build at once instead (freshSchema, schema.go), all of ms recorded.
func (s *Store) apply(ctx context.Context, ms []sqlrow.Migration) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("migrating the database", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, createMigrationsSQL); err != nil {
		return s.fail("migrating the database", err)
	}
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return s.fail("migrating the database", err)
	}
	if err := checkVersion(s.path, have); err != nil {
		return err
	}
	fresh := false
	if have == 0 {
		if fresh, err = emptySchema(ctx, tx); err != nil {
			return s.fail("migrating the database", err)
		}
	}
	var applied int
	if fresh && freshSchemaVersion() == len(ms) {
		applied, err = createSchema(ctx, tx, ms)
	} else {
		applied, err = migrateFrom(ctx, tx, ms, have)
	}
	if err != nil {
		return s.fail("migrating the database", err)
	}
	if applied == 0 {
		return tx.Rollback()
	}
	if err := tx.Commit(); err != nil {
		return s.fail("committing the migrations", err)
	}
	return nil
}

// migrateFrom runs in tx each of ms newer than have, recording each, and
// returns how many it ran.
func migrateFrom(ctx context.Context, tx *sql.Tx, ms []sqlrow.Migration, have int) (int, error) {
	applied := 0
	for _, m := range ms {
		if m.Version <= have {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return applied, fmt.Errorf("applying migration %s: %w", m.Name, err)
		}
		if err := recordMigration(ctx, tx, m); err != nil {
			return applied, err
		}
		applied++
	}
	return applied, nil
}

func recordMigration(ctx context.Context, tx *sql.Tx, m sqlrow.Migration) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?1, ?2)`, m.Version, m.Name); err != nil {
		return fmt.Errorf("recording migration %s: %w", m.Name, err)
	}
	return nil
}
