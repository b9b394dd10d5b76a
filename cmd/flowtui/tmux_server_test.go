package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serve starts flowrun serve (tokens required, no worker) on the test's
// store and returns its URL; it is stopped when the test ends.
func (e *e2e) serve() string {
	e.t.Helper()
	addrFile := filepath.Join(e.dir, "addr")
	cmd := exec.Command(e.flowrun, "serve", "--listen", "127.0.0.1:0", "--addr-file", addrFile)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	})
	// The 30s limit is a safety net against a hung test.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(addrFile)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			return "http://" + strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("flowrun serve wrote no address in 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startRemote starts flowtui with args and token (FLOWRUN_TOKEN) in dir,
// a directory without a store: everything it shows comes through the
// server.
func (e *e2e) startRemote(dir, flowtui, token string, args ...string) {
	e.t.Helper()
	e.tmux(append([]string{"new-session", "-d", "-s", e.session, "-x", "100", "-y", "30", "-c", dir,
		"env", "-u", "FLOWRUN_DB", "-u", "FLOWRUN_SERVER", "FLOWRUN_TOKEN=" + token, "NO_COLOR=1", "TERM=xterm-256color", flowtui}, args...)...)
	e.t.Cleanup(func() { _ = exec.Command("tmux", "-L", e.socket, "kill-server").Run() })
}

// TestTmuxServer: flowtui --server shows a flowrun serve's runs from a
// directory with no store, follows a change made by another process live
// through the server's records, and carries every action out through the
// API: a cancel, a signal (a malformed payload first), and a version
// decision with its diff. A read token sees the runs and is refused an
// action, naming the scope it needs; a server that is down is a clear
// message and exit 5 before the screen opens.
func TestTmuxServer(t *testing.T) {
	e, flowtui, parked, pending := newE2E(t, "flowtui-server")
	for name, text := range map[string]string{"ship1": shipV1, "ship2": shipV2} {
		if err := os.MkdirAll(filepath.Join(e.dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.dir, name, "ship.hcl"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeTok := strings.TrimSpace(e.flowrunCmd("tokens", "create", "tui", "--scope", "write"))
	readTok := strings.TrimSpace(e.flowrunCmd("tokens", "create", "look", "--scope", "read"))
	url := e.serve()
	elsewhere := t.TempDir()

	// A server that is down: said before the screen opens, exit 5.
	down := exec.Command(flowtui, "--server", "http://127.0.0.1:1")
	down.Dir = elsewhere
	down.Env = []string{"HOME=" + elsewhere, "FLOWRUN_TOKEN=" + writeTok}
	out, err := down.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitStore || !strings.Contains(string(out), "cannot read the runs of http://127.0.0.1:1") {
		t.Fatalf("flowtui --server of a server that is down: %v\n%s", err, out)
	}
	if strings.Contains(string(out), writeTok) {
		t.Fatalf("the token was printed:\n%s", out)
	}

	e.startRemote(elsewhere, flowtui, writeTok, "--server", url)

	// The list, through the server (its URL in the title).
	e.waitFor(strings.TrimPrefix(url, "http://"), "2 of 2 runs", "B-2", "A-1")

	// Cancel B-2 through the API, confirmed.
	e.key("c", "Cancel run "+pending+"?")
	e.key("y", "Cancel of run "+pending+" requested.", "⊘ ")
	if st := e.status(pending); st != "canceled" {
		t.Fatalf("B-2 is %s after the cancel, want canceled", st)
	}

	// Open A-1, send its signal: a malformed payload is explained first.
	e.key("j", "◷ waiting   "+parked[:10])
	e.key("Enter", "run "+parked, "STEPS (3)", "◷ approval", "signal approval")
	e.key("s", "Send a signal to run "+parked, "signal  approval")
	e.typeText(`{"ok": tru`)
	e.key("Enter", "not valid JSON")
	e.typeText("e}")
	e.waitFor(`payload {"ok": true}`)
	e.key("Enter", "Send signal approval?")
	e.key("y", "Signal approval sent to run "+parked, "no live worker")

	// Another process finishes the run; the open view follows it live.
	e.flowrunCmd("resume", parked)
	e.waitFor("✓ completed", "✓ ship")
	e.key("Escape", "2 of 2 runs")

	// A run blocked by a new MAJOR: the diff comes from the server's
	// plan, and the decision goes through the API.
	e.flowrunExit(3, "apply", "ship1/ship.hcl", "--input", "order=C-3")
	out2 := e.flowrunExit(4, "apply", "ship2/ship.hcl", "--input", "order=C-3")
	m := regexp.MustCompile(`run ([0-9A-Z]{26}) is blocked: a new MAJOR version`).FindStringSubmatch(out2)
	if m == nil {
		t.Fatalf("apply of 2.0.0 does not say which run is blocked:\n%s", out2)
	}
	blocked := m[1]
	e.waitFor("3 of 3 runs", "! blocked   "+blocked[:10])
	e.key("g", "3 of 3 runs")
	e.key("Enter", "run "+blocked, "BLOCKED on a version decision")
	e.key("d", "Run "+blocked+" of ship is blocked", "Changes from 1.0.0 to 2.0.0 (MAJOR)",
		"A migration keeps 1 completed step(s):", "m migrate")
	e.key("m", `Decide "migrate" for run `+blocked+"?", "Kept: price. Re-run: audit.")
	e.key("y", "Run "+blocked+": decided migrate.", "version 2.0.0 (bound)")
	if st := e.status(blocked); st != "pending" {
		t.Fatalf("run %s is %s after the migrate decision, want pending", blocked, st)
	}
	if v := e.flowrunCmd("show", blocked); !strings.Contains(v, "2.0.0") {
		t.Fatalf("show after the decision:\n%s", v)
	}
	e.tmux("send-keys", "-t", e.session, "q")
	waitGone(t, e)

	// A read token: the runs are shown, an action is refused naming the
	// scope it needs, and nothing changes.
	e.startRemote(elsewhere, flowtui, readTok, "--server", url)
	e.waitFor("3 of 3 runs")
	e.key("c", "Cancel run "+blocked+"?")
	e.key("y", `token "look" has scope read`, "needs scope write")
	if st := e.status(blocked); st != "pending" {
		t.Fatalf("run %s is %s after a refused cancel, want pending", blocked, st)
	}
}

// waitGone waits for the tmux session to end (flowtui quit).
func waitGone(t *testing.T, e *e2e) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("tmux", "-L", e.socket, "-f", os.DevNull, "has-session", "-t", e.session).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("flowtui did not quit on q:\n%s", e.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
