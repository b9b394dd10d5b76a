package lang

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/hashicorp/hcl/v2"
)

// Tests of the wording and placement of diagnostics: what the user reads.

// dtLoad compiles src as the CLI does without a database and renders its
// diagnostics without colour or wrapping.
func dtLoad(t *testing.T, name, src string) (*Module, hcl.Diagnostics, string) {
	t.Helper()
	m, diags := LoadFileWith(name, []byte(src), LoadOptions{Stored: noStore})
	var b bytes.Buffer
	if err := WriteDiagnostics(&b, m.Files, diags, false, 0); err != nil {
		t.Fatal(err)
	}
	return m, diags, b.String()
}

// dtFind returns the first diagnostic with the summary, failing without.
func dtFind(t *testing.T, diags hcl.Diagnostics, summary string) *hcl.Diagnostic {
	t.Helper()
	for _, d := range diags {
		if d.Summary == summary {
			return d
		}
	}
	t.Fatalf("no %q diagnostic in:\n%s", summary, testsrc.Describe(diags))
	return nil
}

// TestUnknownStepSuggests: steps.NAME naming no step suggests the nearest
// step of the workflow (language.md §13), visible from the expression or
// not; the static step.NAME already did.
func TestUnknownStepSuggests(t *testing.T) {
	t.Parallel()
	src := `workflow "refs" {
  version = "1.0.0"
  step "charge" {
    set { x = 1 }
  }
  step "ship" {
    when = "steps.chrge.status == 'completed'"
    set { y = "{{ steps.chareg.output.x }}" }
  }
  step "pack" {
    when = "steps.nothing_like_it.status == 'completed'"
  }
  output "o" { value = "{{ steps.shp.output.y }}" }
}
`
	_, diags, out := dtLoad(t, "refs.hcl", src)
	want := []struct {
		line, col int
		detail    string
	}{
		{7, 19, `There is no step "chrge". Did you mean "charge"?`},
		{8, 25, `There is no step "chareg". Did you mean "charge"?`},
		{11, 19, `There is no step "nothing_like_it": the workflow's steps are "charge", "pack" and "ship". Check the name.`},
		{13, 34, `There is no step "shp". Did you mean "ship"?`},
	}
	var got []*hcl.Diagnostic
	for _, d := range diags {
		if d.Summary == "Unknown step" {
			got = append(got, d)
		}
	}
	if len(got) != len(want) || len(diags) != len(want) {
		t.Fatalf("want %d Unknown step errors, got:\n%s", len(want), testsrc.Describe(diags))
	}
	for i, w := range want {
		d := got[i]
		if d.Subject.Start.Line != w.line || d.Subject.Start.Column != w.col || d.Detail != w.detail {
			t.Errorf("diagnostic %d: %d:%d %q; want %d:%d %q", i, d.Subject.Start.Line, d.Subject.Start.Column, d.Detail, w.line, w.col, w.detail)
		}
	}
	if !strings.Contains(out, "  on refs.hcl:7:19, in step \"ship\":\n     7:     when = \"steps.chrge.status == 'completed'\"\n                          ^^^^^\n") {
		t.Errorf("rendered:\n%s", out)
	}
}

// TestCycleWithOtherErrors: a cycle is reported with the other mistakes,
// each once (the invalid corpus file cycle_hides_nothing.hcl checks the
// positions); here, that nothing is reported twice.
func TestCycleWithOtherErrors(t *testing.T) {
	t.Parallel()
	src := `workflow "cyc" {
  version = "1.0.0"
  step "a" {
    set {
      x    = "{{ steps.b.output.x }}"
      list = [1, 2]
    }
  }
  step "b" {
    until = "steps.c.output.x == steps.b.output.x"
    set { x = "{{ steps.a.output.x }}" }
  }
  step "c" {
    foreach { items = "steps.a.output.list" }
    set { x = "{{ steps.b.output.x + item }}" }
  }
  step "d" {
    when = "steps.chrge.status == 'completed'"
  }
}
`
	m, diags, _ := dtLoad(t, "cyc.hcl", src)
	var summaries []string
	for _, d := range diags {
		summaries = append(summaries, d.Summary)
	}
	if got := strings.Join(summaries, ", "); got != "Dependency cycle, Unknown step" {
		t.Errorf("got %s:\n%s", got, testsrc.Describe(diags))
	}
	if !strings.Contains(dtFind(t, diags, "Dependency cycle").Detail, `step "a" → step "b" → step "a"`) {
		t.Errorf("cycle:\n%s", testsrc.Describe(diags))
	}
	if m.Workflow("cyc").Graph != nil {
		t.Error("a workflow with a cycle has a graph")
	}
}

