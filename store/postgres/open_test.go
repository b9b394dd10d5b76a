package postgres_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
)

// openErr opens dsn, which must fail, and returns how long Open took and
// the error.
func openErr(t *testing.T, dsn string, opts postgres.Options) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	s, err := postgres.Open(context.Background(), dsn, opts)
	took := time.Since(start)
	if err == nil {
		s.Close()
		t.Fatalf("Open(%q) succeeded, want an error", dsn)
	}
	return took, err
}

func contains(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: error %q does not mention %q", what, err, p)
		}
	}
}

func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: refused at once.
	took, err := openErr(t, "postgres://flowrun@127.0.0.1:1/flowrun?sslmode=disable", postgres.Options{})
	if !errors.Is(err, postgres.ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	contains(t, "refused", err, "127.0.0.1:1", "check that it is running")
	if took > 3*time.Second {
		t.Fatalf("Open took %s for a refused connection, want well under the connect timeout", took)
	}
}

func TestOpenSilentHost(t *testing.T) {
	t.Parallel()
	// 192.0.2.0/24 (TEST-NET-1) is never routed: the connection either
	// hangs until the connect timeout or fails at once (no route). Either
	// way Open must end within about the timeout.
	took, err := openErr(t, "postgres://flowrun@192.0.2.1:5432/flowrun?sslmode=disable",
		postgres.Options{ConnectTimeout: 500 * time.Millisecond})
	if !errors.Is(err, postgres.ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	contains(t, "silent host", err, "192.0.2.1:5432")
	if took > 3*time.Second {
		t.Fatalf("Open took %s with a 500ms connect timeout", took)
	}
}

func TestOpenMuteServer(t *testing.T) {
	t.Parallel()
	// A server that accepts the connection and never says a word: the
	// connect timeout covers the whole start-up, not only the dial.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	took, err := openErr(t, "postgres://flowrun@"+ln.Addr().String()+"/flowrun", postgres.Options{ConnectTimeout: 300 * time.Millisecond})
	if !errors.Is(err, postgres.ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	contains(t, "mute server", err, ln.Addr().String(), "did not answer within 300ms")
	if took > 3*time.Second {
		t.Fatalf("Open took %s with a 300ms connect timeout", took)
	}
}

// TestOpenServerWithoutTLS: a URL whose sslmode asks for TLS, to a server
// that runs without it, is told so, not to check that the server runs
// and that the host and port are right.
func TestOpenServerWithoutTLS(t *testing.T) {
	t.Parallel()
	dsn := serverDSN(t)
	u := strings.Replace(dsn, "sslmode=disable", "sslmode=require", 1)
	if u == dsn {
		t.Skipf("%s does not set sslmode=disable", envDSN)
	}
	_, err := openErr(t, u, postgres.Options{})
	if !errors.Is(err, postgres.ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	contains(t, "no TLS", err, "does not accept TLS", "sslmode=disable")
	if strings.Contains(err.Error(), "check that it is running") {
		t.Fatalf("error %q says to check that a running server runs", err)
	}
}

// TestOpenUntrustedCertificate: a server whose certificate does not
// verify (sslmode=verify-full, a CA this host does not know) is told so,
// with what to set.
func TestOpenUntrustedCertificate(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "db.internal"},
		DNSNames:     []string{"db.internal"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		// A server that says yes to the SSLRequest and shakes hands with
		// its self-signed certificate.
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			req := make([]byte, 8)
			if _, err := io.ReadFull(c, req); err == nil {
				if _, err := c.Write([]byte("S")); err == nil {
					_ = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}}).Handshake()
				}
			}
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	_, err = openErr(t, "postgres://flowrun:pw@"+ln.Addr().String()+"/flowrun?sslmode=verify-full", postgres.Options{ConnectTimeout: 2 * time.Second})
	if !errors.Is(err, postgres.ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	contains(t, "untrusted certificate", err, ln.Addr().String(), "certificate that does not verify", "unknown authority", "sslrootcert=FILE")
	if strings.Contains(err.Error(), "check that it is running") {
		t.Fatalf("error %q says to check that a running server runs", err)
	}
}

func TestOpenMalformedDSN(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"",
		"postgres://flowrun@127.0.0.1:notaport/db",
		"postgres://%zz@host/db",
		"host=127.0.0.1 port=abc",
		"postgres://127.0.0.1/db?sslmode=sometimes",
	} {
		_, err := openErr(t, dsn, postgres.Options{})
		if !errors.Is(err, postgres.ErrBadDSN) {
			t.Errorf("Open(%q): err = %v, want ErrBadDSN", dsn, err)
		}
	}
	// The password never shows in the message.
	_, err := openErr(t, "postgres://user:s3cret@127.0.0.1:notaport/db", postgres.Options{})
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error %q shows the password", err)
	}
}

