package expr_test

import (
	"slices"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
)

// TestOutputReads: Load finds the steps the outputs read once, through a
// scan of their text or, where the scan cannot follow it ((steps).b),
// through the compiled expression; a step no output reads is not among
// them.
func TestOutputReads(t *testing.T) {
	m, diags := lang.LoadFile("o.hcl", []byte(`workflow "o" {
  version = "1.0.0"
  step "a" {
    set { n = 1 }
  }
  step "b" {
    set { n = 2 }
  }
  step "c" {
    set { n = 3 }
  }
  output "x" { value = "{{ steps.a.output.n }}" }
  output "y" { value = ["{{ (steps).b.output.n }}"] }
}
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p, err := expr.Load(m.Workflows[0].Graph)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(p.OutputReads()))
	if got = slices.Compact(got); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("OutputReads() = %v; want [a b]", got)
	}
}
