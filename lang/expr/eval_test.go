package expr

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// ctActivation is a run of ctGraph as the interpreter would bind it: every
// number as decoded from JSON (float64).
func ctActivation() *Activation {
	return &Activation{
		Input: map[string]any{
			"amount": 150.0, "count": 3.0, "express": true, "order_id": "o-1",
			"tags": []any{"a", "b"},
		},
		Steps: map[string]StepResult{
			"build": {Status: "completed", Attempts: 1, Output: map[string]any{
				"exit_code": 0.0, "stdout": "ok\n", "stderr": "", "json": map[string]any{"n": 2.0, "list": []any{1.0, 2.0}},
			}},
			"price": {Status: "completed", Attempts: 2, Output: map[string]any{"total": 180.0}},
			"fan": {Status: "completed", Attempts: 2, Output: []any{
				map[string]any{"exit_code": 0.0, "stdout": "a", "stderr": "", "json": nil},
				map[string]any{"exit_code": 1.0, "stdout": "b", "stderr": "", "json": nil},
			}},
			"other": {Status: "skipped"},
		},
		Run:   RunInfo{ID: "r1", Workflow: "w", Version: "1.0.0", Key: "o-1", Attempt: 1, StartedAt: "2024-01-02T03:04:05Z"},
		Item:  "b",
		Index: 1, InForeach: true,
		Error:   map[string]any{"message": "boom", "kind": "exit", "exit_code": 2.0},
		Secrets: map[string]string{"token": "s3cret"},
	}
}

// ctProgram compiles expressions in one scope into a Program.
func ctProgram(t testing.TB, sc *Scope, srcs ...string) (*Program, []*graph.Expr) {
	t.Helper()
	p := &Program{g: ctGraph(), progs: map[*graph.Expr]*compiled{}}
	var exprs []*graph.Expr
	for _, src := range srcs {
		e, diags := ctCheck(src, sc, nil)
		if diags.HasErrors() {
			t.Fatalf("%q: %s", src, diags)
		}
		c, err := compileExpr(e.CEL, sc)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		p.progs[e] = c
		exprs = append(exprs, e)
	}
	return p, exprs
}