func TestOpenMissingDatabase(t *testing.T) {
	t.Parallel()
	dsn := serverDSN(t)
	u := strings.Replace(dsn, "/flowrun_test", "/flowrun_no_such_database", 1)
	if u == dsn {
		t.Skipf("%s does not name the database flowrun_test", envDSN)
	}
	_, err := openErr(t, u, postgres.Options{})
	if !errors.Is(err, postgres.ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	contains(t, "missing database", err, "no such database", "flowrun_no_such_database")
}

func TestOpenUnknownUser(t *testing.T) {
	t.Parallel()
	// The test server trusts every user on 127.0.0.1, so a wrong password
	// cannot be tried; a user that does not exist fails the same
	// authentication step (SQLSTATE 28000).
	dsn := serverDSN(t)
	u := strings.Replace(dsn, "postgres://postgres@", "postgres://flowrun_no_such_user:pw@", 1)
	if u == dsn {
		t.Skipf("%s does not connect as user postgres", envDSN)
	}
	_, err := openErr(t, u, postgres.Options{})
	if !errors.Is(err, postgres.ErrConnect) {
		t.Fatalf("err = %v, want ErrConnect", err)
	}
	contains(t, "unknown user", err, "refused the user name or password", "flowrun_no_such_user")
	if strings.Contains(err.Error(), ":pw@") {
		t.Fatalf("error %q shows the password", err)
	}
}

// tables lists the tables of a schema.
func tables(t *testing.T, schema string) string {
	return adminQuery[string](t, `SELECT COALESCE(string_agg(tablename, ',' ORDER BY tablename), '')
		FROM pg_tables WHERE schemaname = $1`, schema)
}

func TestOpenNewerSchemaWritesNothing(t *testing.T) {
	t.Parallel()
	dsn, schema := newSchema(t)
	admin(t, `CREATE TABLE `+schema+`.schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL)`)
	admin(t, `INSERT INTO `+schema+`.schema_migrations VALUES (999, '0999_future')`)
	_, err := openErr(t, dsn, postgres.Options{})
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("err = %v, want ErrSchemaTooNew", err)
	}
	contains(t, "newer schema", err, "999", "upgrade flowrun")
	if got := tables(t, schema); got != "schema_migrations" {
		t.Fatalf("tables after a refused open = %q, want only schema_migrations", got)
	}
	if n := adminQuery[int64](t, `SELECT count(*) FROM `+schema+`.schema_migrations`); n != 1 {
		t.Fatalf("schema_migrations rows = %d, want 1", n)
	}
}

func TestOpenNewerSchemaAfterUse(t *testing.T) {
	t.Parallel()
	dsn, schema := newSchema(t)
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	admin(t, `INSERT INTO `+schema+`.schema_migrations VALUES ($1, 'future')`, postgres.SchemaVersion()+1)
	_, err = openErr(t, dsn, postgres.Options{})
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("err = %v, want ErrSchemaTooNew", err)
	}
}

