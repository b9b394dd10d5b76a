package lang

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/flowrun/flowrun/lang/internal/testsrc"
)

// TestCollectAfterDecode: with CollectAfterDecode, loading a large file
// collects garbage once, between decoding and compiling; not without the
// option, and not for a small file.
func TestCollectAfterDecode(t *testing.T) {
	dir := t.TempDir()
	big, small := filepath.Join(dir, "big.hcl"), filepath.Join(dir, "small.hcl")
	if err := os.WriteFile(big, testsrc.Chain(2000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, testsrc.Chain(3), 0o600); err != nil {
		t.Fatal(err)
	}
	forced := func(path string, collect bool) uint32 {
		t.Helper()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, diags := LoadPathsWith([]string{path}, LoadOptions{CollectAfterDecode: collect})
		runtime.ReadMemStats(&after)
		if diags.HasErrors() || len(m.Workflows) != 1 || m.Workflows[0].Graph == nil {
			t.Fatalf("%s: %v", path, diags)
		}
		return after.NumForcedGC - before.NumForcedGC
	}
	if n := forced(big, true); n != 1 {
		t.Errorf("a large file with CollectAfterDecode: %d forced collections, want 1", n)
	}
	if n := forced(big, false); n != 0 {
		t.Errorf("a large file without CollectAfterDecode: %d forced collections, want 0", n)
	}
	if n := forced(small, true); n != 0 {
		t.Errorf("a small file with CollectAfterDecode: %d forced collections, want 0", n)
	}
}
