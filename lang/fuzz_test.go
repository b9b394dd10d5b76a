package lang

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// FuzzLoadFile feeds arbitrary source to the loader. The invariants: no
// panic, every diagnostic's Subject and Context lie within the file (line,
// column and byte bounds agree with the source), and rendering the
// diagnostics works.
func FuzzLoadFile(f *testing.F) {
	for _, pattern := range []string{"testdata/valid/*.hcl", "testdata/invalid/*.hcl", "../examples/*.hcl"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			src, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, diags := LoadFile("fuzz.hcl", src)
		if m == nil {
			t.Fatal("nil module")
		}
		for _, d := range diags {
			for _, r := range []*hcl.Range{d.Subject, d.Context} {
				if r == nil {
					continue
				}
				if err := rangeWithin(src, *r); err != nil {
					t.Fatalf("diagnostic %q (%s): %v", d.Summary, d.Detail, err)
				}
			}
		}
		if err := WriteDiagnostics(io.Discard, m.Files, diags, true, 80); err != nil {
			t.Fatal(err)
		}
		for _, w := range m.Workflows {
			if w.Graph == nil {
				continue
			}
			if diags.HasErrors() && workflowHasError(w, diags) {
				t.Fatalf("workflow %q has a graph despite errors", w.Name)
			}
			if _, err := graph.Hash(w.Graph); err != nil {
				t.Fatalf("compiled graph does not hash: %v", err)
			}
		}
	})
}

func workflowHasError(w *Workflow, diags hcl.Diagnostics) bool {
	rng := w.Sources.Block("workflow")
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil && rng.ContainsOffset(d.Subject.Start.Byte) {
			return true
		}
	}
	return false
}

// rangeWithin checks that r lies inside src and that its line and column
// agree with its byte offset.
func rangeWithin(src []byte, r hcl.Range) error {
	if r.Filename != "fuzz.hcl" {
		return fmt.Errorf("range in file %q", r.Filename)
	}
	for _, p := range []hcl.Pos{r.Start, r.End} {
		if p.Byte < 0 || p.Byte > len(src) {
			return fmt.Errorf("byte %d outside the file (%d bytes)", p.Byte, len(src))
		}
		// The line must agree with the byte offset; the column must not
		// point past the offset's place in its line (HCL counts columns in
		// grapheme clusters, so it may be smaller than the byte count).
		line, lineStart := 1, 0
		for i := 0; i < p.Byte; i++ {
			if src[i] == '\n' {
				line++
				lineStart = i + 1
			}
		}
		if p.Line != line {
			return fmt.Errorf("position %+v: byte %d is on line %d", p, p.Byte, line)
		}
		if p.Column < 1 || p.Column > p.Byte-lineStart+1 {
			return fmt.Errorf("position %+v: byte %d is at most column %d", p, p.Byte, p.Byte-lineStart+1)
		}
	}
	if r.End.Byte < r.Start.Byte {
		return fmt.Errorf("range %v ends before it starts", r)
	}
	return nil
}
