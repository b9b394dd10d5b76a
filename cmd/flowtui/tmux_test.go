package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The end-to-end test drives the real flowtui binary in a tmux session at
// 80x24 against a database made by the real flowrun binary, and reads the
// screen with capture-pane: cancel a run, open a run, send a signal (a
// malformed payload first), follow a change made by another process, and
// decide a run blocked by a MAJOR version. It is skipped when tmux is not installed (CI
// installs it) and under -short.

const approveHCL = `
workflow "approve" {
  version = "1.0.0"
  input "id" {
    type = string
  }
  key = "input.id"
  step "prepare" {
    exec {
      command = ["echo", "preparing {{ input.id }}"]
    }
  }
  step "approval" {
    depends_on = [step.prepare]
    wait {
      signal = "approval"
    }
  }
  step "ship" {
    exec {
      command = ["echo", "{{ steps.approval.output }}"]
    }
  }
}
`

// shipV1 parks on its signal; shipV2 is a MAJOR change of it (label no
// longer needs ask), which blocks a run of 1.0.0 until it is decided.
const shipV1 = `
workflow "ship" {
  version = "1.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
  }
  step "audit" {
    set { seen = "v1 {{ steps.price.output.total }}" }
  }
  step "ask" {
    depends_on = [step.price]
    wait { signal = "go" }
  }
  step "label" {
    depends_on = [step.ask]
    set { text = "v1 {{ steps.price.output.total }}" }
  }
}
`

const shipV2 = `
workflow "ship" {
  version = "2.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
  }
  step "audit" {
    set { seen = "v2 {{ steps.price.output.total }}" }
  }
  step "ask" {
    depends_on = [step.price]
    wait { signal = "go" }
  }
  step "label" {
    set { text = "v2 {{ steps.price.output.total }}" }
  }
}
`

type e2e struct {
	t       *testing.T
	dir     string
	flowrun string
	session string
	// socket names the test's own tmux server (-L), started without a
	// configuration file, so neither the user's server nor their
	// ~/.tmux.conf takes part.
	socket string
}

