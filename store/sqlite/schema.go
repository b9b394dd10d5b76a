package sqlite

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// freshSchema is the schema the migrations build on an empty database,
// as SQLite holds it after them (schema.sql, written by TestFreshSchema
// -update-schema from the migrations themselves). A new database gets it
// in one go: each ALTER TABLE of the migrations makes SQLite parse the
// whole schema again, which made creating a database several times
// slower than opening one. Its first line names the migration it follows.
//
//go:embed schema.sql
var freshSchema string

// freshSchemaVersion is the migration freshSchema follows (0 when its
// first line does not say).
func freshSchemaVersion() int {
	line, _, _ := strings.Cut(freshSchema, "\n")
	v, err := strconv.Atoi(strings.TrimPrefix(line, "-- after migration "))
	if err != nil {
		return 0
	}
	return v
}

// emptySchema reports whether the database holds nothing but
// schema_migrations.
func emptySchema(ctx context.Context, tx *sql.Tx) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master
		WHERE name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'`).Scan(&n); err != nil {
		return false, err
	}
	return n == 0, nil
}

// createSchema creates freshSchema in tx and records every one of ms as
// applied.
func createSchema(ctx context.Context, tx *sql.Tx, ms []sqlrow.Migration) (int, error) {
	if _, err := tx.ExecContext(ctx, freshSchema); err != nil {
		return 0, fmt.Errorf("creating the schema: %w", err)
	}
	for _, m := range ms {
		if err := recordMigration(ctx, tx, m); err != nil {
			return 0, err
		}
	}
	return len(ms), nil
}