// TestBumpDiagnostic: a version refusal points at the version attribute.
func TestBumpDiagnostic(t *testing.T) {
	t.Parallel()
	v1 := "workflow \"ver\" {\n  version = \"1.0.0\"\n  step \"a\" {\n    set { x = 1 }\n  }\n}\n"
	v2 := "workflow \"ver\" {\n  # a new required input\n  version = \"1.0.1\"\n  input \"extra\" { type = string }\n  step \"a\" {\n    set { x = 1 }\n  }\n}\n"
	m1, _, _ := dtLoad(t, "v1.hcl", v1)
	m2, _, _ := dtLoad(t, "v2.hcl", v2)
	w := m2.Workflow("ver")
	if r := w.VersionRange(); r.Filename != "v2.hcl" || r.Start.Line != 3 || r.Start.Column != 13 || r.End.Column != 20 {
		t.Errorf("VersionRange = %s", r)
	}
	_, _, err := graph.CheckBump(m1.Workflow("ver").Graph, w.Graph)
	var be *graph.BumpError
	if !errors.As(err, &be) {
		t.Fatalf("CheckBump: %v", err)
	}
	var b bytes.Buffer
	if err := WriteDiagnostics(&b, m2.Files, hcl.Diagnostics{w.BumpDiagnostic(be)}, false, 0); err != nil {
		t.Fatal(err)
	}
	want := "Error: Version bump too small\n\n" +
		"  on v2.hcl:3:13, in workflow \"ver\":\n" +
		"     3:   version = \"1.0.1\"\n" +
		"                    ^^^^^^^\n\n" +
		"Workflow \"ver\" version 1.0.1 declares a PATCH change from the stored version 1.0.0, but the changes need MAJOR. The changes:\n" +
		"  input \"extra\" added without a default: MAJOR\n" +
		"Set version = \"2.0.0\" or later.\n\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	for reason, summary := range map[graph.BumpReason]string{graph.BumpLower: "Version lower than stored", graph.BumpSameVersion: "Version already stored"} {
		e := *be
		e.Reason = reason
		if d := w.BumpDiagnostic(&e); d.Summary != summary || d.Subject.Start.Line != 3 {
			t.Errorf("reason %d: %s at %s", reason, d.Summary, d.Subject)
		}
	}
}

// TestDiagnosticWording: messages read as sentences.
func TestDiagnosticWording(t *testing.T) {
	t.Parallel()
	src := `workflow "child" {
  version = "1.0.0"
  step "a" {}
}

workflow "cosmetic" {
  version = "1.0.0"
  stepp "a" {
    set { x = 1 }
  }
  step "b" {
    set {
      x = "${foo}"
      y = "{{ input.nope }}"
    }
  }
  step "c" {
    exec { command = ["echo", "{{ secrets.token }}"] }
  }
  step "d" {
    workflow {
      name    = "child"
      version = "1"
      input   = { x = 1 }
    }
  }
}
`
	_, diags, out := dtLoad(t, "cosmetic.hcl", src)
	if d := dtFind(t, diags, "Unsupported interpolation"); strings.Contains(d.Detail, "%%") || !strings.Contains(d.Detail, "HCL's ${ } or %{ } templates") {
		t.Errorf("interpolation: %s", d.Detail)
	}
	// The context of a diagnostic on a block's header is the block around
	// it, not the (misspelled) block itself.
	if !strings.Contains(out, "  on cosmetic.hcl:8:3, in workflow \"cosmetic\":\n     8:   stepp \"a\" {\n") {
		t.Errorf("unknown block:\n%s", out)
	}
	if strings.Contains(out, `in stepp`) {
		t.Errorf("context names the misspelled block:\n%s", out)
	}
	if d := dtFind(t, diags, "Unknown input"); d.Detail != `There is no input "nope": this workflow declares no inputs. Declare it with an input "nope" { type = ... } block, or remove the reference.` {
		t.Errorf("unknown input: %s", d.Detail)
	}
	if d := dtFind(t, diags, "Unknown secret"); !strings.Contains(d.Detail, `The workflow declares no secret "token". This workflow declares no secrets; add`) {
		t.Errorf("unknown secret: %s", d.Detail)
	}
	if d := dtFind(t, diags, "Unknown child input"); !strings.Contains(d.Detail, `declares no input "x"; it declares no inputs. Remove it`) {
		t.Errorf("unknown child input: %s", d.Detail)
	}
	if strings.Contains(out, "none") {
		t.Errorf("a list reads \"none\":\n%s", out)
	}
}

