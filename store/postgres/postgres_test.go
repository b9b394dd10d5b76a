package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
	"github.com/flowrun/flowrun/store/storetest"
)

// envDSN names the test server; scripts/pg start prints the line that sets
// it.
const envDSN = "FLOWRUN_TEST_PG"

// serverDSN returns the test server's DSN, or skips the test.
func serverDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		t.Skipf("%s is not set: no Postgres server to test against; run eval \"$(scripts/pg start)\" first", envDSN)
	}
	return dsn
}

// withParam returns dsn with a connection parameter set, in URL or
// key=value form as dsn is.
func withParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s is not a URL: %v", envDSN, err)
		}
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " " + key + "=" + value
}

// admin runs SQL on the test server outside any store.
func admin(t testing.TB, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, serverDSN(t))
	if err != nil {
		t.Fatalf("connecting to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// adminQuery reads one value from the test server.
func adminQuery[T any](t testing.TB, sql string, args ...any) T {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, serverDSN(t))
	if err != nil {
		t.Fatalf("connecting to the test server: %v", err)
	}
	defer conn.Close(ctx)
	var v T
	if err := conn.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// newSchema creates an empty schema of its own for a test, dropped when
// the test ends, and returns a DSN whose search_path is that schema.
func newSchema(t testing.TB) (dsn, schema string) {
	t.Helper()
	base := serverDSN(t)
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	schema = "flowrun_test_" + hex.EncodeToString(b)
	admin(t, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { admin(t, "DROP SCHEMA "+schema+" CASCADE") })
	return withParam(t, base, "search_path", schema), schema
}

// openTemp opens a store on a new schema.
func openTemp(t testing.TB) *postgres.Store {
	t.Helper()
	dsn, _ := newSchema(t)
	return openDSN(t, dsn)
}

func openDSN(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	// Few connections per store: the conformance suite opens dozens of
	// stores at once.
	// CallerClock: the conformance suite's times are a fixed epoch, so
	// leases must be measured on them, not on the database's clock
	// (leaseclock_test.go tests that one).
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{MaxConns: 4, CallerClock: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	serverDSN(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

// TestConformanceShared runs the cases of two handles on one schema.
func TestConformanceShared(t *testing.T) {
	serverDSN(t)
	storetest.RunShared(t, func(t *testing.T) (store.Store, store.Store) {
		dsn, _ := newSchema(t)
		return openDSN(t, dsn), openDSN(t, dsn)
	})
}
