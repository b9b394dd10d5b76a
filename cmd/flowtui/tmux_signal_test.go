package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const typedHCL = `
workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "approval"
      type   = object({ approved = bool })
    }
  }
}
`

// TestTmuxSignalRefusesWrongType: the signal dialog opens with a payload of
// the type the wait declares, parses the payload as it is typed, says that data of another type than the wait declares is
// refused and does not send it on enter; a payload of the type is
// confirmed as parsed and sent.
func TestTmuxSignalRefusesWrongType(t *testing.T) {
	e, flowtui, _, _ := newE2E(t, "flowtui-signal")
	if err := os.WriteFile(filepath.Join(e.dir, "typed.hcl"), []byte(typedHCL), 0o600); err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`[0-9A-Z]{26}`).FindString(e.flowrunExit(3, "apply", "typed.hcl"))
	if id == "" {
		t.Fatal("no run id from apply")
	}
	e.start(flowtui, 100, 30)
	e.waitFor("3 of 3 runs")
	e.key(":", "run REF")
	e.typeText("run typed@last")
	e.key("Enter", "run "+id, "◷ ask")
	// The dialog opens with a payload of the wait's type, ready to send;
	// clear it to type another.
	e.key("s", "Send a signal to run "+id, "tab to signal name", `✓ valid JSON: {"approved":true}`)
	for range len(`{"approved":true}`) {
		e.tmux("send-keys", "-t", e.session, "BSpace")
	}
	e.waitFor("empty: {} is sent")
	e.typeText(`{"approved": "yes"`)
	e.waitFor("not valid JSON yet")
	e.typeText(`}`)
	e.waitFor("Step ask takes data of type", "object({approved = bool})")
	s := e.key("Enter", "Step ask takes data of type")
	if strings.Contains(s, "Send signal approval?") {
		t.Fatalf("a payload of the wrong type went to the confirm:\n%s", s)
	}
	if st := e.status(id); st != "waiting" {
		t.Fatalf("run %s is %s after a refused signal", id, st)
	}
	for range len(`"yes"}`) {
		e.tmux("send-keys", "-t", e.session, "BSpace")
	}
	e.typeText(`true}`)
	e.waitFor(`✓ valid JSON: {"approved":true}`)
	e.key("Enter", "Send signal approval?", `"approved": true`)
	e.key("y", "Signal approval sent to run "+id)
}
