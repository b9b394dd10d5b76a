package lang

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestModuleKeepsNoSyntaxTree: once a file is decoded, the Module holds its
// bytes and an outline of its blocks, not its syntax tree (which would
// stay alive through compiling), and the outline names the block around
// every offset as the tree does.
func TestModuleKeepsNoSyntaxTree(t *testing.T) {
	src := []byte(`workflow "w" {
  version = "1.0.0"
  input "n" {
    type = number
  }
  step "a" {
    set { v = "{{ input.n + 1 }}" }
  }
  step "b" {
    retry {
      attempts = 2
    }
    exec {
      command = ["true"]
    }
  }
}
`)
	m, diags := LoadFile("w.hcl", src)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	f := m.Files["w.hcl"]
	if _, ok := f.Body.(*hclsyntax.Body); ok {
		t.Fatal("the Module holds the file's syntax tree after decoding it")
	}
	if string(f.Bytes) != string(src) {
		t.Fatal("the Module lost the file's bytes")
	}
	tree, pd := hclsyntax.ParseConfig(src, "w.hcl", hcl.Pos{Line: 1, Column: 1})
	if pd.HasErrors() {
		t.Fatal(pd.Error())
	}
	named := 0
	for off := 0; off <= len(src); off++ {
		want, got := blockContext(tree, off), blockContext(f, off)
		if got != want {
			t.Fatalf("offset %d: outline says %q, the syntax tree %q", off, got, want)
		}
		if got == `step "b"` {
			named++
		}
	}
	if named == 0 {
		t.Fatal(`no offset is inside step "b"`)
	}
}
