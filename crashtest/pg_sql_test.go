package crashtest

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
)

// pgx's own database/sql driver (pgx/v5/stdlib) needs a module go.mod does
// not list, so the proofs read Postgres through this small read-only
// adapter instead: enough of database/sql/driver for the shared readers of
// db_test.go (Query and QueryRow without arguments, or with $N ones).
// Statements, transactions and writes are refused.

// pgxConnector opens pgx connections for sql.OpenDB.
type pgxConnector struct{ dsn string }

// Connect opens one connection.
func (c pgxConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := pgx.Connect(ctx, c.dsn)
	if err != nil {
		return nil, fmt.Errorf("connecting to Postgres: %w", err)
	}
	return &pgxConn{conn: conn}, nil
}

// Driver returns the adapter's driver.
func (c pgxConnector) Driver() driver.Driver { return pgxDriver{} }

// pgxDriver opens a connection by DSN.
type pgxDriver struct{}

// Open opens one connection.
func (pgxDriver) Open(dsn string) (driver.Conn, error) {
	return pgxConnector{dsn: dsn}.Connect(context.Background())
}

// pgxConn is one pgx connection.
type pgxConn struct{ conn *pgx.Conn }

var errReadOnly = errors.New("the proofs' Postgres adapter only runs queries: no statements or transactions")

// Prepare is refused: QueryContext runs queries directly.
func (c *pgxConn) Prepare(string) (driver.Stmt, error) { return nil, errReadOnly }

// Begin is refused.
func (c *pgxConn) Begin() (driver.Tx, error) { return nil, errReadOnly }

// Close closes the connection.
func (c *pgxConn) Close() error { return c.conn.Close(context.Background()) }

// QueryContext runs a query with its arguments.
func (c *pgxConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	vals := make([]any, len(args))
	for i, a := range args {
		vals[i] = a.Value
	}
	rows, err := c.conn.Query(ctx, query, vals...)
	if err != nil {
		return nil, fmt.Errorf("querying Postgres: %w", err)
	}
	return &pgxRows{rows: rows}, nil
}

// pgxRows are the rows of one query.
type pgxRows struct{ rows pgx.Rows }

// Columns names the columns.
func (r *pgxRows) Columns() []string {
	fds := r.rows.FieldDescriptions()
	out := make([]string, len(fds))
	for i, fd := range fds {
		out[i] = fd.Name
	}
	return out
}

// Close releases the rows.
func (r *pgxRows) Close() error {
	r.rows.Close()
	return r.rows.Err()
}

// Next reads the next row into dest, with integers widened to int64.
func (r *pgxRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return fmt.Errorf("reading Postgres rows: %w", err)
		}
		return io.EOF
	}
	vals, err := r.rows.Values()
	if err != nil {
		return fmt.Errorf("decoding a Postgres row: %w", err)
	}
	for i, v := range vals {
		switch v := v.(type) {
		case int16:
			dest[i] = int64(v)
		case int32:
			dest[i] = int64(v)
		case int:
			dest[i] = int64(v)
		default:
			dest[i] = v
		}
	}
	return nil
}
