package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flowrun/flowrun/cmd/flowrun/internal/cli"
)

// twinVerbs are the verbs that read or steer runs through the one door
// (package api), so that they work through --server as on the store.
// TestScriptsRemote runs every script that uses one of them with these
// verbs going through a real flowrun serve on the script's store.
var twinVerbs = map[string]bool{"runs": true, "show": true, "cancel": true, "signal": true, "logs": true, "dlq": true, "breakers": true, "workers": true, "workflows": true, "schedules": true, "tokens": true, "versions": true, "wait": true, "plan": true, "diff": true}

// twinReadOnly are the twin verbs that change nothing: in remote mode
// they run both ways, on the store and through the server, and their
// stdout, stderr and exit codes must be the same.
var twinReadOnly = map[string]bool{"runs": true, "show": true, "logs": true, "breakers": true, "workers": true, "workflows": true, "versions": true, "wait": true, "plan": true, "diff": true}

// twinExit is the exit code of a twin whose two answers differ (or whose
// server would not start): no verb exits with it.
const twinExit = 99

// TestScriptsRemote runs again, through flowrun serve, the scripts that
// use a twin verb: `exec flowrun VERB` then reads and steers the runs
// through a serve (--no-auth, on loopback, no worker) over the script's
// own store, which the script's other commands use directly. Every script
// must pass as it does locally, so a verb prints the same through the API
// as on the store, and read-only verbs are compared answer for answer.
func TestScriptsRemote(t *testing.T) {
	t.Parallel()
	files := twinScripts(t, "testdata/script")
	if len(files) == 0 {
		t.Fatal("no script uses a twin verb")
	}
	p := scriptParams()
	p.Dir = ""
	p.Files = files
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		env.Setenv("FLOWRUN_TWIN", "1")
		env.Defer(func() { stopTwinServer(env.WorkDir) })
		return nil
	}
	testscript.Run(t, p)
}

// twinScripts lists the scripts of dir that run a twin verb (and need no
// Postgres: the twin's serve reads the script's SQLite file), but those
// marked "# twin: local only: WHY", which test the store under the verb
// (its files, its lock, its environment) rather than the verb.
func twinScripts(t *testing.T, dir string) []string {
	var verbs []string
	for v := range twinVerbs {
		verbs = append(verbs, regexp.QuoteMeta(v))
	}
	uses := regexp.MustCompile(`(?m)^\s*!?\s*(?:exec )?flowrun (` + strings.Join(verbs, "|") + `)\b`)
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if uses.Match(b) && !bytes.Contains(b, []byte("[pg]")) && !localOnly.Match(b) {
			out = append(out, p)
		}
	}
	return out
}

// localOnly marks a script that TestScriptsRemote leaves out, with why.
var localOnly = regexp.MustCompile(`(?m)^# twin: local only: \S`)

