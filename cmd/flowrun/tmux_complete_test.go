package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTmuxBashCompletion loads the script of `flowrun completion bash` into
// a real interactive bash (no rc files) in a tmux pane and completes with
// the Tab key as a user does: a run id from a prefix of it, WORKFLOW@last
// (bash splits words at @), WORKFLOW/KEY and the signal the run waits
// for; each completed command line is then run.
func TestTmuxBashCompletion(t *testing.T) {
	p, flowrun := newTmux(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	dir, db, web, api, prefix := completionRuns(t, flowrun)
	p.tmux("new-session", "-d", "-s", "main", "-x", "160", "-y", "40", "-c", dir,
		"env", "TERM=xterm-256color", "NO_COLOR=1", "FLOWRUN_DB="+db, "PS1=$ ",
		"PATH="+filepath.Dir(flowrun)+":"+os.Getenv("PATH"),
		"bash", "--norc", "--noprofile", "-i")
	keys := func(k ...string) { p.tmux(append([]string{"send-keys", "-t", "main"}, k...)...) }
	keys("source <(flowrun completion bash); echo loaded", "Enter")
	p.waitFor(`^loaded$`)
	prompt(p)

	// A run id from a lower-case prefix of it.
	keys("flowrun show "+prefix, "Tab")
	p.waitFor(`^\$ flowrun show ` + web + `$`)
	keys(" --json | grep run_id", "Enter")
	p.waitFor(`^  "run_id": "` + web + `",$`)
	prompt(p)

	// WORKFLOW@last: bash replaces only the piece after the @.
	keys("flowrun show deploy@la", "Tab")
	p.waitFor(`^\$ flowrun show deploy@last$`)
	keys(" --json | grep run_id", "Enter")
	p.waitFor(`^  "run_id": "` + api + `",$`)
	prompt(p)

	// WORKFLOW/KEY, then the signal the run waits for.
	keys("flowrun signal deploy/w", "Tab")
	p.waitFor(`^\$ flowrun signal deploy/web$`)
	keys("appr", "Tab")
	p.waitFor(`^\$ flowrun signal deploy/web approval$`)
	keys("Enter")
	p.waitFor(`^signal approval delivered to run ` + web + `$`)
}

// TestTmuxZshCompletion does the same in an interactive zsh (no rc files)
// with its completion system loaded, when zsh is installed.
func TestTmuxZshCompletion(t *testing.T) {
	p, flowrun := newTmux(t)
	if _, err := exec.LookPath("zsh"); err != nil {
		t.Skip("zsh is not installed (apt-get install zsh)")
	}
	dir, db, web, api, prefix := completionRuns(t, flowrun)
	p.tmux("new-session", "-d", "-s", "main", "-x", "160", "-y", "40", "-c", dir,
		"env", "TERM=xterm-256color", "NO_COLOR=1", "FLOWRUN_DB="+db, "PS1=$ ",
		"PATH="+filepath.Dir(flowrun)+":"+os.Getenv("PATH"),
		"zsh", "-f", "-i")
	keys := func(k ...string) { p.tmux(append([]string{"send-keys", "-t", "main"}, k...)...) }
	keys("autoload -U compinit && compinit -u && source <(flowrun completion zsh) && echo loaded", "Enter")
	p.waitFor(`^loaded$`)
	prompt(p)

	keys("flowrun show "+prefix, "Tab")
	p.waitFor(`^\$ flowrun show ` + web + `$`)
	keys(" --json | grep run_id", "Enter")
	p.waitFor(`^  "run_id": "` + web + `",$`)
	prompt(p)

	keys("flowrun show deploy@la", "Tab")
	p.waitFor(`^\$ flowrun show deploy@last$`)
	keys(" --json | grep run_id", "Enter")
	p.waitFor(`^  "run_id": "` + api + `",$`)
	prompt(p)

	keys("flowrun signal deploy/w", "Tab")
	p.waitFor(`^\$ flowrun signal deploy/web$`)
	keys("appr", "Tab")
	p.waitFor(`^\$ flowrun signal deploy/web approval$`)
	keys("Enter")
	p.waitFor(`^signal approval delivered to run ` + web + `$`)
}

// prompt waits for the shell's next empty prompt, so that the next keys
// are not typed ahead of it: a line typed while the last command still
// runs is echoed before the prompt and the screen no longer shows the
// "$ COMMAND" line the test waits for (seen under load).
func prompt(p *tmuxPane) {
	p.t.Helper()
	p.waitFor(`^\$ ?$`)
}

// completionRuns starts two runs of a workflow that waits for a signal,
// keys web and api, in a new directory, and returns the directory, the
// database, both run ids and a lower-case prefix of web's id that api's
// does not share.
func completionRuns(t *testing.T, flowrun string) (dir, db, web, api, prefix string) {
	t.Helper()
	dir = t.TempDir()
	db = filepath.Join(dir, "flowrun.db")
	writeFile(t, filepath.Join(dir, "deploy.hcl"), `
workflow "deploy" {
  version = "1.0.0"
  input "service" { type = string }
  key = "input.service"
  step "ask" {
    wait { signal = "approval" }
  }
}
`)
	var ids []string
	for _, service := range []string{"web", "api"} {
		cmd := exec.Command(flowrun, "apply", "deploy.hcl", "--input", "service="+service, "--detach")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "FLOWRUN_DB="+db, "NO_COLOR=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("flowrun apply: %v\n%s", err, out)
		}
		id := regexp.MustCompile(runID).FindString(string(out))
		if id == "" {
			t.Fatalf("no run id in the output of apply:\n%s", out)
		}
		ids = append(ids, id)
	}
	web, api = ids[0], ids[1]
	// The shortest prefix of web's id that api's does not share, plus one.
	n := 0
	for n < len(web) && web[n] == api[n] {
		n++
	}
	prefix = strings.ToLower(web[:n+1])

	return dir, db, web, api, prefix
}
