package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newE2E builds both binaries, writes approve.hcl, parks run A-1 on its
// signal and enqueues B-2, and returns the harness with the ids of A-1
// and B-2; flowtui is not started.
func newE2E(t *testing.T, session string) (e *e2e, flowtui, parked, pending string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped under -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
	}
	dir, bin := t.TempDir(), t.TempDir()
	e = &e2e{t: t, dir: dir, flowrun: build(t, bin, "github.com/flowrun/flowrun/cmd/flowrun", "flowrun"),
		session: session, socket: fmt.Sprintf("%s-%d-%s", session, os.Getpid(), filepath.Base(dir))}
	flowtui = build(t, bin, "github.com/flowrun/flowrun/cmd/flowtui", "flowtui")
	if err := os.WriteFile(filepath.Join(dir, "approve.hcl"), []byte(approveHCL), 0o600); err != nil {
		t.Fatal(err)
	}
	e.flowrunCmd("apply", "approve.hcl", "--input", "id=A-1")
	e.flowrunCmd("apply", "approve.hcl", "--input", "id=B-2", "--detach")
	var list []struct {
		RunID string `json:"run_id"`
		Key   string `json:"key"`
	}
	if err := json.Unmarshal([]byte(e.flowrunCmd("runs", "--json")), &list); err != nil || len(list) != 2 {
		t.Fatalf("runs --json: %v %+v", err, list)
	}
	for _, r := range list {
		if r.Key == "B-2" {
			pending = r.RunID
		} else {
			parked = r.RunID
		}
	}
	return e, flowtui, parked, pending
}

// start runs flowtui in the harness's tmux session at w x h.
func (e *e2e) start(flowtui string, w, h int, env ...string) {
	e.t.Helper()
	args := []string{"new-session", "-d", "-s", e.session, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", e.dir,
		"env", "NO_COLOR=1", "TERM=xterm-256color"}
	args = append(append(args, env...), flowtui)
	e.tmux(args...)
	e.t.Cleanup(func() { _ = exec.Command("tmux", "-L", e.socket, "kill-server").Run() })
}

// typeText types text literally into flowtui.
func (e *e2e) typeText(text string) { e.tmux("send-keys", "-t", e.session, "-l", text) }

// TestTmuxSearchAndJump: / narrows the list as it is typed and esc clears
// it; : jumps to a run by reference (WORKFLOW/KEY, as the CLI reads it),
// to a workflow's runs, to the dead letters and to the schedules, and says
// what is wrong with a reference that names no run.
func TestTmuxSearchAndJump(t *testing.T) {
	e, flowtui, parked, pending := newE2E(t, "flowtui-find")
	e.start(flowtui, 100, 30)
	e.waitFor("2 of 2 runs", "B-2", "A-1")

	e.key("/", "/█")
	e.typeText("b-")
	s := e.waitFor("/b-█", "1 of 2 runs")
	if !strings.Contains(s, pending[:10]) || strings.Contains(s, parked[:10]) {
		t.Fatalf("the search b- shows the wrong runs:\n%s", s)
	}
	e.typeText("x")
	e.waitFor("/b-x█", "0 of 2 runs", "No run matches the filters")
	e.key("Escape", "2 of 2 runs")

	e.key(":", "run REF")
	e.typeText("run approve/A-1")
	e.key("Enter", "run "+parked, "STEPS (3)", "◷ approval")
	e.key(":", "run REF")
	e.typeText("run nosuch@last")
	e.key("Enter", ":run nosuch@last:")
	e.key(":", "run REF")
	e.typeText("workflow approve")
	e.key("Enter", "2 of 2 runs", "workflow: approve")
	e.key(":", "run REF")
	e.typeText("dlq")
	e.key("Enter", "Dead letters")
	e.key(":", "run REF")
	e.typeText("schedules")
	e.key("Enter", "Schedules", "No schedules.")
}

// TestTmuxMouseSelect: a click on a row of the list selects it (enter then
// opens that run), and the wheel moves the selection.
func TestTmuxMouseSelect(t *testing.T) {
	e, flowtui, parked, pending := newE2E(t, "flowtui-mouse")
	e.start(flowtui, 100, 30)
	s := e.waitFor("2 of 2 runs", "B-2", "A-1")
	row := -1
	for i, l := range strings.Split(s, "\n") {
		if strings.Contains(l, parked[:10]) {
			row = i
		}
	}
	if row < 0 {
		t.Fatalf("no row of A-1:\n%s", s)
	}
	// An SGR mouse press and release of the left button on that row
	// (1-based coordinates).
	e.typeText(fmt.Sprintf("\x1b[<0;20;%dM\x1b[<0;20;%dm", row+1, row+1))
	s = e.key("Enter", "run "+parked, "◷ approval", "LOG step prepare")
	// In the run view a click on a step selects it: the log pane shows it.
	for i, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "◷ approval") {
			row = i
		}
	}
	e.typeText(fmt.Sprintf("\x1b[<0;8;%dM\x1b[<0;8;%dm", row+1, row+1))
	e.waitFor("LOG step approval")
	e.key("Escape", "2 of 2 runs")
	// The wheel up moves the selection back to the newest run.
	e.typeText(fmt.Sprintf("\x1b[<64;20;%dM", row+1))
	e.key("Enter", "run "+pending)
}