// twinMain is the flowrun of a remote-mode script: a twin verb goes
// through the script's flowrun serve (started on first use), and a
// read-only one is also run on the store and compared; everything else
// runs as flowrun does.
func twinMain(args []string) int {
	direct := func() int { return cli.Main(args, os.Stdin, os.Stdout, os.Stderr) }
	if len(args) == 0 || !twinVerbs[args[0]] {
		return direct()
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "db" || name == "server" || name == "v" || name == "h" || name == "help") {
			return direct() // the script names the place, or asks what it is
		}
		if a == "--resume" {
			return direct() // it runs the run here, which only the store's side does
		}
	}
	db := os.Getenv("FLOWRUN_DB")
	if _, err := os.Stat(db); err != nil || strings.Contains(db, "://") {
		return direct() // no store yet: the verb says so, locally
	}
	addr, err := startTwinServer(os.Getenv("WORK"), db)
	if err != nil {
		fmt.Fprintf(os.Stderr, "twin: starting flowrun serve: %v\n", err)
		return twinExit
	}
	remote := func(stdin io.Reader, stdout, stderr io.Writer) int {
		os.Unsetenv("FLOWRUN_DB")
		os.Setenv("FLOWRUN_SERVER", "http://"+addr)
		defer func() { os.Setenv("FLOWRUN_DB", db); os.Unsetenv("FLOWRUN_SERVER") }()
		return cli.Main(args, stdin, stdout, stderr)
	}
	readOnly := twinReadOnly[args[0]] || args[0] == "dlq" && len(args) > 1 && args[1] == "list" ||
		args[0] == "schedules" && (len(args) == 1 || strings.HasPrefix(args[1], "-")) ||
		args[0] == "tokens" && len(args) > 1 && args[1] == "list"
	if !readOnly || slices.Contains(args, "-f") || slices.Contains(args, "--f") {
		// It changes the run, or follows it as it goes: once, through
		// the server.
		return remote(os.Stdin, os.Stdout, os.Stderr)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "twin: reading stdin: %v\n", err)
		return twinExit
	}
	type answer struct {
		out, err string
		code     int
	}
	run := func(f func(io.Reader, io.Writer, io.Writer) int) answer {
		var o, e bytes.Buffer
		code := f(bytes.NewReader(in), &o, &e)
		return answer{o.String(), e.String(), code}
	}
	local := func(stdin io.Reader, stdout, stderr io.Writer) int { return cli.Main(args, stdin, stdout, stderr) }
	// A run that moves between the two reads is read again: the two
	// must agree on one state.
	var l, r answer
	for range 3 {
		l, r = run(local), run(remote)
		if l == r || l.code == 5 || l.code == 3 && r.code == 3 && l.out == r.out && withoutHint(l.err) == withoutHint(r.err) {
			// 5: the store failed (a script holds its lock); the server
			// would say it otherwise, and that is the store's test.
			os.Stdout.WriteString(l.out)
			os.Stderr.WriteString(l.err)
			return l.code
		}
	}
	fmt.Fprintf(os.Stderr, "twin: flowrun %s answers differently through the server:\n--- on the store (exit %d)\nstdout:\n%s\nstderr:\n%s\n--- through %s (exit %d)\nstdout:\n%s\nstderr:\n%s\n",
		strings.Join(args, " "), l.code, l.out, l.err, addr, r.code, r.out, r.err)
	return twinExit
}

// withoutHint is stderr without its hint lines. A parked run's hint (exit
// 3) says how to continue it, which differs through a server: there a
// worker of the server goes on with it and resume runs nothing.
func withoutHint(stderr string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(line, "hint: ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// startTwinServer returns the address of the flowrun serve of the
// script's store db, starting it first if no command of the script has:
// --no-auth on a free loopback port, no worker, over db (a script may
// switch stores; each has its own serve).
func startTwinServer(work, db string) (string, error) {
	sum := sha256.Sum256([]byte(db))
	if err := os.MkdirAll(filepath.Join(work, ".twin"), 0o700); err != nil {
		return "", err
	}
	dir := filepath.Join(work, ".twin", hex.EncodeToString(sum[:8]))
	addrFile := filepath.Join(dir, "addr")
	if err := os.Mkdir(dir, 0o700); err == nil {
		log, err := os.Create(filepath.Join(dir, "serve.log"))
		if err != nil {
			return "", err
		}
		defer log.Close()
		cmd := exec.Command("flowrun", "serve", "--no-auth", "--listen", "127.0.0.1:0", "--addr-file", addrFile)
		cmd.Env = append(os.Environ(), "FLOWRUN_TWIN=")
		cmd.Stdout, cmd.Stderr = log, log
		// Its own process group: the script's signals to its commands
		// are not for it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
			return "", err
		}
		_ = cmd.Process.Release() // stopTwinServer ends it
	} else if !errors.Is(err, os.ErrExist) {
		return "", err
	}
	// The 30s limit is a safety net against a hung test, never a timing
	// assumption.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(addrFile)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b)), nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
			return "", fmt.Errorf("no address within 30s; its log:\n%s", log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stopTwinServer kills the script's flowrun serves, if any were started.
func stopTwinServer(work string) {
	pids, _ := filepath.Glob(filepath.Join(work, ".twin", "*", "pid"))
	for _, f := range pids {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(string(b)); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cmdServerURL sets a variable to the URL of a flowrun serve the script
// started in the background with --addr-file (default "addr"), waiting
// for the file to hold the address:
//
//	serverurl VAR [ADDRFILE]
func cmdServerURL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: serverurl VAR [ADDRFILE]")
	}
	file := "addr"
	if len(args) == 2 {
		file = args[1]
	}
	// The 30s limit is a safety net against a hung test, never a timing
	// assumption.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(ts.MkAbs(file))
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			ts.Setenv(args[0], "http://"+strings.TrimSpace(string(b)))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("serverurl: %s holds no address after 30s", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cmdEnvFile sets a variable to the content of a file, its surrounding
// space trimmed (a token flowrun tokens create printed):
//
//	envfile VAR FILE
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile VAR FILE")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}
