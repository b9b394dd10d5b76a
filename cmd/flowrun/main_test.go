package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"

	"github.com/flowrun/flowrun/cmd/flowrun/internal/cli"
	"github.com/flowrun/flowrun/cmd/flowrun/internal/confine"
)

// TestMain lets the test binary stand in for the flowrun command inside
// the scripts.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flowrun": func() {
			confine.Process()
			if os.Getenv("FLOWRUN_TWIN") == "1" {
				os.Exit(twinMain(os.Args[1:]))
			}
			os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"holdlock":  holdLock,
		"emitshape": emitShape,
		"apiclient": apiClient,
	})
}

// holdLock stands in for another process that holds a SQLite database's
// write lock: `holdlock DB READY` opens DB, takes its write lock (BEGIN
// IMMEDIATE), creates the file READY and waits (ten minutes at most) to
// be killed. It waits up to 10 s for a write of another process (a
// worker's heartbeat) to end: without a busy timeout its BEGIN failed at
// once when it met one.
func holdLock() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: holdlock DB READY")
		os.Exit(2)
	}
	ctx := context.Background()
	db, err := sql.Open("sqlite", os.Args[1])
	if err == nil {
		var conn *sql.Conn
		if conn, err = db.Conn(ctx); err == nil {
			if _, err = conn.ExecContext(ctx, "PRAGMA busy_timeout = 10000"); err == nil {
				_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
			}
		}
	}
	if err == nil {
		err = os.WriteFile(os.Args[2], nil, 0o600)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "holdlock:", err)
		os.Exit(1)
	}
	time.Sleep(10 * time.Minute)
	os.Exit(0)
}

// TestScripts runs every testdata/script/*.txtar: one verb and topic per
// file, each with its own workflow files and expected output.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams())
}

// scriptParams are the settings of the scripts of testdata/script.
func scriptParams() testscript.Params {
	return testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FLOWRUN_DB", filepath.Join(env.WorkDir, ".flowrun", "flowrun.db"))
			env.Setenv("NO_COLOR", "1")
			env.Setenv("TZ", "UTC")
			// The Postgres test server (scripts/test starts one), for the
			// scripts under [pg].
			env.Setenv("FLOWRUN_TEST_PG", os.Getenv("FLOWRUN_TEST_PG"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "pg" {
				return os.Getenv("FLOWRUN_TEST_PG") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"pgschema":   cmdPGSchema,
			"pglock":     cmdPGLock,
			"pgbackends": cmdPGBackends,
			"pgexec":     cmdPGExec,
			"pgtables":   cmdPGTables,
			"echoserver": cmdEchoServer,
			"mask":       cmdMask,
			"runid":      cmdRunID,
			"waitfile":   cmdWaitFile,
			"waitmatch":  cmdWaitMatch,
			"waitout":    cmdWaitOut,
			"status":     cmdStatus,
			"httpserve":  cmdHTTPServe,
			"nest":       cmdNest,
			"fileserver": cmdFileServer,
			"sqlexec":    cmdSQLExec,
			"http":       cmdHTTP,
			"slowclient": cmdSlowClient,
			"gencert":    cmdGenCert,
			"authtable":  cmdAuthTable,
			"serverurl":  cmdServerURL,
			"flood":      cmdFlood,
			"race":       cmdRace,
			"envfile":    cmdEnvFile,
		},
	}
}

// Run ids are ULIDs; times are RFC 3339 or the clock stamps of progress
// lines; durations are what a real clock makes them.
var (
	runIDPattern    = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	tracePattern    = regexp.MustCompile(`"trace_id": "[0-9a-f]{32}"`)
	timePattern     = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`)
	stampPattern    = regexp.MustCompile(`\[\d\d:\d\d:\d\d\]`)
	durationPattern = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`)
)

// cmdMask copies a file (stdout and stderr name the last command's
// output) to another, replacing each run id by RUN1, RUN2, ... in order of
// first appearance, each time by TIME, each [hh:mm:ss] by [TIME] and, with
// -d, each duration by DUR:
//
//	mask [-d] stdout got.txt
func cmdMask(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("mask does not fail")
	}
	durations := len(args) > 0 && args[0] == "-d"
	if durations {
		args = args[1:]
	}
	if len(args) != 2 {
		ts.Fatalf("usage: mask [-d] FROM TO")
	}
	text := ts.ReadFile(args[0])
	ids := map[string]string{}
	text = runIDPattern.ReplaceAllStringFunc(text, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("RUN%d", len(ids)+1)
		}
		return ids[id]
	})
	text = timePattern.ReplaceAllString(text, "TIME")
	text = tracePattern.ReplaceAllString(text, `"trace_id": "TRACE"`)
	text = stampPattern.ReplaceAllString(text, "[TIME]")
	if durations {
		text = durationPattern.ReplaceAllString(text, "DUR")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(text), 0o644))
}