func TestOpenForeignSchema(t *testing.T) {
	t.Parallel()
	dsn, schema := newSchema(t)
	admin(t, `CREATE TABLE `+schema+`.customers (id INTEGER)`)
	_, err := openErr(t, dsn, postgres.Options{})
	contains(t, "foreign tables", err, "not a flowrun database", "customers")
	if got := tables(t, schema); got != "customers" {
		t.Fatalf("tables after a refused open = %q, want only customers", got)
	}

	// Another tool's schema_migrations (golang-migrate's) is not ours either.
	dsn2, schema2 := newSchema(t)
	admin(t, `CREATE TABLE `+schema2+`.schema_migrations (version BIGINT NOT NULL PRIMARY KEY, dirty BOOLEAN NOT NULL)`)
	_, err = openErr(t, dsn2, postgres.Options{})
	contains(t, "golang-migrate table", err, "belongs to another program")
}

func TestOpenMissingSchema(t *testing.T) {
	t.Parallel()
	dsn := withParam(t, serverDSN(t), "search_path", "flowrun_no_such_schema")
	_, err := openErr(t, dsn, postgres.Options{})
	contains(t, "missing schema", err, "CREATE SCHEMA")
}

func TestOpenConcurrentFirstOpens(t *testing.T) {
	t.Parallel()
	dsn, schema := newSchema(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(context.Background(), dsn, postgres.Options{MaxConns: 2})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	if got := adminQuery[int64](t, `SELECT count(*) FROM `+schema+`.schema_migrations`); got != int64(postgres.SchemaVersion()) {
		t.Fatalf("schema_migrations rows = %d, want %d", got, postgres.SchemaVersion())
	}
	// Opening an up-to-date schema again changes nothing.
	openDSN(t, dsn)
	if got := adminQuery[int64](t, `SELECT count(*) FROM `+schema+`.schema_migrations`); got != int64(postgres.SchemaVersion()) {
		t.Fatalf("schema_migrations rows after a reopen = %d", got)
	}
}

func TestOpenNoCreate(t *testing.T) {
	t.Parallel()
	dsn, schema := newSchema(t)
	_, err := openErr(t, dsn, postgres.Options{NoCreate: true})
	if !errors.Is(err, postgres.ErrNotInitialized) {
		t.Fatalf("err = %v, want ErrNotInitialized", err)
	}
	if got := tables(t, schema); got != "" {
		t.Fatalf("tables after a NoCreate open of an empty schema = %q, want none", got)
	}
	openDSN(t, dsn)
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{NoCreate: true})
	if err != nil {
		t.Fatalf("NoCreate open of a flowrun schema: %v", err)
	}
	s.Close()
}

// TestReadOnlyUserWrites: a user that may read flowrun's schema but not
// write it (a dashboard's) reads; a write is refused naming the user and
// what to do, not only Postgres's "permission denied" and its SQLSTATE.
func TestReadOnlyUserWrites(t *testing.T) {
	t.Parallel()
	dsn, schema := newSchema(t)
	openDSN(t, dsn)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	role := "flowrun_reader_" + fmt.Sprintf("%x", b)
	admin(t, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() {
		admin(t, "DROP OWNED BY "+role)
		admin(t, "DROP ROLE "+role)
	})
	admin(t, "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
	admin(t, "GRANT SELECT ON ALL TABLES IN SCHEMA "+schema+" TO "+role)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Skipf("%s is not a URL", envDSN)
	}
	u.User = url.User(role)
	s, err := postgres.Open(context.Background(), u.String(), postgres.Options{})
	if err != nil {
		t.Fatalf("a reader opens an up-to-date schema: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.RunList(ctx, store.RunListParams{Limit: 10}); err != nil {
		t.Fatalf("a reader lists runs: %v", err)
	}
	_, err = s.TokenCreate(ctx, store.TokenCreateParams{Name: "ci", Hash: "00", Scope: store.ScopeRead, Now: time.Unix(1, 0)})
	if err == nil {
		t.Fatal("a reader created a token")
	}
	contains(t, "reader writes", err, "the Postgres user "+role+" may not do this in", "permission denied for table", "spec/deploy.md")
	if strings.Contains(err.Error(), "SQLSTATE") {
		t.Fatalf("error %q quotes the SQLSTATE instead of saying what to do", err)
	}
}