func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// flowrunCmd runs flowrun in the test directory; exit codes 0 and 3
// (parked) are expected.
func (e *e2e) flowrunCmd(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(e.flowrun, args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		err = nil
	}
	if err != nil {
		e.t.Fatalf("flowrun %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// flowrunExit runs flowrun in the test directory and checks its exit code.
func (e *e2e) flowrunExit(code int, args ...string) string {
	e.t.Helper()
	cmd := exec.Command(e.flowrun, args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("flowrun %v: %v", args, err)
	}
	if got != code {
		e.t.Fatalf("flowrun %v exited with %d, want %d:\n%s", args, got, code, out)
	}
	return string(out)
}

func (e *e2e) tmux(args ...string) string {
	e.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", e.socket, "-f", os.DevNull}, args...)...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (e *e2e) screen() string { return e.tmux("capture-pane", "-p", "-t", e.session) }

// waitFor polls the screen until it holds every want, for at most 60s (a
// safety net for a loaded machine: the interface shows a change within
// 500ms).
func (e *e2e) waitFor(want ...string) string {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := e.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the screen never showed %q:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// key sends one key and waits for the screen to show want.
func (e *e2e) key(k string, want ...string) string {
	e.t.Helper()
	e.tmux("send-keys", "-t", e.session, k)
	return e.waitFor(want...)
}

func (e *e2e) status(id string) string {
	e.t.Helper()
	var v struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(e.flowrunCmd("show", id, "--json")), &v); err != nil {
		e.t.Fatalf("show %s: %v", id, err)
	}
	return v.Status
}

func TestTmuxEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped under -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := t.TempDir()
	e := &e2e{t: t, dir: dir, flowrun: build(t, bin, "github.com/flowrun/flowrun/cmd/flowrun", "flowrun"),
		session: "flowtui-e2e", socket: fmt.Sprintf("flowtui-e2e-%d-%s", os.Getpid(), filepath.Base(dir))}
	flowtui := build(t, bin, "github.com/flowrun/flowrun/cmd/flowtui", "flowtui")
	if err := os.WriteFile(filepath.Join(dir, "approve.hcl"), []byte(approveHCL), 0o600); err != nil {
		t.Fatal(err)
	}
	// A-1 runs until it waits for its signal; B-2 is only enqueued.
	e.flowrunCmd("apply", "approve.hcl", "--input", "id=A-1")
	waiting := strings.TrimSpace(e.flowrunCmd("apply", "approve.hcl", "--input", "id=B-2", "--detach"))
	var list []struct {
		RunID string `json:"run_id"`
		Key   string `json:"key"`
	}
	if err := json.Unmarshal([]byte(e.flowrunCmd("runs", "--json")), &list); err != nil || len(list) != 2 {
		t.Fatalf("runs --json: %v %+v", err, list)
	}
	pending, parked := "", ""
	for _, r := range list {
		if r.Key == "B-2" {
			pending = r.RunID
		} else {
			parked = r.RunID
		}
	}
	if pending == "" || !strings.Contains(waiting, pending) {
		t.Fatalf("detached run id %q not in %+v", waiting, list)
	}

	e.tmux("new-session", "-d", "-s", e.session, "-x", "80", "-y", "24", "-c", dir,
		"env", "NO_COLOR=1", "TERM=xterm-256color", flowtui)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", e.socket, "kill-server").Run() })

	// The list, newest first: the pending B-2 is selected.
	e.waitFor("2 of 2 runs", "B-2", "A-1")

	// Cancel B-2, confirmed.
	e.key("c", "Cancel run "+pending+"?")
	e.key("y", "Cancel of run "+pending+" requested.", "⊘ ")
	if s := e.status(pending); s != "canceled" {
		t.Fatalf("B-2 is %s after the cancel, want canceled", s)
	}

	// Open A-1: its steps as a tree, the wait step and its signal.
	e.key("j", "◷ waiting   "+parked[:10]) // the list shows the head of an id, as flowrun resolves it
	e.key("Enter", "run "+parked, "version 1.0.0 (bound)", "STEPS (3)", "◷ approval", "signal approval")

	// Send the signal: a malformed payload is explained, then fixed.
	e.key("s", "Send a signal to run "+parked, "signal  approval")
	e.tmux("send-keys", "-t", e.session, "-l", `{"ok": tru`)
	e.waitFor(`payload {"ok": tru`)
	e.key("Enter", "not valid JSON")
	e.tmux("send-keys", "-t", e.session, "-l", "e}")
	e.waitFor(`payload {"ok": true}`)
	e.key("Enter", "Send signal approval?")
	e.key("y", "Signal approval sent to run "+parked)

	// Another process finishes the run; the open view follows it live.
	e.flowrunCmd("resume", parked)
	e.waitFor("✓ completed", "✓ ship")

	// Back to the list.
	e.key("Escape", "2 of 2 runs")

	// Decide a blocked run. ship 1.0.0 parks on its signal; 2.0.0 is a
	// MAJOR change, and apply without a terminal and without --on-major
	// leaves the run blocked (exit 4). The list shows it live, on top.
	for name, text := range map[string]string{"ship1.hcl": shipV1, "ship2.hcl": shipV2} {
		if err := os.MkdirAll(filepath.Join(dir, strings.TrimSuffix(name, ".hcl")), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(name, ".hcl"), "ship.hcl"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.flowrunExit(3, "apply", "ship1/ship.hcl", "--input", "order=C-3")
	out := e.flowrunExit(4, "apply", "ship2/ship.hcl", "--input", "order=C-3")
	m := regexp.MustCompile(`run ([0-9A-Z]{26}) is blocked: a new MAJOR version`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("apply of 2.0.0 does not say which run is blocked:\n%s", out)
	}
	blocked := m[1]
	if s := e.status(blocked); s != "blocked" {
		t.Fatalf("run %s is %s after the MAJOR apply, want blocked:\n%s", blocked, s, out)
	}
	short := blocked[:10]
	e.waitFor("3 of 3 runs", "! blocked   "+short+" ship     1.0.0")

	// Open it: the banner; d shows the changes and what a migration keeps.
	e.key("g", "3 of 3 runs")
	e.key("Enter", "run "+blocked, "! blocked", "BLOCKED on a version decision")
	e.key("d", "Run "+blocked+" of ship is blocked", "Changes from 1.0.0 to 2.0.0 (MAJOR)",
		"A migration keeps 1 completed step(s):", "m migrate")
	// Migrate, confirmed: the run moves to 2.0.0 and is no longer blocked.
	e.key("m", `Decide "migrate" for run `+blocked+"?", "Kept: price. Re-run: audit.")
	e.key("y", "Run "+blocked+": decided migrate.", "version 2.0.0 (bound)", "· pending")
	if s := e.status(blocked); s != "pending" {
		t.Fatalf("run %s is %s after the migrate decision, want pending", blocked, s)
	}
	s := e.key("Escape", "3 of 3 runs", "· pending   "+short+" ship     2.0.0")
	if strings.Contains(s, "! "+short) {
		t.Fatalf("the list still shows a blocked run:\n%s", s)
	}

	// Quit.
	e.tmux("send-keys", "-t", e.session, "q")
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("tmux", "-L", e.socket, "-f", os.DevNull, "has-session", "-t", e.session).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("flowtui did not quit on q:\n%s", e.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
