package lang

import (
	"testing"

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
