package expr_test

import (
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/hashicorp/hcl/v2"
)

// A CEL expression of a workflow file nests literals and comprehensions
// at most MaxCELNesting levels; an expression read back from a stored
// graph (ParseExpr) is not held to it.
func TestCELNesting(t *testing.T) {
	wrap := func(e string) string {
		return "workflow \"w\" {\n  version = \"1.0.0\"\n  step \"a\" {\n    set { x = \"{{ " + e + " }}\" }\n  }\n}\n"
	}
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, c := range []struct {
		name string
		expr string
		over bool
	}{
		{"lists at the limit", nest("[", "]", expr.MaxCELNesting), false},
		{"lists past it", nest("[", "]", expr.MaxCELNesting+1), true},
		{"maps past it", nest("{1: ", "}", expr.MaxCELNesting+1), true},
		{"comprehensions past it", strings.Repeat("[1].map(x, ", expr.MaxCELNesting+1) + "x" + strings.Repeat(")", expr.MaxCELNesting+1), true},
		{"mixed past it", strings.Repeat("[{1: ", (expr.MaxCELNesting+2)/2) + "1" + strings.Repeat("}]", (expr.MaxCELNesting+2)/2), true},
		{"parentheses do not count", nest("(", ")", 200), false},
		{"calls do not count", nest("string(", ")", 200), false},
	} {
		_, diags := lang.LoadFile("w.hcl", []byte(wrap(c.expr)))
		got := diags.HasErrors() && diags[0].Summary == "Expression nests too deep"
		if got != c.over {
			t.Errorf("%s: too deep = %v, want %v (%v)", c.name, got, c.over, diags)
		}
	}
	if _, d := expr.ParseExpr(nest("[", "]", expr.MaxCELNesting+1), hcl.Range{}); d.HasErrors() {
		t.Errorf("ParseExpr of a stored expression: %v", d)
	}
}