func TestEval(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	all := &Scope{Inputs: InputsType(g), Run: true, Item: graph.TypeString, Error: true, Secrets: []string{"token"},
		Steps: map[string]*graph.Type{"build": ctExecOutput, "price": g.Steps[1].OutputType, "fan": graph.ListOf(ctExecOutput), "other": g.Steps[3].OutputType}}
	tests := []struct {
		src  string
		want any
	}{
		{"input.count + 1", 4.0},
		{"1 + input.count", 4.0},
		{"input.amount > 100", true},
		{"input.amount == 150", true},
		{"input.amount * 1.2", 180.0},
		{"input.amount / 2 - 1", 74.0},
		{"1.5 * 2", 3.0},
		{"7 / 2", int64(3)},
		{"steps.build.output.exit_code == 0", true},
		{"steps.build.output.exit_code + 1", int64(1)},
		{"steps.build.output.json.n + 1", 3.0},
		{"steps.build.output.json.n * 2", 4.0},
		{"1 - steps.build.output.json.n", -1.0},
		{"steps.build.output.json.n == 2", true},
		{"steps.build.output.json.list.map(x, x * 10)", []any{10.0, 20.0}},
		{"steps.fan.output.map(o, o.exit_code)", []any{int64(0), int64(1)}},
		{"steps.fan.output.exists(o, o.exit_code != 0)", true},
		{"steps.price.attempts", int64(2)},
		{"steps.build.error == null", true},
		{"steps.other.output == null && steps.other.status == 'skipped'", true},
		{"error.kind == 'timeout' || (has(error.status) && error.status >= 500)", false},
		{"has(error.exit_code) && !has(error.status)", true},
		{"error.exit_code == 2 && error.message == 'boom'", true},
		{"run.attempt == 1 && run.id == 'r1'", true},
		{"timestamp(run.started_at) + duration('1h')", "2024-01-02T04:04:05Z"},
		{"item + '-' + string(index)", "b-1"},
		{"secrets.token.size()", int64(6)},
		{"{'a': input.tags, 'b': null}", map[string]any{"a": []any{"a", "b"}, "b": nil}},
		{"input.order_id.upperAscii()", "O-1"},
		{"math.greatest(input.amount, 3.0)", 150.0},
		{"input.tags.join(',')", "a,b"},
	}
	srcs := make([]string, len(tests))
	for i, tt := range tests {
		srcs[i] = tt.src
	}
	p, exprs := ctProgram(t, all, srcs...)
	for i, tt := range tests {
		got, err := p.Eval(context.Background(), exprs[i], ctActivation())
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q = %#v, want %#v", tt.src, got, tt.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	sc := &Scope{Inputs: InputsType(g), Run: true, Steps: map[string]*graph.Type{"build": ctExecOutput, "other": g.Steps[3].OutputType}}
	tests := []struct{ src, want string }{
		{"int(input.count) / 0", "division by zero"},
		{"input.amount / 0", "not a finite number"},
		{"steps.build.output.json.missing > 1", "no such key"},
		{"steps.other.output.n > 1", `steps.other.output.n > 1`},
	}
	for _, tt := range tests {
		p, exprs := ctProgram(t, sc, tt.src)
		_, err := p.Eval(context.Background(), exprs[0], ctActivation())
		if err == nil {
			t.Errorf("%q: no error", tt.src)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), exprs[0].CEL) {
			t.Errorf("%q: error %q does not name %q and the expression", tt.src, err, tt.want)
		}
	}
	// A step that has not finished is reported, not read as null.
	p, exprs := ctProgram(t, sc, "steps.build.status == 'completed'")
	a := ctActivation()
	delete(a.Steps, "build")
	if _, err := p.Eval(context.Background(), exprs[0], a); err == nil || !strings.Contains(err.Error(), "steps.build has no result") {
		t.Errorf("missing step result: %v", err)
	}
	// An expression that is not part of the program.
	if _, err := p.Eval(context.Background(), &graph.Expr{CEL: "1"}, a); err == nil {
		t.Error("unknown expression: no error")
	}
}

