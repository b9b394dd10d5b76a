package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLoadCollectsAfterDecode: a command loading a long workflow file asks
// lang to collect garbage between decoding and compiling it
// (lang.LoadOptions.CollectAfterDecode), which keeps its peak memory to
// what the compile holds.
func TestLoadCollectsAfterDecode(t *testing.T) {
	var b strings.Builder
	b.WriteString("workflow \"w\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < 2000; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n  }\n", i, i-1)
	}
	b.WriteString("}\n")
	file := filepath.Join(t.TempDir(), "w.hcl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	e := &env{verb: "validate", stdout: &out, stderr: &errs, getenv: func(string) string { return "" }}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	mod, err := e.loadFilesOnly(context.Background(), []string{file})
	runtime.ReadMemStats(&after)
	if err != nil || len(mod.Workflows) != 1 {
		t.Fatalf("load: %v\n%s", err, errs.String())
	}
	if n := after.NumForcedGC - before.NumForcedGC; n != 1 {
		t.Errorf("loading a long file forced %d collections, want 1", n)
	}
}
