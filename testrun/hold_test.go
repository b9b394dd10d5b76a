package testrun

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/hashicorp/hcl/v2"
)

// napper sleeps three hours and says which version it ran on.
func napper(version, says string) string {
	return `workflow "nap" {
  version = "` + version + `"
  step "a" {
    sleep { duration = "3h" }
  }
  step "b" {
    depends_on = [step.a]
    set { v = "` + says + `" }
  }
  output "v" { value = "{{ steps.b.output.v }}" }
}
`
}

// TestHeldSleepStopsForTheUpgrade: a run that only its sleep moves on
// waits for it inside the engine (interp Options.HoldTimer), but not past
// an upgrade due during the sleep: the upgrade at 1h still finds the run
// sleeping, blocks it on the MAJOR, and choose = "new" makes the new
// version's run the one expected. Were the sleep held to its end, the run
// would complete on 1.0.0 before the upgrade, saying "one".
func TestHeldSleepStopsForTheUpgrade(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.hcl"), []byte(napper("1.0.0", "one")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "up"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "up", "v2.hcl"), []byte(napper("2.0.0", "two")), 0o644); err != nil {
		t.Fatal(err)
	}
	mod, diags := lang.LoadPaths([]string{dir})
	if diags.HasErrors() {
		t.Fatalf("workflow: %s", diags.Error())
	}
	name := filepath.Join(dir, "w.test.hcl")
	f, diags := testfile.Parse(name, []byte(`test "upgrade during the sleep" {
  upgrade {
    file   = "up/v2.hcl"
    after  = "1h"
    choose = "new"
  }
  expect {
    status  = "completed"
    outputs = { v = "two" }
  }
}`))
	if !diags.HasErrors() {
		diags = append(diags, testfile.Check(f, mod, dir, nil, map[string]*hcl.File{})...)
	}
	if diags.HasErrors() {
		t.Fatalf("test file: %s", diags.Error())
	}
	var gs []*graph.Graph
	for _, w := range mod.Workflows {
		gs = append(gs, w.Graph)
	}
	for _, crash := range []bool{false, true} {
		res := Run(context.Background(), f.Tests[0], Options{Workflows: gs, WorkDir: dir, Crash: crash})
		if !res.Pass {
			t.Fatalf("crash=%v: %+v", crash, res.Failures)
		}
	}
}
