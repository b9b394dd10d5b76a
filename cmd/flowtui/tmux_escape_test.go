package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// hostileHCL fails a step whose stderr would erase its line on a terminal
// and return the cursor, so that "fake" reads "all good" (issue 17: it did
// in flowtui).
const hostileHCL = `
workflow "hostile" {
  version = "1.0.0"
  step "boom" {
    exec {
      command = ["sh", "-c", "printf 'fake\\033[2K\\rall good' >&2; exit 4"]
    }
  }
}
`

// TestTmuxEscapes drives the real flowtui in tmux on a run of hostileHCL:
// the run view and the step view show the program's bytes escaped, and no
// line of the screen reads "all good" on its own.
func TestTmuxEscapes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped under -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := t.TempDir()
	e := &e2e{t: t, dir: dir, flowrun: build(t, bin, "github.com/flowrun/flowrun/cmd/flowrun", "flowrun"),
		session: "flowtui-escapes", socket: fmt.Sprintf("flowtui-escapes-%d-%s", os.Getpid(), filepath.Base(dir))}
	flowtui := build(t, bin, "github.com/flowrun/flowrun/cmd/flowtui", "flowtui")
	if err := os.WriteFile(filepath.Join(dir, "hostile.hcl"), []byte(hostileHCL), 0o600); err != nil {
		t.Fatal(err)
	}
	e.flowrunExit(1, "apply", "hostile.hcl")

	e.tmux("new-session", "-d", "-s", e.session, "-x", "120", "-y", "40", "-c", dir,
		"env", "NO_COLOR=1", "TERM=xterm-256color", flowtui)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", e.socket, "kill-server").Run() })

	allGood := regexp.MustCompile(`(?m)^\s*all good`)
	e.waitFor("1 of 1 runs", "hostile")
	s := e.key("Enter", `error: exec: command "sh" exited with status 4: fake\x1b[2K\rall good`)
	if allGood.MatchString(s) {
		t.Errorf("the run view let the terminal draw the program's escape sequences:\n%s", s)
	}
	s = e.key("Enter", "step boom", "STDERR (last 10 lines)", "\nfake\\x1b[2K\\rall good")
	if allGood.MatchString(s) {
		t.Errorf("the step view let the terminal draw the program's escape sequences:\n%s", s)
	}
	e.tmux("send-keys", "-t", e.session, "q")
}
