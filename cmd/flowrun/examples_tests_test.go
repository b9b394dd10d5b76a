package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExampleHasTests: each workflow file of examples/ has a test
// file beside it (NAME.test.hcl), which testdata/examples/test_crash.txtar
// runs with --crash.
func TestEveryExampleHasTests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".test.hcl") {
			continue
		}
		n++
		test := strings.TrimSuffix(f, ".hcl") + ".test.hcl"
		if _, err := os.Stat(test); err != nil {
			t.Errorf("%s has no test file: write %s", f, test)
		}
	}
	if n < 5 {
		t.Fatalf("found %d example workflows; the glob is wrong", n)
	}
}
