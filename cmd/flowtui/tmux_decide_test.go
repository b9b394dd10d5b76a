package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTmuxDecideParkedRun: a run parked on 1.0.0 stays waiting when an
// apply of another key stores 2.0.0, a new MAJOR; flowtui offers it
// old/new/migrate with the diff (as interp.Engine.OfferDecision says),
// and a confirmed migrate moves it to 2.0.0.
func TestTmuxDecideParkedRun(t *testing.T) {
	e, flowtui, _, _ := newE2E(t, "flowtui-decide")
	for name, text := range map[string]string{"ship1": shipV1, "ship2": shipV2} {
		if err := os.MkdirAll(filepath.Join(e.dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.dir, name, "ship.hcl"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := e.flowrunExit(3, "apply", "ship1/ship.hcl", "--input", "order=C-3")
	m := regexp.MustCompile(`[0-9A-Z]{26}`).FindString(out)
	if m == "" {
		t.Fatalf("no run id in:\n%s", out)
	}
	e.flowrunExit(3, "apply", "ship2/ship.hcl", "--input", "order=D-4")
	if s := e.status(m); s != "waiting" {
		t.Fatalf("run %s is %s after the other key's apply, want waiting", m, s)
	}
	e.start(flowtui, 100, 30)
	e.waitFor("4 of 4 runs")
	e.key(":", "run REF")
	e.typeText("run ship/C-3")
	e.key("Enter", "run "+m, "◷ waiting")
	e.key("d", "is waiting and can be decided now", "Changes from 1.0.0 to 2.0.0 (MAJOR)", "m migrate")
	e.key("m", `Decide "migrate" for run `+m+"?")
	e.key("y", "Run "+m+": decided migrate.", "version 2.0.0 (bound)")
	if s := e.status(m); s == "waiting" || s == "blocked" {
		t.Fatalf("run %s is %s after the migrate decision", m, s)
	}
	if v := e.flowrunCmd("show", m); !strings.Contains(v, "2.0.0") {
		t.Fatalf("show after migrate:\n%s", v)
	}
}
