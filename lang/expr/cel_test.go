package expr

import (
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Helpers of the CEL tests are prefixed "ct" so they do not clash with
// other test files of the package.

var ctExecOutput = graph.ObjectOf(map[string]*graph.Type{
	"exit_code": graph.TypeInt, "stdout": graph.TypeString, "stderr": graph.TypeString, "json": graph.TypeAny,
})

// ctGraph is a partial graph as the compiler builds it: inputs, secrets and
// a few compiled steps.
func ctGraph() *graph.Graph {
	build := &graph.Step{Name: "build", Action: graph.Action{Kind: graph.KindExec}, OutputType: ctExecOutput}
	price := &graph.Step{Name: "price", Action: graph.Action{Kind: graph.KindSet}, Needs: []string{"build"},
		OutputType: graph.ObjectOf(map[string]*graph.Type{"total": graph.TypeNumber})}
	fan := &graph.Step{Name: "fan", Action: graph.Action{Kind: graph.KindExec}, Needs: []string{"price"},
		Foreach:    &graph.Foreach{Items: &graph.Expr{CEL: "input.tags", Type: graph.ListOf(graph.TypeString)}},
		OutputType: ctExecOutput}
	other := &graph.Step{Name: "other", Action: graph.Action{Kind: graph.KindSet}, OutputType: graph.ObjectOf(map[string]*graph.Type{"n": graph.TypeNumber})}
	return &graph.Graph{
		Workflow: "w", Version: "1.0.0",
		Inputs: []graph.Input{
			{Name: "amount", Type: graph.TypeNumber},
			{Name: "count", Type: graph.TypeNumber},
			{Name: "express", Type: graph.TypeBool},
			{Name: "order_id", Type: graph.TypeString},
			{Name: "tags", Type: graph.ListOf(graph.TypeString)},
		},
		Secrets: []graph.Secret{{Name: "token", Env: "TOKEN"}},
		Steps:   []*graph.Step{build, price, fan, other},
	}
}

// ctStep is a step under compilation that needs the given steps.
func ctStep(kind string, needs ...string) *graph.Step {
	return &graph.Step{Name: "self", Action: graph.Action{Kind: kind}, Needs: needs, OutputType: ctExecOutput}
}

// ctAttr parses an HCL body and returns attribute name's string value and
// the range of its expression, as the decoder passes them.
func ctAttr(t testing.TB, src, name string) (string, hcl.Range) {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(src), "test.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parsing HCL: %s", diags)
	}
	attrs, diags := f.Body.JustAttributes()
	if diags.HasErrors() {
		t.Fatalf("attributes: %s", diags)
	}
	a, ok := attrs[name]
	if !ok {
		t.Fatalf("no attribute %s", name)
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatalf("value of %s: %s", name, diags)
	}
	return v.AsString(), a.Expr.Range()
}

// ctCheck parses and checks src in a scope.
func ctCheck(src string, sc *Scope, want *graph.Type) (*graph.Expr, hcl.Diagnostics) {
	p, diags := ParseExpr(src, hcl.Range{Filename: "t.hcl", Start: hcl.InitialPos, End: hcl.Pos{Line: 1, Column: len(src) + 3, Byte: len(src) + 2}})
	if diags.HasErrors() {
		return nil, diags
	}
	return CheckExpr(p, sc, want)
}

