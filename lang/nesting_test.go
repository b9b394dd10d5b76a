package lang

import (
	"strings"
	"testing"
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
