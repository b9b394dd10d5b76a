package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The end-to-end test drives the real flowtui binary in a tmux session at
// 80x24 against a database made by the real flowrun binary, and reads the
// screen with capture-pane. It is skipped when tmux is not installed (CI
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

type e2e struct {
	t       *testing.T
	dir     string
	flowrun string
	session string
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

func (e *e2e) tmux(args ...string) string {
	e.t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (e *e2e) screen() string { return e.tmux("capture-pane", "-p", "-t", e.session) }

// waitFor polls the screen until it holds every want, for at most 10s (a
// safety net: the interface shows a change within 500ms).
func (e *e2e) waitFor(want ...string) string {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
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
		session: "flowtui-e2e-" + filepath.Base(dir)}
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
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", e.session).Run() })

	// The list, newest first: the pending B-2 is selected.
	e.waitFor("2 of 2 runs", "B-2", "A-1")

	// Cancel B-2, confirmed.
	e.key("c", "Cancel run "+pending+"?")
	e.key("y", "Cancel of run "+pending+" requested.", "⊘ ")
	if s := e.status(pending); s != "canceled" {
		t.Fatalf("B-2 is %s after the cancel, want canceled", s)
	}

	// Open A-1: its steps as a tree, the wait step and its signal.
	e.key("j", "◷ …")
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

	// Back to the list, then quit.
	e.key("Escape", "2 of 2 runs")
	e.tmux("send-keys", "-t", e.session, "q")
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("tmux", "has-session", "-t", e.session).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("flowtui did not quit on q:\n%s", e.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
