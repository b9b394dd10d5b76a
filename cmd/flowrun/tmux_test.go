package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The tmux tests run the real flowrun command line in a tmux pane at
// 80x24, so its stderr is a terminal, and read the screen with
// capture-pane: the live progress view of apply, its end, Ctrl-C, and the
// plain lines of --no-tui. They are skipped under -short and when tmux is
// not installed (CI installs it). The flowrun in the pane is this test
// binary under the name flowrun (TestMain runs the command line then).

// tmuxPane is one tmux server of its own (so the tests never touch the
// user's) with one session running a shell command.
type tmuxPane struct {
	t      *testing.T
	socket string
}

// waitLimit bounds every wait on the screen. It is a safety net against a
// hung test on a loaded machine, never a timing assumption: each wait polls
// until the screen shows what it must.
const waitLimit = 60 * time.Second

func newTmux(t *testing.T) (*tmuxPane, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("the tmux end-to-end tests are skipped under -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the end-to-end tests of the live view need it (apt-get install tmux)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	flowrun := filepath.Join(bin, "flowrun")
	if err := os.Symlink(self, flowrun); err != nil {
		t.Fatal(err)
	}
	p := &tmuxPane{t: t, socket: fmt.Sprintf("flowrun-test-%d-%s", os.Getpid(), t.Name())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p, flowrun
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket, "-f", os.DevNull}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs flowrun with args in a new 80x24 session in dir, with
// NO_COLOR set and the database in dir. When flowrun ends its exit status
// is printed and the pane stays, so the screen can be read.
func (p *tmuxPane) start(dir, flowrun string, args ...string) {
	p.t.Helper()
	cmd := []string{"new-session", "-d", "-s", "main", "-x", "80", "-y", "24", "-c", dir,
		"env", "TERM=xterm-256color", "NO_COLOR=1", "FLOWRUN_DB=" + filepath.Join(dir, "flowrun.db"),
		// The shell traps Ctrl-C (so it outlives flowrun's interrupt)
		// without ignoring it, which flowrun would inherit.
		"sh", "-c", `trap : INT; "$0" "$@"; echo "flowrun exited with $?"; exec sleep 3600`, flowrun}
	p.tmux(append(cmd, args...)...)
}

// screen is the pane's text with its scrollback, wrapped lines joined and
// trailing spaces dropped.
func (p *tmuxPane) screen() string {
	lines := strings.Split(p.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "main"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// waitFor polls the screen until every pattern matches it (each a regular
// expression in multi-line mode) and returns that screen.
func (p *tmuxPane) waitFor(patterns ...string) string {
	p.t.Helper()
	res := make([]*regexp.Regexp, len(patterns))
	for i, s := range patterns {
		res[i] = regexp.MustCompile("(?m)" + s)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		s := p.screen()
		ok := true
		for _, re := range res {
			ok = ok && re.MatchString(s)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %q:\n%s", patterns, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gateHCL's first step waits for a file the test creates, so the test sees
// it running; a short sleep (waited in the process) and a last step follow.
const gateHCL = `
workflow "gate" {
  version = "1.0.0"
  step "work" {
    exec {
      command = ["sh", "-c", "while [ ! -f go ]; do sleep 0.05; done; echo worked"]
    }
  }
  step "nap" {
    depends_on = [step.work]
    sleep { duration = "4s" }
  }
  step "last" {
    depends_on = [step.nap]
    exec { command = ["echo", "done"] }
  }
}
`

const (
	spinner = `[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`
	runID   = `[0-9A-Z]{26}`
)

func TestTmuxLiveView(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gate.hcl"), gateHCL)
	p.start(dir, flowrun, "apply", "gate.hcl")

	// The live view: a spinner in the run's line, the running step, the bar.
	s := p.waitFor(
		`^`+spinner+` gate 1\.0\.0 · run `+runID+` · running`,
		`^  ▶ work +running`,
		`^  ░{40} 0/3 steps$`)
	// The spinner turns.
	first := regexp.MustCompile(spinner).FindString(s)
	p.waitFor(`^` + strings.NewReplacer(first, "").Replace(spinner) + ` gate 1\.0\.0`)

	// The step ends; the run waits on its timer, in the process.
	writeFile(t, filepath.Join(dir, "go"), "")
	p.waitFor(`^`+spinner+` gate 1\.0\.0 · run `+runID+` · waiting .*waiting on timer`,
		`^  ◷ nap +waiting`,
		`^  █+░+ 1/3 steps$`)

	// The end: the view's last frame stays, then the result, each on its own
	// lines.
	s = p.waitFor(`^flowrun exited with 0$`)
	for _, want := range []string{
		`^✓ gate 1\.0\.0 · run ` + runID + ` · completed · \d+s$`,
		`^  █{40} 3/3 steps\nrun       ` + runID + `$`,
		`^status    completed$`,
		`^last +completed +1 `,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the final screen lacks %q:\n%s", want, s)
		}
	}
	// Only the last frame is left, and no frame's line was left behind.
	if n := strings.Count(s, "gate 1.0.0 · run"); n != 1 {
		t.Errorf("the run's line shows %d times, want once:\n%s", n, s)
	}
	if strings.Contains(s, "▶ work") || strings.Contains(s, "◷ nap") || regexp.MustCompile(spinner).MatchString(s) {
		t.Errorf("lines of earlier frames are left on the screen:\n%s", s)
	}
}

func TestTmuxLiveViewCtrlC(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gate.hcl"), gateHCL)
	p.start(dir, flowrun, "apply", "gate.hcl")
	p.waitFor(`^  ▶ work +running`)

	// Ctrl-C stays with the command line and stops gracefully: the view
	// says so, the step in flight may finish, nothing new starts.
	p.tmux("send-keys", "-t", "main", "C-c")
	p.waitFor(`^  stopping: no new step starts; the actions in flight may finish`)
	writeFile(t, filepath.Join(dir, "go"), "")
	// The run is parked, exit 3, and the messages follow the view's last
	// frame on lines of their own. The sleep step after work is not started
	// (a drain starts no step of any kind, semantics §14): the run is
	// pending, due at once for resume.
	s := p.waitFor(`^flowrun exited with 3$`)
	for _, want := range []string{
		`^. gate 1\.0\.0 · run ` + runID + ` · pending`,
		`^  █+░+ 1/3 steps\n  stopping: .*\nflowrun apply: interrupted; run ` + runID + ` is parked safely and loses nothing\.$`,
		`^hint: Continue it with: flowrun resume ` + runID + `$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the screen after Ctrl-C lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "▶ work") {
		t.Errorf("a running step's line is left on the screen:\n%s", s)
	}
}

func TestTmuxLiveViewCtrlCTwice(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gate.hcl"), gateHCL)
	p.start(dir, flowrun, "apply", "gate.hcl")
	p.waitFor(`^  ▶ work +running`)

	// A second Ctrl-C stops the step in flight at once: the run is parked
	// with nothing done, exit 3.
	p.tmux("send-keys", "-t", "main", "C-c")
	p.waitFor(`^  stopping: `)
	p.tmux("send-keys", "-t", "main", "C-c")
	s := p.waitFor(`^flowrun exited with 3$`)
	for _, want := range []string{
		`^· gate 1\.0\.0 · run ` + runID + ` · pending`,
		`^  ░{40} 0/3 steps\n  stopping: .*\nflowrun apply: interrupted; run ` + runID + ` is parked safely and loses nothing\.$`,
		`^hint: Continue it with: flowrun resume ` + runID + `$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the screen after two Ctrl-C lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "▶ work") {
		t.Errorf("a running step's line is left on the screen:\n%s", s)
	}
}

func TestTmuxNoTUI(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gate.hcl"), gateHCL)
	writeFile(t, filepath.Join(dir, "go"), "")
	p.start(dir, flowrun, "apply", "--no-tui", "gate.hcl")

	// One plain line per event, then the result; nothing is drawn.
	s := p.waitFor(`^flowrun exited with 0$`)
	for _, want := range []string{
		`^\[\d\d:\d\d:\d\d\] step work started \(attempt 1\)$`,
		`^\[\d\d:\d\d:\d\d\] step nap completed$`,
		`^\[\d\d:\d\d:\d\d\] run completed\nrun       ` + runID + `$`,
		`^status    completed$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the screen of apply --no-tui lacks %q:\n%s", want, s)
		}
	}
	if strings.ContainsAny(s, "█░⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏") {
		t.Errorf("apply --no-tui drew the live view:\n%s", s)
	}
}

const (
	shipV1 = `
workflow "ship" {
  version = "1.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
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
	// shipV2 is a MAJOR change: label no longer needs ask.
	shipV2 = `
workflow "ship" {
  version = "2.0.0"
  input "order" { type = string }
  key = "input.order"
  step "price" {
    set { total = 10 }
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
)

func TestTmuxDecisionPromptThenLiveView(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ship1.hcl"), shipV1)
	writeFile(t, filepath.Join(dir, "ship2.hcl"), shipV2)
	// 1.0.0 parks on its signal (exit 3), off the terminal.
	cmd := exec.Command(flowrun, "apply", "ship1.hcl", "--input", "order=A")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FLOWRUN_DB="+filepath.Join(dir, "flowrun.db"))
	if out, err := cmd.CombinedOutput(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("apply of 1.0.0: %v\n%s", err, out)
	}

	// Applying 2.0.0 on the terminal asks about the blocked run first.
	p.start(dir, flowrun, "apply", "ship2.hcl", "--input", "order=A")
	p.waitFor(`Run `+runID+` of ship is blocked`, `A migration keeps 1 completed step\(s\):`, `m migrate`)
	p.tmux("send-keys", "-t", "main", "m")
	p.waitFor(`Decide "migrate" for run ` + runID + `\?`)
	p.tmux("send-keys", "-t", "main", "y")

	// Then the run goes on under the live view, on 2.0.0, until it parks
	// on its signal again; the prompt's box is gone.
	s := p.waitFor(`^flowrun exited with 3$`)
	for _, want := range []string{
		`^flowrun apply: run ` + runID + ` decided migrate: it moves to version 2\.0\.0; kept: price; re-run: none\.$`,
		`^◷ ship 2\.0\.0 · run ` + runID + ` · waiting`,
		`^  ◷ ask +waiting .*signal go$`,
		`^  █+░+ 2/3 steps\nrun       ` + runID + `$`,
		`^status    waiting \(signal:go\)$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the screen after the decision lacks %q:\n%s", want, s)
		}
	}
	if strings.ContainsAny(s, "┌└│") {
		t.Errorf("the decision prompt's box is left on the screen:\n%s", s)
	}
}

// TestTmuxResumePrompt: `flowrun resume RUN` on a terminal asks for the
// version decision of a run parked on 1.0.0 after 2.0.0 was applied (by an
// apply of another key, which names the run it blocks), as apply does,
// and then runs it on; without a terminal it exits 4.
func TestTmuxResumePrompt(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ship1.hcl"), shipV1)
	writeFile(t, filepath.Join(dir, "ship2.hcl"), shipV2)
	run := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(flowrun, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NO_COLOR=1", "FLOWRUN_DB="+filepath.Join(dir, "flowrun.db"))
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != want {
			t.Fatalf("flowrun %v: %v, want exit %d\n%s", args, err, want, out)
		}
		return string(out)
	}
	out := run(3, "apply", "ship1.hcl", "--input", "order=A")
	id := regexp.MustCompile(`(?m)^run +(` + runID + `)$`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no run id in:\n%s", out)
	}
	out = run(0, "apply", "ship2.hcl", "--input", "order=B", "--detach")
	if want := "  run " + id[1] + " (version 1.0.0, waiting): flowrun resume " + id[1] + " --choose old|new|migrate"; !strings.Contains(out, want) {
		t.Fatalf("apply of 2.0.0 does not name the run it blocks (%q):\n%s", want, out)
	}
	run(4, "resume", id[1])

	p.start(dir, flowrun, "resume", id[1])
	p.waitFor(`Run `+id[1]+` of ship is blocked`, `m migrate`)
	p.tmux("send-keys", "-t", "main", "m")
	p.waitFor(`Decide "migrate" for run ` + id[1] + `\?`)
	p.tmux("send-keys", "-t", "main", "y")
	s := p.waitFor(`^flowrun exited with 3$`)
	for _, want := range []string{
		`^flowrun resume: run ` + id[1] + ` decided migrate: it moves to version 2\.0\.0; kept: price; re-run: none\.$`,
		`^status    waiting \(signal:go\)$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the screen after the decision lacks %q:\n%s", want, s)
		}
	}
	if out := run(0, "logs", id[1]); !strings.Contains(out, "by resume prompt") {
		t.Errorf("the decision is not recorded as the resume prompt's:\n%s", out)
	}
}

// TestTmuxResumePromptServer: `flowrun resume RUN --server URL` on a
// terminal asks for the version decision as resume does locally, with the
// diff of the server's plan (GET /v1/runs/{id}/decision/plan), takes it
// through the API and leaves the run to the server's workers; without a
// terminal it says how to decide (exit 2).
func TestTmuxResumePromptServer(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ship1.hcl"), shipV1)
	writeFile(t, filepath.Join(dir, "ship2.hcl"), shipV2)
	env := append(os.Environ(), "NO_COLOR=1", "FLOWRUN_DB="+filepath.Join(dir, "flowrun.db"))
	run := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(flowrun, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != want {
			t.Fatalf("flowrun %v: %v, want exit %d\n%s", args, err, want, out)
		}
		return string(out)
	}
	out := run(3, "apply", "ship1.hcl", "--input", "order=A")
	id := regexp.MustCompile(`(?m)^run +(` + runID + `)$`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no run id in:\n%s", out)
	}
	run(0, "apply", "ship2.hcl", "--input", "order=B", "--detach")
	addr := filepath.Join(dir, "addr")
	srv := exec.Command(flowrun, "serve", "--no-auth", "--listen", "127.0.0.1:0", "--addr-file", addr)
	srv.Dir, srv.Env = dir, env
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	})
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == ""; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(addr); err == nil && strings.HasSuffix(string(b), "\n") {
			url = "http://" + strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			t.Fatal("flowrun serve wrote no address in 30s")
		}
	}
	if out := run(2, "resume", id[1], "--server", url); !strings.Contains(out, "--choose old|new|migrate --server "+url) {
		t.Fatalf("resume --server off a terminal does not say how to decide:\n%s", out)
	}

	p.start(dir, flowrun, "resume", id[1], "--server", url)
	p.waitFor(`Run `+id[1]+` of ship is`, `Changes from 1\.0\.0 to 2\.0\.0 \(MAJOR\)`, `m migrate`)
	p.tmux("send-keys", "-t", "main", "m")
	p.waitFor(`Decide "migrate" for run ` + id[1] + `\?`)
	p.tmux("send-keys", "-t", "main", "y")
	s := p.waitFor(`^flowrun exited with 0$`)
	for _, want := range []string{
		`^flowrun resume: run ` + id[1] + ` decided migrate: it moves to version 2\.0\.0; kept: price; re-run: none\.$`,
		`^flowrun resume: run ` + id[1] + ` is left to the workers of ` + regexp.QuoteMeta(url),
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the screen after the decision lacks %q:\n%s", want, s)
		}
	}
	if out := run(0, "show", id[1]); !strings.Contains(out, "ship 2.0.0") {
		t.Errorf("the run is not on 2.0.0 after the decision:\n%s", out)
	}
}

// TestTmuxLiveViewOutputTail: on a real terminal, apply's live view shows
// the last lines a running step wrote under the step, escaped (an
// erase-line in them is drawn as \x1b[2K, not carried out), and the final
// frame drops them with the step.
func TestTmuxLiveViewOutputTail(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "talk.hcl"), `
workflow "talk" {
  version = "1.0.0"
  step "work" {
    exec {
      command = ["sh", "-c", "for i in 1 2 3 4; do echo line $i; done; printf 'fake\\033[2Kall good\\n' >&2; while [ ! -f go ]; do sleep 0.05; done"]
    }
  }
}
`)
	p.start(dir, flowrun, "apply", "talk.hcl")
	s := p.waitFor(
		`^  ▶ work +running`,
		`^    │ line 3$`,
		`^    │ line 4$`,
		`^    │ stderr fake\\x1b\[2Kall good$`)
	if strings.Contains(s, "│ line 1") {
		t.Errorf("the tail holds more than the last 3 lines:\n%s", s)
	}
	writeFile(t, filepath.Join(dir, "go"), "")
	s = p.waitFor(`^flowrun exited with 0$`)
	if strings.Contains(s, "│ line") {
		t.Errorf("the final frame still shows the output tail:\n%s", s)
	}
}