func TestEvalCostAndCancel(t *testing.T) {
	t.Parallel()
	sc := &Scope{Inputs: graph.ObjectOf(map[string]*graph.Type{"n": graph.ListOf(graph.TypeNumber)})}
	src := "input.n.map(a, input.n.filter(b, b > a).size()).size()"
	e, diags := ctCheck(src, sc, nil)
	if !diags.HasErrors() || diags[0].Summary != "Expression too expensive" {
		t.Fatalf("nested loops: %v, %s", e, diags)
	}
	// Programs stop at the cost limit (here a small one) and on
	// cancellation.
	e, diags = ctCheck("input.n.map(a, a * 2).size()", sc, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c, err := compileExprLimit(e.CEL, sc, 1000)
	if err != nil {
		t.Fatal(err)
	}
	p := &Program{g: &graph.Graph{}, progs: map[*graph.Expr]*compiled{e: c}}
	big := make([]any, 5000)
	for i := range big {
		big[i] = float64(i)
	}
	_, err = p.Eval(context.Background(), e, &Activation{Input: map[string]any{"n": big}})
	if err == nil || !strings.Contains(err.Error(), "cost limit") {
		t.Errorf("cost limit: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err = compileExpr(e.CEL, sc)
	if err != nil {
		t.Fatal(err)
	}
	p.progs[e] = c
	if _, err = p.Eval(ctx, e, &Activation{Input: map[string]any{"n": big}}); err == nil {
		t.Error("cancelled context: no error")
	}
}

// ctFullGraph is ctGraph with expressions in every slot, compiled through
// the public API as the compiler does.
func ctFullGraph(t testing.TB) *graph.Graph {
	t.Helper()
	g := ctGraph()
	expr := func(src string, sc *Scope, want *graph.Type) *graph.Expr {
		e, diags := ctCheck(src, sc, want)
		if diags.HasErrors() {
			t.Fatalf("%q: %s", src, diags)
		}
		return e
	}
	tmpl := func(src string, sc *Scope) *graph.Value {
		tm, typ, diags := ctTemplate(t, src, sc)
		if diags.HasErrors() {
			t.Fatalf("%q: %s", src, diags)
		}
		return &graph.Value{Template: tm, Type: typ}
	}
	build, price, fan := g.Steps[0], g.Steps[1], g.Steps[2]
	g.Key = expr("input.order_id", GraphScope(g, SlotKey), graph.TypeString)
	g.Concurrency = &graph.Concurrency{Key: expr("'order-' + input.order_id", GraphScope(g, SlotConcurrencyKey), graph.TypeString), Limit: 1}
	build.Action.Exec = &graph.ExecAction{Command: &graph.Value{List: []*graph.Value{
		{Lit: json.RawMessage(`"echo"`), Type: graph.TypeString},
		tmpl("{{ secrets.token }}", StepScope(g, build, SlotData)),
	}, Type: graph.ListOf(graph.TypeString)}}
	build.When = expr("input.express", StepScope(g, build, SlotWhen), graph.TypeBool)
	price.Action.Set = &graph.SetAction{Values: graph.NamedValuesOf(map[string]*graph.Value{
		"total": tmpl("{{ input.amount * 1.2 }}", StepScope(g, price, SlotData)),
		"label": tmpl("order {{ input.order_id }}: {{ steps.build.output.exit_code }} {{ input.tags }}", StepScope(g, price, SlotData)),
	})}
	fan.Foreach.Items = expr("input.tags", StepScope(g, fan, SlotItems), graph.ListOf(graph.TypeAny))
	fan.Action.Exec = &graph.ExecAction{Command: tmpl("{{ [item, string(index + 1), string(steps.price.output.total)] }}", StepScope(g, fan, SlotData))}
	fan.IdempotencyKey = tmpl("{{ run.id }}-{{ index }}", StepScope(g, fan, SlotIdempotencyKey))
	fan.Retry = &graph.Retry{Attempts: 3, When: expr("error.kind == 'timeout' || (has(error.status) && error.status >= 500)", StepScope(g, fan, SlotRetryWhen), graph.TypeBool)}
	fan.Until = &graph.Until{Cond: expr("steps.fan.output.exit_code == 0", StepScope(g, fan, SlotUntil), graph.TypeBool), MaxIterations: 3}
	g.Outputs = []graph.Output{{Name: "total", Value: tmpl("{{ steps.price.output.total }}", GraphScope(g, SlotOutput)), Type: graph.TypeNumber}}
	g.Alerts = []graph.Alert{{Name: "ops", On: []string{"failed"}, Action: graph.Action{Kind: graph.KindHTTP, HTTP: &graph.HTTPAction{
		Method: "POST", URL: &graph.Value{Lit: json.RawMessage(`"http://x"`), Type: graph.TypeString},
		Body: &graph.Value{Object: map[string]*graph.Value{"text": tmpl("{{ run.workflow }}: {{ event.kind }} {{ secrets.token.size() }}", GraphScope(g, SlotAlert))}, Type: graph.MapOf(graph.TypeString)},
	}}}}
	return g
}

func TestLoadAndEvalValue(t *testing.T) {
	t.Parallel()
	g := ctFullGraph(t)
	// Load works on a graph that went through JSON, as stored.
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var stored graph.Graph
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	p, err := Load(&stored)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := ctActivation()
	a.Event = map[string]any{"kind": "failed", "message": "m"}
	build, price, fan := stored.Steps[0], stored.Steps[1], stored.Steps[2]
	checks := []struct {
		name string
		eval func() (any, error)
		want any
	}{
		{"key", func() (any, error) { return p.Eval(ctx, stored.Key, a) }, "o-1"},
		{"concurrency", func() (any, error) { return p.Eval(ctx, stored.Concurrency.Key, a) }, "order-o-1"},
		{"when", func() (any, error) { return p.Eval(ctx, build.When, a) }, true},
		{"command", func() (any, error) { return p.EvalValue(ctx, build.Action.Exec.Command, a) }, []any{"echo", "s3cret"}},
		{"total", func() (any, error) { return p.EvalValue(ctx, price.Action.Set.Values.Get("total"), a) }, 180.0},
		{"label", func() (any, error) { return p.EvalValue(ctx, price.Action.Set.Values.Get("label"), a) }, `order o-1: 0 ["a","b"]`},
		{"items", func() (any, error) { return p.Eval(ctx, fan.Foreach.Items, a) }, []any{"a", "b"}},
		{"fan command", func() (any, error) { return p.EvalValue(ctx, fan.Action.Exec.Command, a) }, []any{"b", "2", "180"}},
		{"idempotency", func() (any, error) { return p.EvalValue(ctx, fan.IdempotencyKey, a) }, "r1-1"},
		{"retry", func() (any, error) { return p.Eval(ctx, fan.Retry.When, a) }, false},
		{"output", func() (any, error) { return p.EvalValue(ctx, stored.Outputs[0].Value, a) }, 180.0},
		{"alert", func() (any, error) { return p.EvalValue(ctx, stored.Alerts[0].Action.HTTP.Body, a) }, map[string]any{"text": "w: failed 6"}},
		{"literal", func() (any, error) { return p.EvalValue(ctx, stored.Alerts[0].Action.HTTP.URL, a) }, "http://x"},
	}
	for _, c := range checks {
		got, err := c.eval()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, got, c.want)
		}
	}
	// The until of a step sees its own latest output (not the list).
	ua := ctActivation()
	ua.Steps["fan"] = StepResult{Status: "completed", Attempts: 1, Output: map[string]any{"exit_code": 0.0, "stdout": "", "stderr": "", "json": nil}}
	if got, err := p.Eval(ctx, fan.Until.Cond, ua); err != nil || got != true {
		t.Errorf("until = %v, %v", got, err)
	}
	// Expressions of another graph are not found.
	if _, err := p.Eval(ctx, g.Key, a); err == nil {
		t.Error("expression of another graph: no error")
	}
}

func TestLoadRejectsBadGraph(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	g.Steps[1].When = &graph.Expr{CEL: "steps.nope.output == 1", Type: graph.TypeBool}
	_, err := Load(g)
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Load: %v", err)
	}
}

