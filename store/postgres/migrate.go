package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// migrationFiles are the schema changes, NNNN_name.sql, applied in order and
// recorded in schema_migrations. A released file never changes; a change of
// schema is a new file. They are not the SQLite files: the dialects differ.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]sqlrow.Migration, error) {
	return sqlrow.Migrations(migrationFiles, "migrations")
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int { return sqlrow.SchemaVersion(migrationFiles, "migrations") }

// migrateLockSQL serializes migrations of one schema across processes and
// hosts: a transaction-scoped advisory lock, released by the commit.
// (SQLite: BEGIN IMMEDIATE takes the file's write lock instead.) The key is
// derived from the schema, so flowrun installations in other schemas of the
// same database do not wait for each other.
const migrateLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('flowrun.migrate:' || current_schema(), 0))`

// schemaState reads what the current schema holds: its name, its tables,
// and the recorded schema version (0 without schema_migrations).
type schemaState struct {
	schema  string
	tables  []string
	version int
}

// querier is what reading the schema needs: a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readSchema(ctx context.Context, q querier) (schemaState, error) {
	var st schemaState
	var schema *string
	// current_schema() is the first schema of the search_path that exists;
	// NULL when none does. (SQLite has one namespace per file.)
	if err := q.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return st, err
	}
	if schema == nil {
		return st, errNoSchema
	}
	st.schema = *schema
	rows, err := q.Query(ctx, `SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	if err != nil {
		return st, err
	}
	if st.tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return st, err
	}
	if !slices.Contains(st.tables, "schema_migrations") {
		return st, nil
	}
	// Another tool's schema_migrations (golang-migrate's has version and
	// dirty) has no name column; it is not ours.
	var named bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'name')`).Scan(&named); err != nil {
		return st, err
	}
	if !named {
		return st, errForeignMigrations
	}
	err = q.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&st.version)
	return st, err
}

var (
	errNoSchema          = errors.New("no schema of the search_path exists")
	errForeignMigrations = errors.New("schema_migrations belongs to another program")
)

// migrate brings the schema up to date. It first reads the schema without
// writing anything (a read-only user, a foreign schema or a newer schema
// is refused before any write); only when migrations are missing does it
// take the advisory lock and apply them, all in one transaction, checking
// the version again under the lock.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	st, err := readSchema(ctx, s.pool)
	if err != nil {
		return s.schemaErr(st, err)
	}
	if err := s.checkSchema(st); err != nil {
		return err
	}
	if st.version >= len(ms) {
		return nil
	}
	if st.version == 0 && s.opts.NoCreate {
		return fmt.Errorf("schema %s of %s holds %w yet", st.schema, s.addr, ErrNotInitialized)
	}
	if s.opts.NoCreate {
		return fmt.Errorf("schema %s of %s has schema version %d, older than this flowrun's %d, which this command does not migrate (%w): start a worker or serve of this version, or run flowrun apply, once the workers of the older one are stopped (spec/deploy.md, Upgrades)",
			st.schema, s.addr, st.version, len(ms), ErrNotMigrated)
	}
	return s.write(ctx, "migrating the database", func(w *wtx) error {
		if _, err := w.tx.Exec(ctx, migrateLockSQL); err != nil {
			return err
		}
		if _, err := w.tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER NOT NULL PRIMARY KEY,
			name    TEXT    NOT NULL
		)`); err != nil {
			return err
		}
		st, err := readSchema(ctx, w.tx)
		if err != nil {
			return s.schemaErr(st, err)
		}
		if err := s.checkVersion(st); err != nil {
			return err
		}
		for _, m := range ms[st.version:] {
			// The simple protocol: a migration file holds many statements.
			if _, err := w.tx.Exec(ctx, m.SQL, pgx.QueryExecModeSimpleProtocol); err != nil {
				return fmt.Errorf("applying migration %s: %w", m.Name, err)
			}
			if _, err := w.tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("recording migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
}

// schemaErr explains a failure to read the schema.
func (s *Store) schemaErr(st schemaState, err error) error {
	switch {
	case errors.Is(err, errNoSchema):
		return fmt.Errorf("no schema of the search_path of %s exists; create it (CREATE SCHEMA) or fix search_path in --db or FLOWRUN_DB", s.addr)
	case errors.Is(err, errForeignMigrations):
		return fmt.Errorf("schema %s of %s is not a flowrun database: its schema_migrations table belongs to another program; give flowrun a database or schema of its own (search_path in --db)", st.schema, s.addr)
	}
	return s.fail("reading the schema of "+s.addr, err)
}

// checkSchema refuses a schema that holds tables but no schema_migrations
// (another program's tables) and a newer schema.
func (s *Store) checkSchema(st schemaState) error {
	if len(st.tables) > 0 && !slices.Contains(st.tables, "schema_migrations") {
		shown := st.tables
		if len(shown) > 3 {
			shown = append(shown[:3:3], "...")
		}
		return fmt.Errorf("schema %s of %s is not a flowrun database: it holds other tables (%s); give flowrun a database or schema of its own (search_path in --db)",
			st.schema, s.addr, strings.Join(shown, ", "))
	}
	return s.checkVersion(st)
}

func (s *Store) checkVersion(st schemaState) error {
	if known := SchemaVersion(); st.version > known {
		return fmt.Errorf("schema %s of %s has schema version %d but this flowrun knows only up to %d; upgrade flowrun to use it: %w",
			st.schema, s.addr, st.version, known, store.ErrSchemaTooNew)
	}
	return nil
}
