package expr

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

func ctTemplate(t testing.TB, src string, sc *Scope) (*graph.Template, *graph.Type, hcl.Diagnostics) {
	t.Helper()
	p, diags := ParseTemplate(src, hcl.Range{Filename: "t.hcl", Start: hcl.InitialPos, End: hcl.Pos{Line: 1, Column: len(src) + 3, Byte: len(src) + 2}})
	if diags.HasErrors() {
		return nil, nil, diags
	}
	return CheckTemplate(p, sc)
}

func TestTemplateTypes(t *testing.T) {
	t.Parallel()
	sc := StepScope(ctGraph(), ctStep(graph.KindExec, "fan"), SlotData)
	tests := []struct {
		src   string
		want  *graph.Type
		parts int
	}{
		{"{{ input.tags }}", graph.ListOf(graph.TypeString), 1},
		{"{{input.amount * 1.2}}", graph.TypeNumber, 1},
		{"{{ steps.build.output }}", ctExecOutput, 1},
		{"order {{ input.order_id }}", graph.TypeString, 2},
		{" {{ input.amount }}", graph.TypeString, 2},
		{"{{ input.amount }} and {{ input.express }}!", graph.TypeString, 4},
		{"{{ {'a': {'b': 1}} }}", graph.MapOf(graph.MapOf(graph.TypeInt)), 1},
		{"{{ '}}' }}", graph.TypeString, 1},
		{`{{ "{{" }} literal`, graph.TypeString, 2},
		{"a }} b", graph.TypeString, 1},
		{"{{ secrets.token }}", graph.TypeString, 1},
	}
	for _, tt := range tests {
		tm, typ, diags := ctTemplate(t, tt.src, sc)
		if diags.HasErrors() {
			t.Errorf("%q: %s", tt.src, diags)
			continue
		}
		if !typ.Equal(tt.want) {
			t.Errorf("%q: type %s, want %s", tt.src, typ, tt.want)
		}
		if len(tm.Parts) != tt.parts {
			t.Errorf("%q: %d parts, want %d", tt.src, len(tm.Parts), tt.parts)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	t.Parallel()
	sc := StepScope(ctGraph(), ctStep(graph.KindExec), SlotData)
	tests := []struct {
		src, summary string
		col          int // start column of the error; the string's quote is column 1
	}{
		{"abc {{ input.order_id", "Unclosed template expression", 6},
		{"abc {{ '}} ", "Unclosed template expression", 6},
		{"x {{  }}", "Empty template expression", 4},
		{"x {{ input.ordr }}", "Unknown input", 13},
		{"x {{ input.amount + }}", "Invalid expression", 21},
	}
	for _, tt := range tests {
		_, _, diags := ctTemplate(t, tt.src, sc)
		if !diags.HasErrors() {
			t.Errorf("%q: no error", tt.src)
			continue
		}
		if diags[0].Summary != tt.summary {
			t.Errorf("%q: summary %q (%s), want %q", tt.src, diags[0].Summary, diags[0].Detail, tt.summary)
		}
		if diags[0].Subject.Start.Column != tt.col {
			t.Errorf("%q: column %d, want %d", tt.src, diags[0].Subject.Start.Column, tt.col)
		}
	}
}

func TestTemplateRefs(t *testing.T) {
	t.Parallel()
	p, diags := ParseTemplate("{{ secrets.b }} {{ steps.y.output }} {{ secrets.a + steps.x.status + secrets.b }}", hcl.Range{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := strings.Join(p.SecretRefs(), ","); got != "a,b" {
		t.Errorf("SecretRefs = %s", got)
	}
	if got := strings.Join(p.StepRefs(), ","); got != "x,y" {
		t.Errorf("StepRefs = %s", got)
	}
	if !p.IsTemplate() {
		t.Error("IsTemplate = false")
	}
	plain, _ := ParseTemplate("no braces } here", hcl.Range{})
	if plain.IsTemplate() {
		t.Error("plain text IsTemplate = true")
	}
}

func TestTemplateText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"s", "s"},
		{true, "true"},
		{int64(42), "42"},
		{3.0, "3"},
		{1.5, "1.5"},
		{1e21, "1e+21"},
		{[]any{1.0, "a", nil}, `[1,"a",null]`},
		{map[string]any{"b": 2.0, "a": true}, `{"a":true,"b":2}`},
	}
	for _, tt := range tests {
		got, err := TemplateText(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("TemplateText(%v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestStepRefsOne: a template of one expression selecting one step, the
// common case, lists it with one allocation (no set, no sort); others
// list their steps sorted without duplicates.
func TestStepRefsOne(t *testing.T) {
	rng := hcl.Range{Filename: "f.hcl"}
	for src, want := range map[string][]string{
		"{{ steps.a.output.x + steps.a.output.y }}":           {"a"},
		"{{ steps.b.output.x + steps.a.output.y }}":           {"a", "b"},
		"{{ steps.b.output }} and {{ steps.a.output }}":       {"a", "b"},
		"{{ steps.a.output.x + steps.b.output.x + steps.a }}": {"a", "b"},
		"{{ input.x }}": nil,
	} {
		for _, shed := range []bool{false, true} {
			p, d := parseTemplate(src, rng, shed)
			if d.HasErrors() {
				t.Fatal(d)
			}
			if got := p.StepRefs(); !reflect.DeepEqual(got, want) {
				t.Errorf("%q (shed %v): StepRefs %v, want %v", src, shed, got, want)
			}
		}
	}
	p, _ := ParseTemplateShed("{{ steps.s41.output.v + 1 }}", rng)
	if n := testing.AllocsPerRun(100, func() { p.StepRefs() }); n > 1 {
		t.Errorf("StepRefs of one step allocates %v times, want 1", n)
	}
}