// cmdRunID sets an environment variable to the first run id in a file
// (stdout: the last command's output), so later commands can name the run:
//
//	runid stdout RUN
func cmdRunID(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("runid does not fail")
	}
	if len(args) != 2 {
		ts.Fatalf("usage: runid FILE VAR")
	}
	id := runIDPattern.FindString(ts.ReadFile(args[0]))
	if id == "" {
		ts.Fatalf("no run id in %s:\n%s", args[0], strings.TrimSpace(ts.ReadFile(args[0])))
	}
	ts.Setenv(args[1], id)
}

// cmdWaitFile waits until a file exists: a background command (a step's
// action) says it got somewhere by creating it. The 30s limit is a safety
// net against a hung test, never a timing assumption.
//
//	waitfile started
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(ts.MkAbs(args[0]))
		if err == nil {
			return
		}
		if !errors.Is(err, os.ErrNotExist) {
			ts.Fatalf("waitfile %s: %v", args[0], err)
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile %s: the file did not appear within 30s", args[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cmdWaitMatch waits until a file (written by a background command, such
// as logs -f redirected by sh) has a line matching a regular expression.
// The 30s limit is a safety net against a hung test, never a timing
// assumption.
//
//	waitmatch logs.out '^TIME  count stdout \| 1$'
func cmdWaitMatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitmatch FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(ts.MkAbs(args[0]))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			ts.Fatalf("waitmatch %s: %v", args[0], err)
		}
		if re.Match(data) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitmatch %s: no line matched %q within 30s; the file holds:\n%s", args[0], args[1], data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cmdWaitOut runs a command again and again until its standard output has
// a line matching a regular expression (a state another process reaches
// in its own time, such as a worker's registration); the last run's
// output is then kept for stdout and stderr. The 30s limit is a safety
// net against a hung test, never a timing assumption.
//
//	waitout '^h1/\S+ +live' flowrun workers
//
// With ! it waits until no line matches (a state that goes away).
func cmdWaitOut(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: [!] waitout REGEXP COMMAND [ARGS...]")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ts.Exec(args[1], args[2:]...)
		out := ts.ReadFile("stdout")
		if err == nil && re.MatchString(out) != neg {
			return
		}
		if time.Now().After(deadline) {
			what := "no line matching"
			if neg {
				what = "still a line matching"
			}
			ts.Fatalf("waitout: %s printed %s %q after 30s (last error %v); it printed:\n%s",
				strings.Join(args[1:], " "), what, args[0], err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cmdStatus runs a command, like exec, and checks its exact exit code; the
// output is kept for stdout and stderr as usual:
//
//	status 2 flowrun apply bad.hcl
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not an exit code", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdNest writes a file from a template, replacing each @NEST@ by N copies
// of OPEN, then INNER, then N copies of CLOSE, so a script can hold a
// value nested tens of thousands of levels deep without spelling it out.
// With env:NAME in place of OUT it sets the environment variable NAME to
// the value alone (no template is read; pass -):
//
//	nest deep.tmpl deep.hcl 60000 [ 1 ]
//	nest - env:DEEP 1001 [ '' ]
func cmdNest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 6 {
		ts.Fatalf("usage: nest TEMPLATE OUT N OPEN INNER CLOSE")
	}
	n, err := strconv.Atoi(args[2])
	if err != nil || n < 0 {
		ts.Fatalf("nest: %q is not a count", args[2])
	}
	value := strings.Repeat(args[3], n) + args[4] + strings.Repeat(args[5], n)
	if name, ok := strings.CutPrefix(args[1], "env:"); ok {
		ts.Setenv(name, value)
		return
	}
	text := strings.ReplaceAll(ts.ReadFile(args[0]), "@NEST@", value)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(text), 0o644))
}

// cmdSQLExec runs one SQL statement on a SQLite database file, as an older
// flowrun or a hand edit could have left it:
//
//	sqlexec .flowrun/flowrun.db 'UPDATE steps SET output = ...'
func cmdSQLExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqlexec DB SQL")
	}
	db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	_, err = db.Exec(args[1])
	ts.Check(err)
}
