package expr_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
)

// compileText compiles src and returns every workflow's encoded graph and
// the diagnostics' text.
func compileText(t *testing.T, name string, src []byte) string {
	t.Helper()
	m, diags := lang.LoadFile(name, src)
	var out bytes.Buffer
	if m != nil {
		for _, w := range m.Workflows {
			if w.Graph == nil {
				continue
			}
			b, err := graph.Encode(w.Graph)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
	}
	for _, d := range diags {
		fmt.Fprintf(&out, "%s\n", d.Error())
		if d.Subject != nil {
			fmt.Fprintf(&out, "  at %s\n", d.Subject)
		}
	}
	return out.String()
}

// TestCheckCacheSameResult: compiling the examples, the valid and invalid
// test files and long chains with the check cache gives, byte for byte,
// the graphs and diagnostics that compiling without it gives.
func TestCheckCacheSameResult(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../examples/*.hcl", "../testdata/valid/*.hcl", "../testdata/invalid/*.hcl"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d files in the corpus", len(files))
	}
	type source struct {
		name string
		src  []byte
	}
	var srcs []source
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, source{f, src})
	}
	srcs = append(srcs, source{"chain.hcl", testsrc.TemplateChain(300)}, source{"big.hcl", testsrc.Chain(300)})
	// A chain whose steps' outputs alternate between two types, and one
	// whose template meets a step of another type half way.
	mixed := strings.ReplaceAll(string(testsrc.TemplateChain(40)), "step \"s20\" {\n    set { v = \"{{ steps.s19.output.v + 1 }}\" }", "step \"s20\" {\n    set { v = \"{{ string(steps.s19.output.v) }}\" }")
	srcs = append(srcs, source{"mixed.hcl", []byte(mixed)})
	for _, s := range srcs {
		expr.NoCheckCache.Store(true)
		want := compileText(t, s.name, s.src)
		expr.NoCheckCache.Store(false)
		got := compileText(t, s.name, s.src)
		if got != want {
			t.Errorf("%s: compiled with the check cache:\n%s\nwithout:\n%s", s.name, got, want)
		}
	}
}

// TestCheckCacheChain: the steps of a 100-step template chain read steps of
// one type through one expression shape, so the checker runs a handful of
// times, not once a step (as it does without the cache).
func TestCheckCacheChain(t *testing.T) {
	src := testsrc.TemplateChain(100)
	runs := func(off bool) int64 {
		expr.NoCheckCache.Store(off)
		defer expr.NoCheckCache.Store(false)
		before := expr.CheckRuns.Load()
		if _, diags := lang.LoadFile("chain.hcl", src); diags.HasErrors() {
			t.Fatal(diags)
		}
		return expr.CheckRuns.Load() - before
	}
	if n := runs(true); n < 99 {
		t.Fatalf("without the cache the checker ran %d times on a 100-step chain, want at least 99", n)
	}
	if n := runs(false); n > 5 {
		t.Fatalf("with the cache the checker ran %d times on a 100-step chain, want at most 5", n)
	}
}
