package lang

import (
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Decoding a file cuts the step blocks from its syntax tree, so that each
// step's syntax can be collected once the step is decoded rather than when
// the whole file is.
func TestDecodeFileReleasesStepSyntax(t *testing.T) {
	file, diags := parseConfig(testsrc.Chain(200), "big.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	wf := file.Body.(*hclsyntax.Body).Blocks[0]
	steps := func() (n int) {
		for _, b := range wf.Body.Blocks {
			if b.Type == "step" {
				n++
			}
		}
		return n
	}
	if n := steps(); n != 200 {
		t.Fatalf("parsed %d step blocks", n)
	}
	decls, diags := decodeFile(file)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if len(decls) != 1 || len(decls[0].Steps) != 200 {
		t.Fatalf("decoded %d workflows", len(decls))
	}
	if n := steps(); n != 0 {
		t.Errorf("the syntax tree still holds %d step blocks after decoding", n)
	}
}

// Compiling a workflow drops each step's declaration (its parsed
// expressions) once the step is built, keeping its name and ranges; the
// graph is the one compiled from a fresh decode.
func TestCompileReleasesStepDecls(t *testing.T) {
	src := testsrc.Chain(200)
	want, diags := LoadFile("big.hcl", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	file, diags := parseConfig(src, "big.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	decls, diags := decodeFile(file)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	w := decls[0]
	g, diags := compileWorkflowWith(w, nil, &childResolver{module: map[string]*graph.Graph{}, declared: map[string]bool{}})
	if diags.HasErrors() || g == nil {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(g, want.Workflows[0].Graph) {
		t.Error("the graph differs from LoadFile's")
	}
	for _, s := range w.Steps {
		if s.Name == "" || s.Action != nil || s.When != nil {
			t.Fatalf("step %q keeps its declaration after compiling: action %v, when %v", s.Name, s.Action, s.When)
		}
	}
}

// A long file parsed in pieces has its step blocks decoded as each piece
// is parsed, their bodies emptied: the whole syntax tree is never held.
// Decoding the file with those steps gives what decoding the whole tree
// gives (TestParallelDecodeSameGraph compares the graphs, diagnostics and
// source maps).
func TestParseDecodingEmptiesStepBodies(t *testing.T) {
	saved := parallelParseMin
	defer func() { parallelParseMin = saved }()
	parallelParseMin = 0
	src := testsrc.Chain(600)
	file, pre, diags := parseConfigDecoding(src, "big.hcl", true)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if pre == nil || len(pre.byStart) != 600 {
		t.Fatalf("predecoded steps: %v", pre)
	}
	wf := file.Body.(*hclsyntax.Body).Blocks[0]
	for _, b := range wf.Body.Blocks {
		if b.Type == "step" && (len(b.Body.Attributes) > 0 || len(b.Body.Blocks) > 0) {
			t.Fatalf("step %s keeps its body after the parse", b.Labels[0])
		}
	}
	decls, diags := decodeFileWith(file, pre)
	if diags.HasErrors() || len(decls) != 1 || len(decls[0].Steps) != 600 {
		t.Fatalf("decoded %d workflows: %v", len(decls), diags)
	}
	if a := decls[0].Steps[599].Action; a == nil || a.Kind != "set" || len(a.Values) != 2 {
		t.Errorf("the last step's action: %+v", a)
	}
	if got := decls[0].Sources.Attr("step.s599.set.label"); got.Start.Line == 0 {
		t.Error("no range for step.s599.set.label")
	}
}