func TestCheckExprErrors(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	when := StepScope(g, ctStep(graph.KindExec, "fan"), SlotWhen)
	data := StepScope(g, ctStep(graph.KindExec, "fan"), SlotData)
	tests := []struct {
		name, src string
		scope     *Scope
		want      *graph.Type
		summary   string
		detail    []string
	}{
		{"input typo", "input.ordr_id == 'x'", when, graph.TypeBool, "Unknown input", []string{`"ordr_id"`, `Did you mean "order_id"?`, `"amount"`}},
		{"string plus number", "input.order_id + 1 == 'x'", when, graph.TypeBool, "Type mismatch", []string{"+", "string and int"}},
		{"string equals number", "input.order_id == 1", when, graph.TypeBool, "Type mismatch", []string{"==", "string and int"}},
		{"unknown step", "steps.chrage.output.exit_code == 0", when, graph.TypeBool, "Unknown step", []string{`"chrage"`, `"build"`, `"fan"`, `"price"`}},
		{"step not an ancestor", "steps.other.output.n > 1", when, graph.TypeBool, "Unknown step", []string{`"other"`}},
		{"output field typo", "steps.price.output.totl > 1", when, graph.TypeBool, "Unknown field", []string{"steps.price.output", `"totl"`, `"total"`}},
		{"step result field typo", "steps.price.outptu.total > 1", when, graph.TypeBool, "Unknown field", []string{`"outptu"`, `"attempts"`}},
		{"wrong result type", "input.amount", when, graph.TypeBool, "Type mismatch", []string{"when", "bool", "number"}},
		{"items not a list", "input.amount", StepScope(g, ctStep(graph.KindExec), SlotItems), graph.ListOf(graph.TypeAny), "Type mismatch", []string{"items", "list(any)"}},
		{"steps in key", "steps.build.output.stdout", GraphScope(g, SlotKey), graph.TypeString, "Variable not visible here", []string{"steps are not visible in key"}},
		{"run in key", "run.id", GraphScope(g, SlotKey), graph.TypeString, "Variable not visible here", []string{"run is not visible in key"}},
		{"secrets in when", "secrets.token == ''", when, graph.TypeBool, "Variable not visible here", []string{"secrets are only visible in the data of exec and http actions"}},
		{"secrets in set data", "secrets.token", StepScope(g, ctStep(graph.KindSet), SlotData), nil, "Variable not visible here", []string{"secrets"}},
		{"unknown secret", "secrets.tokn", data, nil, "Unknown secret", []string{`"tokn"`, `"token"`}},
		{"item outside foreach", "item == 'a'", when, graph.TypeBool, "Variable not visible here", []string{"item is only visible in a step with a foreach"}},
		{"error outside retry", "error.status == 500", when, graph.TypeBool, "Variable not visible here", []string{"retry.when"}},
		{"dynamic steps index", "steps['build'].output.exit_code == 0", when, graph.TypeBool, "Dynamic steps reference", []string{"steps.NAME"}},
		{"bare steps", "steps.size() > 0", when, graph.TypeBool, "Invalid steps reference", []string{"steps.NAME"}},
		{"unknown name", "inptu.amount > 1", when, graph.TypeBool, "Unknown name", []string{"inptu", `"input"`}},
		{"syntax error", "input.amount >", when, graph.TypeBool, "Invalid expression", []string{"not a valid CEL expression"}},
		{"empty", "  ", when, graph.TypeBool, "Empty expression", nil},
		{"nested loops over inputs", "input.tags.all(a, input.tags.all(b, a.contains(b)))", when, graph.TypeBool, "Expression too expensive", []string{"limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, diags := ctCheck(tt.src, tt.scope, tt.want)
			if !diags.HasErrors() {
				t.Fatalf("CheckExpr(%q) = %+v, want an error %q", tt.src, e, tt.summary)
			}
			d := diags[0]
			if d.Summary != tt.summary {
				t.Errorf("summary = %q, want %q (detail: %s)", d.Summary, tt.summary, d.Detail)
			}
			for _, s := range tt.detail {
				if !strings.Contains(d.Detail, s) {
					t.Errorf("detail %q does not contain %q", d.Detail, s)
				}
			}
			if d.Subject == nil {
				t.Errorf("no subject range")
			}
		})
	}
}

func TestCheckExprTypes(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	when := StepScope(g, ctStep(graph.KindExec, "fan"), SlotWhen)
	tests := []struct {
		src  string
		want *graph.Type // the checked type
	}{
		{"input.count + 1", graph.TypeNumber},
		{"input.amount * 1.2", graph.TypeNumber},
		{"input.amount > 100", graph.TypeBool},
		{"input.amount == 100", graph.TypeBool},
		{"1.5 * 2", graph.TypeNumber},
		{"2 - input.amount / 3", graph.TypeNumber},
		{"7 / 2", graph.TypeInt},
		{"steps.build.output.exit_code == 0", graph.TypeBool},
		{"steps.build.output.exit_code + 1", graph.TypeInt},
		{"steps.build.output.json.count + 1", graph.TypeAny},
		{"steps.build.error == null", graph.TypeBool},
		{"steps.build.output", ctExecOutput},
		{"steps.fan.output", graph.ListOf(ctExecOutput)},
		{"steps.fan.output.map(o, o.exit_code)", graph.ListOf(graph.TypeInt)},
		{"steps.price.output == {'total': 1.0}", graph.TypeBool},
		{"input.tags.filter(t, t.startsWith('a'))", graph.ListOf(graph.TypeString)},
		{"'order-' + input.order_id.upperAscii()", graph.TypeString},
		{"has(steps.build.output.json.x)", graph.TypeBool},
		{"run.attempt > 1 && run.workflow == 'w'", graph.TypeBool},
		{"math.greatest(input.amount, 3.0)", graph.TypeNumber},
		{"{'a': 1, 'b': 'x'}", graph.MapOf(graph.TypeAny)},
		{"[1, 2.5]", graph.ListOf(graph.TypeAny)},
		{"input.tags.all(a, a != '')", graph.TypeBool},
	}
	for _, tt := range tests {
		e, diags := ctCheck(tt.src, when, nil)
		if diags.HasErrors() {
			t.Errorf("CheckExpr(%q): %s", tt.src, diags)
			continue
		}
		if !e.Type.Equal(tt.want) {
			t.Errorf("CheckExpr(%q).Type = %s, want %s", tt.src, e.Type, tt.want)
		}
	}
}

