package lang

import (
	"strings"
	"testing"
)

// Files given by their contents compile together: a parent finds its child
// in another source, and a name declared twice is reported in the second.
func TestLoadSources(t *testing.T) {
	child := `workflow "restock" {
  version = "1.0.0"
  input "sku" { type = string }
  output "count" { value = 3 }
  step "a" {}
}
`
	parent := `workflow "order" {
  version = "1.0.0"
  step "restock" {
    workflow {
      name    = "restock"
      version = "1"
      input   = { sku = "x" }
    }
  }
  step "after" {
    when = "steps.restock.output.count > 2"
  }
}
`
	mod, diags := LoadSources([]Source{{Name: "child.hcl", Src: []byte(child)}, {Name: "parent.hcl", Src: []byte(parent)}}, LoadOptions{})
	if diags.HasErrors() {
		t.Fatalf("together: %v", diags)
	}
	if w := mod.Workflow("order"); w == nil || w.File != "parent.hcl" || w.Graph == nil {
		t.Fatalf("parent: %+v", w)
	}
	// Alone, the parent's child is unchecked (no Stored): its output is any.
	if _, diags := LoadSources([]Source{{Name: "parent.hcl", Src: []byte(parent)}}, LoadOptions{}); diags.HasErrors() {
		t.Fatalf("alone: %v", diags)
	}
	_, diags = LoadSources([]Source{{Name: "a.hcl", Src: []byte(child)}, {Name: "b.hcl", Src: []byte(child)}}, LoadOptions{})
	if !diags.HasErrors() || diags[0].Subject == nil || diags[0].Subject.Filename != "b.hcl" || !strings.Contains(diags[0].Summary, "Duplicate") {
		t.Fatalf("a name declared twice: %v", diags)
	}
	_, diags = LoadSources([]Source{{Name: "big.hcl", Src: []byte(child)}}, LoadOptions{MaxFileSize: 10})
	if !diags.HasErrors() || diags[0].Summary != "File too large" {
		t.Fatalf("over the limit: %v", diags)
	}
}
