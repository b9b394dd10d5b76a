package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTmuxSchedules drives the real flowtui on a database where `flowrun
// apply` of examples/nightly-report.hcl activated its schedule: the
// schedules tab lists it, p pauses it after a confirm and `flowrun
// schedules` then reads it paused; t triggers a run, which the tab shows
// as its last run with its status; u unpauses it. Under NO_COLOR the
// screen carries no colour, but the row under the cursor is reversed.
func TestTmuxSchedules(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped under -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
	}
	dir, bin := t.TempDir(), t.TempDir()
	e := &e2e{t: t, dir: dir, flowrun: build(t, bin, "github.com/flowrun/flowrun/cmd/flowrun", "flowrun"),
		session: "flowtui-schedules", socket: fmt.Sprintf("flowtui-schedules-%d-%s", os.Getpid(), filepath.Base(dir))}
	flowtui := build(t, bin, "github.com/flowrun/flowrun/cmd/flowtui", "flowtui")
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "nightly-report.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nightly-report.hcl"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	e.flowrunCmd("apply", "nightly-report.hcl")
	if out := e.flowrunCmd("schedules"); !regexp.MustCompile(`(?m)^nightly-report/nightly .* Europe/Berlin +no `).MatchString(out) {
		t.Fatalf("flowrun schedules before the pause:\n%s", out)
	}

	e.start(flowtui, 120, 30)
	e.waitFor("0 of 0 runs")
	s := e.key("4", "Schedules", "nightly-report/nightly", "cron 0 2 * * *", "active", "none yet")
	if !regexp.MustCompile(`nightly-report/nightly .* active +in \d`).MatchString(s) {
		t.Fatalf("the tab shows no next fire:\n%s", s)
	}
	noColourButReverse(t, e.tmux("capture-pane", "-p", "-e", "-t", e.session))

	e.key("p", "Pause schedule nightly-report/nightly?")
	e.key("y", "Schedule nightly-report/nightly paused.")
	s = e.waitFor("paused")
	if out := e.flowrunCmd("schedules"); !regexp.MustCompile(`(?m)^nightly-report/nightly .* Europe/Berlin +yes `).MatchString(out) {
		t.Fatalf("flowrun schedules after p in flowtui does not read paused:\n%s\nscreen:\n%s", out, s)
	}

	e.key("t", "Trigger schedule nightly-report/nightly now?")
	s = e.key("y", "Schedule nightly-report/nightly triggered: run ")
	id := regexp.MustCompile(`triggered: run (\w+)\.`).FindStringSubmatch(s)
	if id == nil {
		t.Fatalf("no run id in:\n%s", s)
	}
	e.waitFor(id[1] + " " + e.status(id[1]))

	e.key("u", "Unpause schedule nightly-report/nightly?")
	e.key("y", "Schedule nightly-report/nightly unpaused.")
	if out := e.flowrunCmd("schedules"); !regexp.MustCompile(`(?m)^nightly-report/nightly .* Europe/Berlin +no .* ` + id[1] + `$`).MatchString(out) {
		t.Fatalf("flowrun schedules after u in flowtui:\n%s", out)
	}
	e.tmux("send-keys", "-t", e.session, "q")
}

// noColourButReverse checks a screen captured with its escape sequences
// (capture-pane -e): no SGR parameter sets a colour, and some line is
// reversed (the row under the cursor). 39 and 49, which tmux writes to
// return to the terminal's own colours, set none.
func noColourButReverse(t *testing.T, screen string) {
	t.Helper()
	reversed, coloured := false, ""
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllStringSubmatch(screen, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			switch {
			case n == 7:
				reversed = true
			case n == 39 || n == 49:
			case (n >= 30 && n <= 48) || (n >= 90 && n <= 107):
				coloured = m[0]
			}
		}
	}
	if coloured != "" {
		t.Errorf("the screen under NO_COLOR carries colour %q:\n%q", coloured, screen)
	}
	if !reversed {
		t.Errorf("under NO_COLOR no row is reversed, so the cursor does not show:\n%q", screen)
	}
}
