package lang

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDirectorySkipsTestFiles: loading a directory reads its workflow
// files and skips *.test.hcl (spec/testing.md), whose test blocks are not
// workflow syntax; naming a test file on its own still reads it.
func TestDirectorySkipsTestFiles(t *testing.T) {
	dir := t.TempDir()
	wf := "workflow \"w\" {\n  version = \"1.0.0\"\n  step \"a\" {\n    set { v = 1 }\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "w.hcl"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	test := "test \"t\" {\n  expect { status = \"completed\" }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "w.test.hcl"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	mod, diags := LoadPaths([]string{dir})
	if diags.HasErrors() {
		t.Fatalf("loading the directory: %s", diags.Error())
	}
	if len(mod.Workflows) != 1 || mod.Workflows[0].Name != "w" {
		t.Fatalf("workflows = %v", mod.Workflows)
	}
	if _, diags := LoadPaths([]string{filepath.Join(dir, "w.test.hcl")}); !diags.HasErrors() {
		t.Fatal("a test file named on its own loaded as a workflow file")
	}
}
