package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestNestingOverflow(t *testing.T) {
	deep := func(open, inner, close string, n int) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	wrap := func(v string) string {
		return "workflow \"w\" {\n  step \"a\" {\n    set { x = " + v + " }\n  }\n}\n"
	}
	// Three levels of blocks wrap the value: the workflow, the step, set.
	const blocks = 3
	cases := []struct {
		name string
		src  string
		over bool
	}{
		{"list at the limit", wrap(deep("[", "1", "]", MaxNesting-blocks)), false},
		{"list past the limit", wrap(deep("[", "1", "]", MaxNesting-blocks+1)), true},
		{"objects", wrap(deep("{ a = ", "1", " }", MaxNesting)), true},
		{"parentheses", wrap(deep("(", "1", ")", MaxNesting)), true},
		{"brackets in a string", wrap(`"` + deep("[", "", "", 5000) + `"`), false},
		{"escaped quote in a string", wrap(`"a\"[[[[" `) + deep("[", "", "]", 10), false},
		{"brackets in a heredoc", "x = <<EOT\n" + deep("[", "", "", 5000) + "\nEOT\ny = 1\n", false},
		{"brackets after a heredoc", "x = <<-EOT\n  text\n  EOT\ny = " + deep("[", "1", "]", MaxNesting+1) + "\n", true},
		{"brackets in comments", "# " + deep("[", "", "", 5000) + "\n// " + deep("{", "", "", 5000) + "\n/* " + deep("(", "", "", 5000) + " */\n", false},
		{"a sequence in a string", wrap(deep(`"${`, "1", `}"`, MaxNesting)), true},
		{"an escaped sequence", wrap(`"` + strings.Repeat("$${", 5000) + `"`), false},
		{"unary minus chain", wrap(strings.Repeat("-", MaxNesting) + "1"), true},
		{"bang chain across lines", wrap("[" + strings.Repeat("!\n", MaxNesting) + "true]"), true},
		{"conditional chain", wrap(strings.Repeat("true ? 1 : ", MaxNesting) + "2"), true},
		{"many negative numbers", wrap("[" + strings.Repeat("-1, ", 5000) + "-1]"), false},
		{"many negative attributes", "a {\n" + strings.Repeat("  x = -1\n", 5000) + "}\n", false},
		{"hyphenated names", wrap("{ " + strings.Repeat("X-Api-Key-", 1000) + "x = 1 }"), false},
	}
	for _, c := range cases {
		off := nestingOverflow([]byte(c.src), MaxNesting)
		if (off >= 0) != c.over {
			t.Errorf("%s: overflow at %d, want overflow %v", c.name, off, c.over)
		}
	}
}

// A file nested past the limit is one diagnostic at the first byte past
// it, without reaching hclsyntax (whose recursion would crash the process
// at tens of thousands of levels).
func TestLoadNestingTooDeep(t *testing.T) {
	src := "workflow \"w\" {\n  version = \"1.0.0\"\n  step \"a\" {\n    set { x = " +
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + " }\n  }\n}\n"
	_, diags := LoadFile("deep.hcl", []byte(src))
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics, want 1: %v", len(diags), diags)
	}
	d := diags[0]
	if d.Summary != "Nesting too deep" || d.Subject == nil {
		t.Fatalf("got %v", d)
	}
	// Line 4 opens three blocks before the value: the 998th "[" is the
	// 1,001st level.
	col := len("    set { x = ") + MaxNesting - 3 + 1
	if d.Subject.Start.Line != 4 || d.Subject.Start.Column != col {
		t.Errorf("at %d:%d, want 4:%d", d.Subject.Start.Line, d.Subject.Start.Column, col)
	}
	if _, fd := Format("deep.hcl", []byte(src)); len(fd) != 1 || fd[0].Summary != "Nesting too deep" {
		t.Errorf("Format: %v", fd)
	}
}

// lexDepth is the deepest nesting of hclsyntax's tokens in src: brackets,
// braces, parentheses, ${ and %{ sequences, quoted strings and heredocs.
func lexDepth(src []byte) int {
	toks, _ := hclsyntax.LexConfig(src, "fuzz.hcl", hcl.InitialPos)
	depth, most := 0, 0
	for _, tok := range toks {
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			depth++
			most = max(most, depth)
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenTemplateSeqEnd, hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			depth = max(depth-1, 0)
		}
	}
	return most
}

// FuzzNesting checks the pre-scan against hclsyntax's own lexer: on any
// file that parses, the scan never counts less nesting than the lexer's
// tokens show (so a file within MaxNesting never hides deeper recursion
// from it), and on any input at all it neither panics nor reads past the
// end.
func FuzzNesting(f *testing.F) {
	for _, pattern := range []string{"testdata/valid/*.hcl", "../examples/*.hcl"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			src, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	for _, s := range []string{
		"x = [[[1]]]\n", "x = \"${\"${\"a\"}\"}\"\n", "x = <<EOT\n${[1]}\nEOT\ny = {a = [(1)]}\n",
		"x = <<-EOT\n  %{ if true }[%{ endif }\n  EOT\n", "x = \"a\\\"[[\"\n", "/* [[ */ x = 1 # {{\n",
		"x = \"$${[[\" \n", "x = {\n  \"k\" = [1, {b = 2}]\n}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		off := nestingOverflow(src, 1<<30)
		if off != -1 {
			t.Fatalf("overflow at %d under an unreachable limit", off)
		}
		if _, diags := hclsyntax.ParseConfig(src, "fuzz.hcl", hcl.InitialPos); diags.HasErrors() {
			return
		}
		if d := lexDepth(src); d > 0 && nestingOverflow(src, d-1) < 0 {
			t.Fatalf("the lexer nests %d levels, the scan finds at most %d", d, d-1)
		}
	})
}

// What counts as an item (MaxItems): blocks and brackets opened, = and :,
// commas, and {{ in strings and heredocs; not text in comments or a
// string's other characters.
func TestItemsCounted(t *testing.T) {
	for _, c := range []struct {
		src   string
		items int
	}{
		{"a {\n  x = 1\n}\n", 2},
		{"x = [1, 2, 3]\n", 4},
		{"x = { a = 1, b : 2 }\n", 5},
		{"x = \"{{ a }} and {{ b }}, c = d\"\n", 3},
		{"x = <<EOT\n{{ a }} [ , = \nEOT\n", 2},
		{"# {{ a }} [ , =\n// [ ,\n/* = { */ x = 1\n", 1},
		{"x = \"[1, 2] {a}\"\n", 1},
		{"x = a + b * -c && d >= 2\n", 8},
		{"X-Api-Key = 1e-5\n", 1},
	} {
		for limit := 0; limit <= c.items; limit++ {
			off, tooMany := measure([]byte(c.src), MaxNesting, limit)
			if over := limit < c.items; (off >= 0) != over || tooMany != over {
				t.Errorf("%q under a limit of %d items: overflow at %d (too many: %v), want overflow %v", c.src, limit, off, tooMany, over)
			}
		}
	}
}
