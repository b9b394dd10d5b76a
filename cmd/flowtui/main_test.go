package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store/backend"
)

func runMain(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	return code, errb.String()
}

func TestBadFlags(t *testing.T) {
	if code, msg := runMain(t, nil, "--nope"); code != exitUsage || !strings.Contains(msg, "flag provided but not defined") {
		t.Errorf("--nope: %d %q", code, msg)
	}
	if code, msg := runMain(t, nil, "extra"); code != exitUsage || !strings.Contains(msg, "takes only flags") {
		t.Errorf("extra argument: %d %q", code, msg)
	}
	// A Postgres URL that does not parse is a bad flag value.
	if code, msg := runMain(t, nil, "--db", "postgres://%zz"); code != exitUsage || !strings.Contains(msg, "postgres://USER:PASSWORD@HOST:PORT/DATABASE") {
		t.Errorf("malformed postgres URL: %d %q", code, msg)
	}
	// An unreachable Postgres server is a store error, reported at once.
	if code, msg := runMain(t, nil, "--db", "postgres://flowrun@127.0.0.1:1/y?connect_timeout=2"); code != exitStore || !strings.Contains(msg, "cannot open the Postgres database") {
		t.Errorf("postgres: %d %q", code, msg)
	}
}

func TestMissingDatabaseIsNotCreated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "none", "flowrun.db")
	code, msg := runMain(t, map[string]string{"FLOWRUN_DB": path})
	if code != exitStore || !strings.Contains(msg, "there is no flowrun database at "+path) || !strings.Contains(msg, "flowrun apply") {
		t.Fatalf("missing db: %d %q", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Fatalf("flowtui created something for a missing database: %v", err)
	}
}

func TestInvalidDatabase(t *testing.T) {
	dir := t.TempDir()
	if code, msg := runMain(t, nil, "--db", dir); code != exitStore || !strings.Contains(msg, "is a directory") {
		t.Errorf("directory: %d %q", code, msg)
	}
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("this is not a database, just text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, msg := runMain(t, nil, "--db", junk)
	if code != exitStore || !strings.Contains(msg, "cannot open the database "+junk) {
		t.Errorf("junk file: %d %q", code, msg)
	}
	if b, _ := os.ReadFile(junk); string(b) != "this is not a database, just text\n" {
		t.Errorf("flowtui changed the file: %q", b)
	}
}

// TestUnsupportedDatabaseURL: a --db or FLOWRUN_DB that looks like a URL
// flowrun cannot use is a bad flag (exit 2) naming where it came from, not
// a missing file at a path like mysql://u@h/db (exit 5).
func TestUnsupportedDatabaseURL(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--db", "mysql://u@h/db"}, `--db "mysql://u@h/db" is not a database flowrun can use: mysql:// is not a supported scheme`},
		{nil, []string{"--db", "postgres:/oops"}, `--db "postgres:/oops" is not a valid PostgreSQL URL: it must start with postgres://`},
		{map[string]string{"FLOWRUN_DB": "redis://x"}, nil, `FLOWRUN_DB="redis://x" is not a database flowrun can use`},
	} {
		code, msg := runMain(t, tc.env, tc.args...)
		if code != exitUsage || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "postgres://USER:PASSWORD@HOST:PORT/DATABASE") {
			t.Errorf("%v %q: %d %q, want exit %d and %q", tc.env, tc.args, code, msg, exitUsage, tc.want)
		}
	}
}

// TestHelpSpellsFlagsAsFlowrun: -h lists --db and --mouse with two dashes,
// as flowrun's help does (Go's flag package prints one).
func TestHelpSpellsFlagsAsFlowrun(t *testing.T) {
	code, msg := runMain(t, nil, "-h")
	if code != exitOK {
		t.Fatalf("-h exited %d", code)
	}
	for _, want := range []string{"\n  --db PATH\n", "\n  --mouse\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("-h lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "\n  -db") {
		t.Errorf("-h still spells -db with one dash:\n%s", msg)
	}
}

// TestFindsTheProjectStore: without --db or FLOWRUN_DB flowtui looks for
// .flowrun/ as flowrun does, from a subdirectory too; a .flowrun that is a
// file is refused naming it.
func TestFindsTheProjectStore(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".flowrun"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	code, msg := runMain(t, nil)
	if code != exitUsage || !strings.Contains(msg, ".flowrun is not a directory") {
		t.Fatalf("a .flowrun file: %d %q", code, msg)
	}
}

// TestNeedsATerminal: with stdin or stdout not a terminal (a pipe, a file,
// /dev/null) flowtui says it needs one and exits 2 without writing a byte
// to stdout: no alternate screen, no hidden cursor, no escape codes.
func TestNeedsATerminal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flowrun.db")
	opened, err := backend.Open(context.Background(), path, backend.Options{CreateFile: true})
	if err != nil {
		t.Fatal(err)
	}
	opened.Store.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	outFile, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	var errb bytes.Buffer
	code := run([]string{"--db", path}, func(string) string { return "" }, devnull, outFile, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "flowtui needs a terminal: its standard input and output are not terminals") {
		t.Errorf("no terminal: %d %q", code, errb.String())
	}
	if strings.Contains(errb.String(), "cancelreader") {
		t.Errorf("the terminal interface started: %q", errb.String())
	}
	if b, _ := os.ReadFile(outFile.Name()); len(b) > 0 {
		t.Errorf("flowtui wrote to a stdout that is no terminal: %q", b)
	}
}

// A server URL flowtui refuses is said after where it came from, once:
// "--server URL ...", not "--server server URL ...", as flowrun says it.
func TestServerURLRefusedOnce(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--server", "ftp://example.com"}, `flowtui: --server URL "ftp://example.com": it must start with https://`},
		{map[string]string{"FLOWRUN_SERVER": "https://u:p@example.com"}, nil, `flowtui: FLOWRUN_SERVER URL "https://u:xxxxx@example.com" holds a user name or password`},
		{map[string]string{"FLOWRUN_TOKEN": "flowrun_x"}, []string{"--server", "http://10.1.2.3:8080"}, "flowtui: --server http://10.1.2.3:8080: a token is sent only over https"},
	} {
		code, msg := runMain(t, c.env, c.args...)
		if code != exitUsage || !strings.HasPrefix(msg, c.want) || strings.Contains(msg, "server server") {
			t.Errorf("%v %v: %d %q, want it to start with %q", c.env, c.args, code, msg, c.want)
		}
	}
}

// --db "" and --server "" (a script's "$VAR" unset) are refused, as
// flowrun's verbs refuse them, instead of showing the project's store or
// server: flowtui would have shown another place's runs.
func TestEmptyPlaceRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", ""}, "flowtui: --db is empty."},
		{[]string{"--db="}, "flowtui: --db is empty."},
		{[]string{"--server", ""}, "flowtui: --server is empty."},
	} {
		code, msg := runMain(t, map[string]string{"FLOWRUN_SERVER": "https://example.com"}, c.args...)
		if code != exitUsage || !strings.HasPrefix(msg, c.want) {
			t.Errorf("%v: %d %q, want exit %d and %q", c.args, code, msg, exitUsage, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".flowrun")); !os.IsNotExist(err) {
		t.Errorf("flowtui made .flowrun/ (%v)", err)
	}
}