func TestCheckExprWantAcceptsDyn(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	sc := StepScope(g, ctStep(graph.KindExec, "build"), SlotItems)
	for _, src := range []string{"steps.build.output.json", "input.tags", "[1, 2]"} {
		if _, diags := ctCheck(src, sc, graph.ListOf(graph.TypeAny)); diags.HasErrors() {
			t.Errorf("items %q: %s", src, diags)
		}
	}
}

func TestCanonicalText(t *testing.T) {
	t.Parallel()
	sc := StepScope(ctGraph(), ctStep(graph.KindExec), SlotWhen)
	variants := []string{
		"input.amount>100&&input.express",
		"input.amount  >  100 &&\n  input.express",
		"(input.amount > 100) && input.express",
		"input . amount > 100 && input.express",
	}
	var first string
	for i, src := range variants {
		e, diags := ctCheck(src, sc, graph.TypeBool)
		if diags.HasErrors() {
			t.Fatalf("%q: %s", src, diags)
		}
		if i == 0 {
			first = e.CEL
			continue
		}
		if e.CEL != first {
			t.Errorf("canonical text of %q = %q, want %q", src, e.CEL, first)
		}
	}
	if first != "input.amount > 100 && input.express" {
		t.Errorf("canonical text = %q", first)
	}
	// Macros keep their written form.
	e, diags := ctCheck("input.tags.exists(t,t=='x')", sc, graph.TypeBool)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if e.CEL != "input.tags.exists(t, t == \"x\")" {
		t.Errorf("canonical macro text = %q", e.CEL)
	}
}

func TestStepRefs(t *testing.T) {
	t.Parallel()
	p, diags := ParseExpr("steps.b.output.x + steps.a.attempts + steps.b.attempts + [1].map(steps, steps)[0] + has(steps.c.output)", hcl.Range{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := strings.Join(p.StepRefs(), ",")
	if got != "a,b,c" {
		t.Errorf("StepRefs = %s, want a,b,c", got)
	}
}

func TestErrorPositionQuoted(t *testing.T) {
	t.Parallel()
	src := "# comment\nstep = 1\n    when = \"input.amount > 1 && input.ordr_id == 'x'\"\n"
	s := whenMistake(t, src)
	if s.Start.Line != 3 || s.Start.Column != 39 || s.End.Column != 46 {
		t.Errorf("subject = %s, want line 3, columns 39-46", s)
	}
	if got := src[s.Start.Byte:s.End.Byte]; got != "ordr_id" {
		t.Errorf("subject bytes = %q, want ordr_id", got)
	}
	if s.Filename != "test.hcl" {
		t.Errorf("filename = %q", s.Filename)
	}
}

// whenMistake checks the when attribute of src, which must have a type
// error, and returns the error's subject.
func whenMistake(t *testing.T, src string) *hcl.Range {
	t.Helper()
	text, rng := ctAttr(t, src, "when")
	p, diags := ParseExpr(text, rng)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, diags = CheckExpr(p, StepScope(ctGraph(), ctStep(graph.KindExec), SlotWhen), graph.TypeBool)
	if !diags.HasErrors() {
		t.Fatalf("%s: no error", src)
	}
	return diags[0].Subject
}

// TestErrorPositionCall: an unknown function, global or member, is marked
// at its name, not at the parenthesis CEL places the call at.
func TestErrorPositionCall(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, name string }{
		{"when = \"nosuch(1) == 1\"\n", "nosuch"},
		{"when = \"[1, 2].sum() == 3\"\n", "sum"},
		{"when = \"[1, 2].sum (1) == 3\"\n", "sum"},
	} {
		s := whenMistake(t, c.src)
		if got := c.src[s.Start.Byte:s.End.Byte]; got != c.name {
			t.Errorf("%s: subject bytes = %q, want %q", c.src, got, c.name)
		}
	}
}

// TestErrorPositionEscapes checks that escapes before the mistake (\", \\
// and $${) do not shift the caret.
func TestErrorPositionEscapes(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		"when = \"string(input.amount) == \\\"a\\\\b\\\" && '$${x}' != '' && input.ordr_id == 'x'\"\n",
		"when = \"input.ordr_id == 'x'\"\n",
	} {
		s := whenMistake(t, src)
		if got := src[s.Start.Byte:s.End.Byte]; got != "ordr_id" {
			t.Errorf("%s: subject bytes = %q, want ordr_id", src, got)
		}
		if want := strings.Index(src, "ordr_id") + 1; s.Start.Column != want {
			t.Errorf("%s: column %d, want %d", src, s.Start.Column, want)
		}
	}
}

