package expr

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// TestEvalPath: an expression that is only a selection (input.order_id,
// steps.price.output.total) is read without its CEL program, and gives
// what the program gives, value or error; any other expression, or a path
// that does not end at a scalar, still runs the program.
func TestEvalPath(t *testing.T) {
	t.Parallel()
	g := ctGraph()
	sc := &Scope{Inputs: InputsType(g), Run: true, Item: graph.TypeString, Error: true, Secrets: []string{"token"},
		Steps: map[string]*graph.Type{"build": ctExecOutput, "price": g.Steps[1].OutputType, "fan": graph.ListOf(ctExecOutput), "other": g.Steps[3].OutputType}}
	tests := []struct {
		src  string
		fast bool // read without the program
	}{
		{"input.order_id", true},
		{"input.amount", true},
		{"input.express", true},
		{"input.tags", false},                      // a list: the program copies it
		{"steps.price.output.total", true},         // a number
		{"steps.build.output.exit_code", true},     // an int, converted by its type
		{"steps.build.output.json.n", true},        // inside a dyn value
		{"steps.build.output.json.list", false},    // a list
		{"steps.build.status", true},               //
		{"steps.build.attempts", true},             // int64
		{"steps.other.output", true},               // a skipped step's output: null
		{"steps.other.output.n", false},            // a field of null: the program's error
		{"steps.build.output.json.missing", false}, // no such key: the program's error
		{"run.key", true},
		{"run.attempt", true},
		{"item", false}, // a bare variable is not a selection
		{"error.message", false},
		{"secrets.token", false},
		{"has(input.order_id)", false},
		{"input.order_id + \"\"", false},
	}
	srcs := make([]string, len(tests))
	for i, tt := range tests {
		srcs[i] = tt.src
	}
	p, exprs := ctProgram(t, sc, srcs...)
	ctx := context.Background()
	for i, tt := range tests {
		c := p.progs[exprs[i]]
		a := ctActivation()
		_, fast := c.path, false
		if c.path != nil {
			_, fast = c.evalPath(&lazyVars{c: c, a: a})
		}
		if fast != tt.fast {
			t.Errorf("%q: read without the program %v, want %v (path %q)", tt.src, fast, tt.fast, c.path)
		}
		got, err := p.Eval(ctx, exprs[i], a)
		out, _, perr := c.prg.ContextEval(ctx, &lazyVars{c: c, a: ctActivation()})
		var want any
		if perr == nil {
			want, perr = fromCEL(out)
		}
		if (err == nil) != (perr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: Eval = %#v, %v; the program gives %#v, %v", tt.src, got, err, want, perr)
		}
	}
}

// TestEvalPathBindsOnce: a selection the program must evaluate after all
// (a list at its end) binds its variable once, for both tries.
func TestEvalPathBindsOnce(t *testing.T) {
	g := ctGraph()
	p, exprs := ctProgram(t, &Scope{Inputs: InputsType(g)}, "input.tags")
	calls := 0
	a := &Activation{InputFunc: func() map[string]any { calls++; return ctActivation().Input }}
	got, err := p.Eval(context.Background(), exprs[0], a)
	if err != nil || !reflect.DeepEqual(got, []any{"a", "b"}) {
		t.Fatalf("Eval(input.tags) = %v, %v", got, err)
	}
	if calls != 1 {
		t.Errorf("the inputs were read %d times, want 1", calls)
	}
}

// TestEvalPathAllocs: reading a template's plain input reference, the
// common piece of an http step's url, allocates only its activation's
// bookkeeping, not a CEL evaluation.
func TestEvalPathAllocs(t *testing.T) {
	g := ctGraph()
	sc := &Scope{Inputs: InputsType(g)}
	p, exprs := ctProgram(t, sc, "input.order_id")
	a := ctActivation()
	a.Cache = NewConvCache()
	ctx := context.Background()
	if _, err := p.Eval(ctx, exprs[0], a); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.Eval(ctx, exprs[0], a); err != nil {
			t.Fatal(err)
		}
	}); n > 3 {
		t.Errorf("Eval(input.order_id) allocates %v times, want at most 3", n)
	}
}

// FuzzEvalPath: on any input document, a selection Eval reads without the
// program gives what the program gives, value or error.
func FuzzEvalPath(f *testing.F) {
	for _, s := range []string{
		`{"d":{"a":{"b":1}},"n":1.5,"i":2,"s":"x"}`,
		`{"d":{"a":[1,2]},"n":0,"i":0,"s":""}`,
		`{"d":null,"n":1,"i":1,"s":"y"}`,
		`{"d":{"a":{"b":null}},"n":1e300,"i":-3,"s":"é"}`,
		`{"d":"text","n":1,"i":1.5,"s":"z"}`,
		`{"d":{"a":{"b":{"c":true}}},"n":1,"i":1,"s":"z"}`,
	} {
		f.Add(s)
	}
	sc := &Scope{Inputs: graph.ObjectOf(map[string]*graph.Type{
		"d": graph.TypeAny, "n": graph.TypeNumber, "i": graph.TypeInt, "s": graph.TypeString})}
	srcs := []string{"input.d", "input.d.a", "input.d.a.b", "input.d.a.b.c", "input.n", "input.i", "input.s"}
	p := &Program{g: ctGraph(), progs: map[*graph.Expr]*compiled{}}
	exprs := make([]*graph.Expr, len(srcs))
	for i, src := range srcs {
		c, err := compileExpr(src, sc)
		if err != nil {
			f.Fatalf("%q: %v", src, err)
		}
		if c.path == nil {
			f.Fatalf("%q is not read as a selection", src)
		}
		exprs[i] = &graph.Expr{CEL: src}
		p.progs[exprs[i]] = c
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, doc string) {
		var in map[string]any
		if err := json.Unmarshal([]byte(doc), &in); err != nil || in == nil {
			return
		}
		for i, e := range exprs {
			c := p.progs[e]
			got, err := p.Eval(ctx, e, &Activation{Input: in})
			out, _, perr := c.prg.ContextEval(ctx, &lazyVars{c: c, a: &Activation{Input: in}})
			var want any
			if perr == nil {
				want, perr = fromCEL(out)
			}
			if (err == nil) != (perr == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("%q on %s: Eval = %#v, %v; the program gives %#v, %v", srcs[i], doc, got, err, want, perr)
			}
		}
	})
}
