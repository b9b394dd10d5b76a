package expr_test

import (
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// graphScopeOf is sc checked in the shared environments of g (as the
// compiler's narrow scopes are).
func graphScopeOf(g *graph.Graph, sc *expr.Scope) *expr.Scope {
	byName := map[string]*graph.Step{}
	for _, s := range g.Steps {
		byName[s.Name] = s
	}
	cg := expr.NewCelGraph(func(n string) *graph.Type {
		if s := byName[n]; s != nil {
			return expr.VisibleOutput(s)
		}
		return nil
	}, func() []string { return naming.NamesSorted(byName) })
	c := *sc
	c.Graph = cg
	return &c
}

// TestGraphEnvMatchesScopeEnv checks expressions, good and bad, in a
// scope's own environment and in its graph's shared one: the results and
// the diagnostics must be the same.
func TestGraphEnvMatchesScopeEnv(t *testing.T) {
	t.Parallel()
	g := expr.CtGraph()
	fan := g.Steps[2]
	fan.Until = &graph.Until{}
	scopes := map[string]*expr.Scope{
		"when":   expr.StepScope(g, expr.CtStep(graph.KindExec, "fan"), expr.SlotWhen),
		"data":   expr.StepScope(g, expr.CtStep(graph.KindExec, "fan"), expr.SlotData),
		"retry":  expr.StepScope(g, expr.CtStep(graph.KindExec, "fan"), expr.SlotRetryWhen),
		"until":  expr.StepScope(g, fan, expr.SlotUntil),
		"self":   expr.StepScope(g, fan, expr.SlotData),
		"output": expr.GraphScope(g, expr.SlotOutput),
		"alert":  expr.GraphScope(g, expr.SlotAlert),
		"key":    expr.GraphScope(g, expr.SlotKey),
	}
	srcs := []string{
		"steps.build.output.exit_code == 0 && input.amount > 100",
		"steps.fan.output.map(o, o.stdout)",
		"steps.fan.output.exit_code",
		"steps.fan.output",
		"steps.price.output.total * 2 + input.count",
		"steps.price.output.totl",
		"steps.price.output.total == 'x'",
		"steps.build.status + 1",
		"steps.nope.output",
		"steps",
		"input.tags.join(',')",
		"error.kind == 'timeout'",
		"secrets.token.size() > 0",
		"{'a': steps.price.output, 'b': [1, 2.5]}",
		"steps.build.error == null ? 1 : steps.build.error.exit_code",
		"input.tags.map(a, input.tags.map(b, input.tags.map(c, a + b + c))).size()",
		"nope(1)",
	}
	for name, sc := range scopes {
		shared := graphScopeOf(g, sc)
		for _, src := range srcs {
			want, wantDiags := expr.CtCheck(src, sc, nil)
			got, gotDiags := expr.CtCheck(src, shared, nil)
			if !reflect.DeepEqual(got, want) || gotDiags.Error() != wantDiags.Error() {
				t.Errorf("%s: %q: shared environment gives %v, %s; own %v, %s", name, src, got, gotDiags, want, wantDiags)
			}
		}
	}
}

// TestGraphEnvShared checks that the scopes of a chain's steps share one
// environment.
func TestGraphEnvShared(t *testing.T) {
	t.Parallel()
	g := storedGraph(t, 20)
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Steps[1:] {
		le := p.Lazy()[s.When]
		if _, err := p.Compile(le); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(p.Cel().Envs()); n != 1 {
		t.Errorf("%d environments for 19 when expressions, want 1", n)
	}
}

// TestBoundedBySize checks the expressions whose cost is not estimated
// against the estimate.
func TestBoundedBySize(t *testing.T) {
	t.Parallel()
	sc := expr.StepScope(expr.CtGraph(), expr.CtStep(graph.KindExec, "fan"), expr.SlotWhen)
	cases := map[string]bool{
		"steps.build.output.exit_code == 0 && input.amount > 100": true,
		"steps.price.output.total * 2 + input.count - 1 / 3.0":    true,
		"!(input.express || input.amount <= 3)":                   true,
		"input.express ? steps.price.output.total : 1.0":          true,
		"[1, 2, input.amount]":                                    true,
		"input.order_id == 'x'":                                   false,
		"input.tags.size() > 1":                                   false,
		"steps.build.output.json == null":                         false,
		"input.tags.all(t, t != '')":                              false,
		"input.order_id + 'x'":                                    false,
	}
	for src, want := range cases {
		p, diags := expr.ParseExpr(src, hcl.Range{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		_, checked, se, diags := expr.CheckExprEnv(p, sc, nil)
		if diags.HasErrors() {
			t.Fatalf("%q: %s", src, diags)
		}
		if got := expr.BoundedBySize(checked.NativeRep()); got != want {
			t.Errorf("boundedBySize(%q) = %t, want %t", src, got, want)
		}
		est, err := se.Env().EstimateCost(checked, expr.SizeEstimator{})
		if err != nil {
			t.Fatal(err)
		}
		if want && est.Max > 1000 {
			t.Errorf("%q: estimated %d, not bounded by its size", src, est.Max)
		}
	}
}
