package lang

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestStringLiteralOnePart: a quoted string's text is read without walking
// it for interpolation and without allocating; strings of several parts and
// interpolations take the walk.
func TestStringLiteralOnePart(t *testing.T) {
	for src, want := range map[string]string{
		`"abc {{ x }}"`:            "abc {{ x }}",
		`""`:                       "",
		"<<EOT\na\n  b\nEOT\n":     "a\n  b\n",
		`"a\nb"`:                   "a\nb",
		`"${x}"`:                   "!",
		`"a ${x} b"`:               "!",
		`"a %{ if x }b%{ endif }"`: "!",
	} {
		e, diags := hclsyntax.ParseExpression([]byte(src), "f.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(src, diags)
		}
		got, ok, diags := stringLiteral(e)
		if want == "!" {
			if !diags.HasErrors() || diags[0].Summary != "Unsupported interpolation" {
				t.Errorf("%s: %q %v %v, want the interpolation reported", src, got, ok, diags)
			}
			continue
		}
		if got != want || !ok || diags.HasErrors() {
			t.Errorf("%s: %q %v %v, want %q", src, got, ok, diags, want)
		}
	}
	e, _ := hclsyntax.ParseExpression([]byte(`"{{ steps.s41.output.v + 1 }}"`), "f.hcl", hcl.InitialPos)
	if n := testing.AllocsPerRun(100, func() { stringLiteral(e) }); n != 0 {
		t.Errorf("reading a quoted string allocates %v times, want 0", n)
	}
}
