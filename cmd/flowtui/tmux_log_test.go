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

// slowHCL's step writes a line, then waits for a file before the next, so
// the test decides when each line is written.
const slowHCL = `
workflow "slow" {
  version = "1.0.0"
  step "talk" {
    exec {
      command = ["sh", "-c", "echo tick-1; while [ ! -f go2 ]; do sleep 0.05; done; echo tick-2; while [ ! -f go3 ]; do sleep 0.05; done; echo tick-3"]
    }
  }
}
`

// TestTmuxLogPaneFollows: the run view's log pane shows the selected
// step's output while the step runs, line by line, as another process's
// program writes it.
func TestTmuxLogPaneFollows(t *testing.T) {
	e, flowtui, _, _ := newE2E(t, "flowtui-log")
	if err := os.WriteFile(filepath.Join(e.dir, "slow.hcl"), []byte(slowHCL), 0o600); err != nil {
		t.Fatal(err)
	}
	apply := exec.Command(e.flowrun, "apply", "slow.hcl")
	apply.Dir, apply.Env = e.dir, append(os.Environ(), "NO_COLOR=1")
	if err := apply.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- apply.Wait() }()
	t.Cleanup(func() {
		_ = apply.Process.Kill()
		<-done
	})
	// Wait for the run to be running.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var list []struct {
			Workflow string `json:"workflow"`
			Status   string `json:"status"`
		}
		_ = json.Unmarshal([]byte(e.flowrunCmd("runs", "--json")), &list)
		running := false
		for _, r := range list {
			running = running || r.Workflow == "slow" && r.Status == "running"
		}
		if running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow run never ran")
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.start(flowtui, 100, 30)
	e.waitFor("3 of 3 runs")
	e.key(":", "run REF")
	e.typeText("run slow@last")
	s := e.key("Enter", "LOG step talk", "tick-1")
	if strings.Contains(s, "tick-2") {
		t.Fatalf("tick-2 shown before it was written:\n%s", s)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "go2"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s = e.waitFor("tick-1", "tick-2", "▶ talk")
	if strings.Contains(s, "tick-3") {
		t.Fatalf("tick-3 shown before it was written:\n%s", s)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "go3"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.waitFor("tick-3", "✓ completed")
}
