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

// load writes a workflow and a test file to a directory and checks the
// test file as flowrun test does.
func load(t testing.TB, wf, tests string) (*testfile.File, []*graph.Graph, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.hcl"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	mod, diags := lang.LoadPaths([]string{dir})
	if diags.HasErrors() {
		t.Fatalf("workflow: %s", diags.Error())
	}
	name := filepath.Join(dir, "w.test.hcl")
	f, diags := testfile.Parse(name, []byte(tests))
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
	return f, gs, dir
}

func runAll(t testing.TB, f *testfile.File, gs []*graph.Graph, dir string, o Options) []Result {
	t.Helper()
	o.Workflows, o.WorkDir = gs, dir
	var out []Result
	for _, tt := range f.Tests {
		out = append(out, Run(context.Background(), tt, o))
	}
	return out
}

const sleepy = `
workflow "s" {
  version = "1.0.0"
  step "a" {
    set { v = 1 }
  }
  step "b" {
    depends_on = [step.a]
    sleep { duration = "1h" }
  }
  output "v" { value = "{{ steps.a.output.v }}" }
}`

func TestSleepPassesAtOnce(t *testing.T) {
	f, gs, dir := load(t, sleepy, `test "sleeps" {
  expect {
    status  = "completed"
    outputs = { v = 1 }
  }
}
test "wrong output" {
  expect {
    outputs = { v = 2 }
  }
}`)
	res := runAll(t, f, gs, dir, Options{})
	if !res[0].Pass {
		t.Fatalf("sleeps: %+v", res[0].Failures)
	}
	if res[1].Pass || len(res[1].Failures) != 1 || res[1].Failures[0].What != "outputs.v" || res[1].Failures[0].Actual != "1" {
		t.Fatalf("wrong output: %+v", res[1])
	}
}