func TestEvalConcurrent(t *testing.T) {
	t.Parallel()
	p, err := Load(ctFullGraph(t))
	if err != nil {
		t.Fatal(err)
	}
	g := p.g
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				v, err := p.EvalValue(context.Background(), g.Steps[1].Action.Set.Values.Get("label"), ctActivation())
				if err != nil {
					errs <- err
					return
				}
				if v != `order o-1: 0 ["a","b"]` {
					errs <- errors.New("wrong value")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkCheckExpr(b *testing.B) {
	sc := StepScope(ctGraph(), ctStep(graph.KindExec, "fan"), SlotWhen)
	src := "steps.build.output.exit_code == 0 && input.amount > 100 && steps.fan.output.all(o, o.exit_code == 0)"
	for b.Loop() {
		if _, diags := ctCheck(src, sc, graph.TypeBool); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

func BenchmarkEval(b *testing.B) {
	sc := StepScope(ctGraph(), ctStep(graph.KindExec, "fan"), SlotWhen)
	p, exprs := ctProgram(b, sc, "steps.build.output.exit_code == 0 && input.amount > 100 && steps.fan.output.all(o, o.exit_code <= 1)")
	a := ctActivation()
	ctx := context.Background()
	for b.Loop() {
		v, err := p.Eval(ctx, exprs[0], a)
		if err != nil || v != true {
			b.Fatal(v, err)
		}
	}
}
