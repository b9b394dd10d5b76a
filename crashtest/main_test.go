package crashtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// flowrunBin is the flowrun binary TestMain builds from ./cmd/flowrun.
var flowrunBin string

// TestMain builds the real flowrun binary once into a temporary directory;
// every proof runs it as separate processes. Under -short nothing is built
// and the proofs skip.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "flowrun-crashtest-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "crashtest: creating a directory for the flowrun binary: %v\n", err)
		os.Exit(2)
	}
	flowrunBin = filepath.Join(dir, "flowrun")
	build := exec.Command("go", "build", "-o", flowrunBin, "./cmd/flowrun")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "crashtest: go build ./cmd/flowrun failed: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needBinary skips a proof under -short.
func needBinary(t *testing.T) {
	t.Helper()
	if testing.Short() || flowrunBin == "" {
		t.Skip("starts flowrun processes; skipped with -short")
	}
}

// result is what a flowrun command that ran to its end printed.
type result struct {
	stdout, stderr string
	code           int // exit code; -1 when a signal ended it
}

// flowrun runs the binary to its end with args and the extra environment
// env, and returns its output and exit code. A command that takes longer
// than a minute is killed (a safety net; none should come close).
func flowrun(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := runFlowrun(ctx, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runFlowrun runs the binary to its end; an error says it could not run
// or ctx ended first. Safe to call from any goroutine.
func runFlowrun(ctx context.Context, env []string, args ...string) (result, error) {
	cmd := exec.CommandContext(ctx, flowrunBin, args...)
	cmd.Env = append(baseEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		return r, fmt.Errorf("flowrun %q did not end in time (%w); stderr:\n%s", args, ctx.Err(), r.stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		return r, fmt.Errorf("running flowrun %q: %w", args, err)
	}
	return r, nil
}

// baseEnv is the environment of every flowrun process: the test's, without
// a FLOWRUN_DB that could point a command at a real database (every command
// gets --db), and without colors.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if len(kv) >= len("FLOWRUN_DB=") && kv[:len("FLOWRUN_DB=")] == "FLOWRUN_DB=" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "NO_COLOR=1")
}

// envInt reads a size or seed from the environment, or returns def.
func envInt(t *testing.T, name string, def int64) int64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a whole number of 0 or more", name, s)
	}
	return n
}

// envDuration reads a duration from the environment, or returns def.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 90s", name, s)
	}
	return d
}

// testdataPath is the absolute path of a file under testdata.
func testdataPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