// TestSyntaxWording: the CEL syntax slips of people used to other
// languages say the fix, once per expression: an unclosed string was two
// errors (the stray quote, then "mismatched input '<EOF>' expecting {'[',
// '{', ...}"), and = for == was "token recognition error at: '= '".
func TestSyntaxWording(t *testing.T) {
	t.Parallel()
	src := `workflow "syn" {
  version = "1.0.0"
  input "a" { type = string }
  step "eq" {
    when = "input.a = 'x'"
  }
  step "quote" {
    when = "input.a == 'x"
  }
  step "word" {
    when = "input.a == 'x' and true"
  }
  step "dq" {
    when = "input.a == \"x"
  }
}
`
	_, diags, _ := dtLoad(t, "syn.hcl", src)
	want := map[int]string{
		5:  "A single = is not an operator in CEL: compare with ==, as in input.env == 'prod'.",
		8:  "The string that starts here is not closed: end it with '.",
		11: "The word and is not an operator in CEL: write and as &&, or as || and not as !, as in input.a > 1 && !input.b.",
		14: `The string that starts here is not closed: end it with ".`,
	}
	got := map[int][]string{}
	for _, d := range diags {
		got[d.Subject.Start.Line] = append(got[d.Subject.Start.Line], d.Detail)
	}
	for line, w := range want {
		if len(got[line]) != 1 || got[line][0] != w {
			t.Errorf("line %d: %q, want one error: %q", line, got[line], w)
		}
	}
	if d := dtFind(t, diags, "Invalid expression"); d.Subject.Start.Column != 21 {
		t.Errorf("= is marked at column %d, want 21", d.Subject.Start.Column)
	}
}

// TestUnknownChildSays: a child workflow pinned to a version nobody has
// names the versions there are and the pin that takes them; a child name
// with a typo names the nearest workflow. Both said only "No workflow
// "kid" with a version matching "2" is in the files given or in the
// database", though kid 1.2.0 was in the same file.
func TestUnknownChildSays(t *testing.T) {
	t.Parallel()
	src := `workflow "p" {
  version = "1.0.0"
  step "newer" {
    workflow {
      name    = "kid"
      version = "2"
    }
  }
  step "typo" {
    workflow {
      name    = "kidd"
      version = "1"
    }
  }
}
workflow "kid" {
  version = "1.2.0"
  step "s" {
    set { v = 1 }
  }
}
`
	_, diags, _ := dtLoad(t, "p.hcl", src)
	got := map[int]string{}
	for _, d := range diags {
		if d.Summary == "Unknown child workflow" {
			got[d.Subject.Start.Line] = d.Detail
		}
	}
	if want := `No version of workflow "kid" matches "2": the files given and the database hold "1.2.0". Pin one of those (version = "1" pins its MAJOR), or apply the version the pin names together with this file.`; got[5] != want {
		t.Errorf("pin of no version:\n got %q\nwant %q", got[5], want)
	}
	if !strings.Contains(got[11], `Did you mean "kid"?`) {
		t.Errorf("typo of the child's name: %q, want it to suggest kid", got[11])
	}
}

// TestDuplicateArticle: "An input named", not "A input named".
func TestDuplicateArticle(t *testing.T) {
	t.Parallel()
	src := `workflow "d" {
  version = "1.0.0"
  input "a" { type = string }
  input "a" { type = string }
  step "s" {
    set { v = 1 }
  }
  step "s" {
    set { v = 1 }
  }
  output "o" { value = "x" }
  output "o" { value = "y" }
}
`
	_, diags, _ := dtLoad(t, "d.hcl", src)
	for summary, want := range map[string]string{
		"Duplicate input":  `An input named "a" was already declared at d.hcl:3.`,
		"Duplicate step":   `A step named "s" was already declared at d.hcl:5.`,
		"Duplicate output": `An output named "o" was already declared at d.hcl:11.`,
	} {
		if d := dtFind(t, diags, summary); !strings.HasPrefix(d.Detail, want) {
			t.Errorf("%s: %q, want it to start %q", summary, d.Detail, want)
		}
	}
}