func TestErrorPositionSyntax(t *testing.T) {
	t.Parallel()
	src := "when = \"input.amount > > 1\"\n"
	text, rng := ctAttr(t, src, "when")
	_, diags := ParseExpr(text, rng)
	if !diags.HasErrors() {
		t.Fatal("no error")
	}
	s := diags[0].Subject
	if s.Start.Line != 1 || src[s.Start.Byte:s.Start.Byte+1] != ">" || s.Start.Byte != 23 {
		t.Errorf("subject = %s (byte %d), want the second >", s, s.Start.Byte)
	}
}

func TestErrorPositionHeredoc(t *testing.T) {
	t.Parallel()
	src := "a = 1\nwhen = <<EOT\ninput.amount > 1 &&\n  input.ordr_id == 'x'\nEOT\n"
	text, rng := ctAttr(t, src, "when")
	p, diags := ParseExpr(text, rng)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, diags = CheckExpr(p, StepScope(ctGraph(), ctStep(graph.KindExec), SlotWhen), graph.TypeBool)
	if !diags.HasErrors() {
		t.Fatal("no error")
	}
	s := diags[0].Subject
	if s.Start.Line != 4 || s.Start.Column != 9 {
		t.Errorf("subject = %s, want line 4 column 9", s)
	}
	if got := src[s.Start.Byte:s.End.Byte]; got != "ordr_id" {
		t.Errorf("subject bytes = %q, want ordr_id", got)
	}
}

func TestVariableNotVisiblePosition(t *testing.T) {
	t.Parallel()
	src := `when = "input.express && secrets.token == ''"` + "\n"
	text, rng := ctAttr(t, src, "when")
	p, diags := ParseExpr(text, rng)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, diags = CheckExpr(p, StepScope(ctGraph(), ctStep(graph.KindExec), SlotWhen), graph.TypeBool)
	if !diags.HasErrors() {
		t.Fatal("no error")
	}
	if s := diags[0].Subject; src[s.Start.Byte:s.End.Byte] != "secrets" {
		t.Errorf("subject = %q, want secrets", src[s.Start.Byte:s.End.Byte])
	}
}

// TestUnknownStepNotVisible: a scope that knows the workflow's steps says
// that a declared step cannot be read here rather than that it does not
// exist.
func TestUnknownStepNotVisible(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	sc := StepScope(g, ctStep(graph.KindExec, "price"), SlotWhen)
	sc.Declared = []string{"build", "fan", "other", "price", "self"}
	_, diags := ctCheck("steps.other.output.n > 1", sc, graph.TypeBool)
	if len(diags) != 1 || diags[0].Summary != "Unknown step" ||
		!strings.HasPrefix(diags[0].Detail, `Step "other" cannot be read in when. The steps visible here are "build" and "price".`) {
		t.Errorf("diags:\n%s", testsrc.Describe(diags))
	}
	_, diags = ctCheck("steps.othr.output.n > 1", sc, graph.TypeBool)
	if len(diags) != 1 || diags[0].Detail != `There is no step "othr". Did you mean "other"?` {
		t.Errorf("diags:\n%s", testsrc.Describe(diags))
	}
}
