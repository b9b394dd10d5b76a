package lang

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

const childParent = `
workflow "parent" {
  version = "1.0.0"
  step "call" {
    workflow {
      name    = "kid"
      version = "1"
      input   = { n = 2 }
    }
  }
  step "use" {
    set { v = "{{ steps.call.output.extra + 1 }}" }
  }
}
`

func kidGraph(t *testing.T, version, outputs string) *graph.Graph {
	t.Helper()
	src := `workflow "kid" {
  version = "` + version + `"
  input "n" { type = number }
  step "s" {
    set { v = "{{ input.n }}" }
  }
  ` + outputs + `
}`
	m, diags := LoadFile("kid.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return m.Workflows[0].Graph
}

// TestChildFromStore types a workflow step by the newest stored version
// its pin matches: 1.3.0 (which has output extra), not 1.0.0, nor 2.0.0.
func TestChildFromStore(t *testing.T) {
	stored := []*graph.Graph{
		kidGraph(t, "1.0.0", `output "v" { value = "{{ steps.s.output.v }}" }`),
		kidGraph(t, "1.3.0", `output "extra" { value = 7 }`),
		kidGraph(t, "2.0.0", `output "other" { value = "x" }`),
	}
	var asked []string
	m, diags := LoadFileWith("parent.hcl", []byte(childParent), LoadOptions{Stored: func(name string) ([]*graph.Graph, error) {
		asked = append(asked, name)
		return stored, nil
	}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if strings.Join(asked, ",") != "kid" {
		t.Errorf("asked the store for %v, want kid once", asked)
	}
	call := m.Workflows[0].Graph.Steps[0]
	if got := call.OutputType.String(); got != "object({extra = number})" {
		t.Errorf("output type of the workflow step = %s, want the 1.3.0 outputs", got)
	}

	// Only 1.0.0 stored: output extra does not exist.
	_, diags = LoadFileWith("parent.hcl", []byte(childParent), LoadOptions{Stored: func(string) ([]*graph.Graph, error) {
		return stored[:1], nil
	}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Unknown field") {
		t.Errorf("with only 1.0.0 stored, diags = %v, want an unknown field", diags)
	}

	// A store that cannot be read is reported at the child's name.
	_, diags = LoadFileWith("parent.hcl", []byte(childParent), LoadOptions{Stored: func(string) ([]*graph.Graph, error) {
		return nil, errors.New("database is locked")
	}})
	if !diags.HasErrors() || diags[0].Summary != "Cannot read the child workflow" || !strings.Contains(diags[0].Detail, "database is locked") {
		t.Errorf("diags = %v", diags)
	}

	// Without a store the child is not checked: any output.
	m, diags = LoadFile("parent.hcl", []byte(childParent))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := m.Workflows[0].Graph.Steps[0].OutputType.Kind; got != graph.KindAny {
		t.Errorf("unchecked child output kind = %s, want any", got)
	}
}

// TestChildCompiledFirst: a child later in the files types its parent, and
// a recursive workflow (its own child) compiles with an untyped output.
func TestChildCompiledFirst(t *testing.T) {
	src := childParent + `
workflow "kid" {
  version = "1.1.0"
  input "n" { type = number }
  step "s" {
    set { v = "{{ input.n }}" }
  }
  output "extra" { value = "{{ steps.s.output.v }}" }
}
workflow "loop" {
  version = "1.0.0"
  input "n" { type = number }
  step "again" {
    when = "input.n > 0"
    workflow {
      name    = "loop"
      version = "1"
      input   = { n = "{{ input.n - 1 }}" }
    }
  }
}
`
	m, diags := LoadFileWith("all.hcl", []byte(src), LoadOptions{Stored: noStore})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if names := []string{m.Workflows[0].Name, m.Workflows[1].Name, m.Workflows[2].Name}; strings.Join(names, ",") != "parent,kid,loop" {
		t.Errorf("module order %v, want the file's", names)
	}
	if got := m.Workflow("parent").Graph.Steps[0].OutputType.String(); got != "object({extra = number})" {
		t.Errorf("parent's workflow step output = %s", got)
	}
	if got := m.Workflow("loop").Graph.Steps[0].OutputType.Kind; got != graph.KindAny {
		t.Errorf("recursive step output kind = %s, want any", got)
	}
}
