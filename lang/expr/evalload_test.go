package expr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/hashicorp/hcl/v2"
)

func TestScanStepRefs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		refs string // "!" when the scan must give up
	}{
		{"steps.a.output.n < input.limit", "a"},
		{"steps.a.output + steps.b.output", "a b"},
		{"steps . a . output", "a"},
		{"'steps.x' + \"steps.y\" + steps.z.status", "z"},
		{`'it\'s steps.x' + r'\' + steps.y.status`, "y"},
		{`"""steps.x""" + steps.y.status`, "y"},
		{`b"steps.x" + rb'steps.y' + steps.z.status`, "z"},
		{"input.steps.x + run.steps", ""},
		{"x.steps.y", ""},
		{"1.5 + .5 + steps.a.attempts", "a"},
		{"steps.a.output // steps.b\n + 1", "a"},
		{"[1].map(steps, steps.x)", "!"},
		{"[{}].map(x, x.steps) + steps.a.output", "a"},
		{"steps['a'].output", "!"},
		{"steps.?a.output", "!"},
		{"(steps).a.output", "!"},
		{"steps.all(x, true)", "!"},
		{"steps.`a-b`.output", "!"},
		{"steps", "!"},
		{"'unterminated", "!"},
		{"steps.a.output == 'x", "!"},
	}
	for _, c := range cases {
		refs, ok := expr.ScanStepRefs(c.src, nil)
		got := strings.Join(refs, " ")
		if !ok {
			got = "!"
		}
		if got != c.refs {
			t.Errorf("scanStepRefs(%q) = %q, want %q", c.src, got, c.refs)
		}
	}
}

// TestScanStepRefsCoversParse checks the scan against the parser on the
// expressions of the test graphs: every step an expression reads is found.
func TestScanStepRefsCoversParse(t *testing.T) {
	t.Parallel()
	p, err := expr.Load(storedGraph(t, 30))
	if err != nil {
		t.Fatal(err)
	}
	full, err := expr.Load(expr.CtFullGraph(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range []*expr.Program{p, full} {
		for _, le := range prog.Lazy() {
			pe, diags := expr.ParseExpr(le.Text(), hcl.Range{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			refs, ok := expr.ScanStepRefs(le.Text(), nil)
			if !ok {
				t.Errorf("%q: scan gave up", le.Text())
				continue
			}
			found := map[string]bool{}
			for _, r := range refs {
				found[r] = true
			}
			for _, r := range pe.StepRefs() {
				if !found[r] {
					t.Errorf("%q: scan missed steps.%s", le.Text(), r)
				}
			}
		}
	}
}

// TestLoadMatchesFullScope compiles every expression Load indexes both as
// Load does (narrow scope, on first use) and as the compiler's full scope
// gives, and checks that both evaluate alike.
func TestLoadMatchesFullScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, g := range []*graph.Graph{expr.CtFullGraph(t), storedGraph(t, 30)} {
		p, err := expr.Load(g)
		if err != nil {
			t.Fatal(err)
		}
		a := expr.CtActivation()
		a.Event = map[string]any{"kind": "failed", "message": "m"}
		a.Input["limit"] = 100.0
		for i := range 30 {
			a.Steps[fmt.Sprintf("s%d", i)] = expr.StepResult{Status: "completed", Attempts: 1, Output: map[string]any{"n": float64(i), "label": "x"}}
		}
		var texts []string
		for e, le := range p.Lazy() {
			lazyVal, lazyErr := p.Eval(ctx, e, a)
			c, err := expr.CompileExpr(le.Text(), p.FullScope(le))
			if err != nil {
				t.Fatalf("%q: %v", le.Text(), err)
			}
			if n := p.Lazy()[e].C().ScopeSteps(); n > len(p.Lazy()[e].C().Steps())+1 {
				t.Errorf("%q: compiled with %d steps visible, not in a narrow scope", le.Text(), n)
			}
			if got, want := varNames(p.Lazy()[e].C().Vars()), varNames(c.Vars()); got != want {
				t.Errorf("%q: variables %s, want %s", le.Text(), got, want)
			}
			q := expr.NewProgram(g, map[*graph.Expr]*expr.Compiled{e: c})
			fullVal, fullErr := q.Eval(ctx, e, a)
			if !reflect.DeepEqual(lazyVal, fullVal) || (lazyErr == nil) != (fullErr == nil) {
				t.Errorf("%q: Load gives %#v, %v; the full scope %#v, %v", le.Text(), lazyVal, lazyErr, fullVal, fullErr)
			}
			texts = append(texts, le.Text())
		}
		if len(texts) == 0 {
			t.Fatal("no expressions")
		}
		sort.Strings(texts)
	}
}

func varNames(vars map[string]*graph.Type) string {
	var names []string
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// TestLoadCompilesOnce checks that an expression is compiled on its first
// evaluation and reused afterwards.
func TestLoadCompilesOnce(t *testing.T) {
	t.Parallel()
	g := storedGraph(t, 5)
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	when := g.Steps[3].When
	if p.Lazy()[when].C() != nil {
		t.Fatal("compiled before use")
	}
	a := &expr.Activation{Input: map[string]any{"limit": 10.0}, Steps: map[string]expr.StepResult{"s2": {Status: "completed", Output: map[string]any{"n": 2.0, "label": "x"}}}}
	for range 2 {
		if v, err := p.Eval(context.Background(), when, a); err != nil || v != true {
			t.Fatalf("when = %v, %v", v, err)
		}
	}
	first := p.Lazy()[when].C()
	if first == nil {
		t.Fatal("not compiled after use")
	}
	if _, err := p.Eval(context.Background(), when, a); err != nil || p.Lazy()[when].C() != first {
		t.Errorf("compiled again: %v", err)
	}
}

// TestLoadDefersCompileErrors: a stored text that no longer type-checks,
// but reads only visible steps, fails on first use with Load's message.
func TestLoadDefersCompileErrors(t *testing.T) {
	t.Parallel()
	g := storedGraph(t, 3)
	g.Steps[2].When = &graph.Expr{CEL: "steps.s1.output.nope == 1", Type: graph.TypeBool}
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Eval(context.Background(), g.Steps[2].When, &expr.Activation{})
	if err == nil || !strings.Contains(err.Error(), "loading workflow big version 1.0.0") || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Eval: %v", err)
	}
	// Through JSON the same.
	b, _ := json.Marshal(g)
	var stored graph.Graph
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	if _, err := expr.Load(&stored); err != nil {
		t.Fatal(err)
	}
}

// TestLoadRejectsInvisibleStep: reading a step that is not an ancestor
// fails in Load with the compiler's message.
func TestLoadRejectsInvisibleStep(t *testing.T) {
	t.Parallel()
	g := storedGraph(t, 4)
	g.Steps[1].When = &graph.Expr{CEL: "steps.s3.output.n > 1", Type: graph.TypeBool}
	_, err := expr.Load(g)
	if err == nil || !strings.Contains(err.Error(), `Step "s3" cannot be read in when`) {
		t.Errorf("Load: %v", err)
	}
	g = storedGraph(t, 4)
	g.Key = &graph.Expr{CEL: "steps.s1.output.label", Type: graph.TypeString}
	if _, err := expr.Load(g); err == nil || !strings.Contains(err.Error(), "steps are not visible in key") {
		t.Errorf("Load: %v", err)
	}
}

// TestLoadConcurrentFirstUse evaluates every expression of a graph from
// several goroutines at once, so that first uses race (run with -race).
func TestLoadConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	g := storedGraph(t, 40)
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	a := &expr.Activation{Input: map[string]any{"limit": 100.0}, Steps: map[string]expr.StepResult{}}
	for _, s := range g.Steps {
		a.Steps[s.Name] = expr.StepResult{Status: "completed", Attempts: 1, Output: map[string]any{"n": 1.0, "label": "x"}}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := range g.Steps[1:] {
				s := g.Steps[1+(i+w*7)%(len(g.Steps)-1)]
				v, err := p.Eval(context.Background(), s.When, a)
				if err == nil && v != true {
					err = fmt.Errorf("%s: when = %v", s.Name, v)
				}
				if err == nil {
					_, err = p.EvalValue(context.Background(), s.Action.Set.Values.Get("n"), a)
				}
				if err != nil {
					errs <- err
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

// TestLoadCompiledIndexesOnFirstUse: a LoadCompiled program indexes
// nothing until it is used (storing a graph that is never run costs no
// index), then evaluates and reads outputs as Load's does; a graph Load
// refuses fails its first use with Load's error.
func TestLoadCompiledIndexesOnFirstUse(t *testing.T) {
	t.Parallel()
	g := storedGraph(t, 5)
	p := expr.LoadCompiled(g)
	if p.Indexed() || p.Lazy() != nil {
		t.Fatal("LoadCompiled indexed the graph before its first use")
	}
	ref, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	if !ref.Indexed() {
		t.Error("a Load program says it has no index")
	}
	a := &expr.Activation{Input: map[string]any{"limit": 10.0}, Steps: map[string]expr.StepResult{"s2": {Status: "completed", Output: map[string]any{"n": 2.0, "label": "x"}}}}
	when := g.Steps[3].When
	got, err := p.Eval(context.Background(), when, a)
	want, werr := ref.Eval(context.Background(), when, a)
	if err != nil || werr != nil || got != want {
		t.Errorf("when = %v, %v; Load's program gives %v, %v", got, err, want, werr)
	}
	if !p.Indexed() || len(p.Lazy()) != len(ref.Lazy()) {
		t.Errorf("after its first use: indexed %v, %d expressions, Load's %d", p.Indexed(), len(p.Lazy()), len(ref.Lazy()))
	}
	if !reflect.DeepEqual(p.OutputReads(), ref.OutputReads()) {
		t.Errorf("output reads %v, Load's %v", p.OutputReads(), ref.OutputReads())
	}

	bad := storedGraph(t, 4)
	bad.Steps[1].When = &graph.Expr{CEL: "steps.s3.output.n > 1", Type: graph.TypeBool}
	_, lerr := expr.Load(bad)
	_, eerr := expr.LoadCompiled(bad).Eval(context.Background(), bad.Steps[1].When, &expr.Activation{})
	if lerr == nil || eerr == nil || eerr.Error() != lerr.Error() {
		t.Errorf("a graph Load refuses: first use %v, Load %v", eerr, lerr)
	}
}

// Running a long chain compiles each step's template once and keeps it for
// the graph's next runs. A compiled expression kept, besides cel-go's
// program, its own steps object type (with a map of fields and a result
// type per step read) and a map of output type texts: about 2,800 bytes
// for a chain's template in all; now its read steps' declared output types
// in a slice, under 2,300.
func TestCompiledTemplateSizePerStep(t *testing.T) {
	const n = 3000
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n  }\n", i, i-1)
	}
	b.WriteString("}\n")
	m, diags := lang.LoadFile("chain.hcl", []byte(b.String()))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := testsrc.Stored(t, m.Workflows[0].Graph)
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	before := heapInUse()
	for i, s := range g.Steps[1:] {
		a := &expr.Activation{Steps: map[string]expr.StepResult{g.Steps[i].Name: {Status: "completed", Output: map[string]any{"v": float64(i)}}}}
		v, err := p.EvalValue(context.Background(), s.Action.Set.Values[0].Value, a)
		if err != nil || v != float64(i+1) {
			t.Fatalf("%s: %v, %v", s.Name, v, err)
		}
	}
	per := float64(int64(heapInUse())-int64(before)) / (n - 1)
	runtime.KeepAlive(p)
	t.Logf("a compiled template holds %.0f bytes", per)
	if per > 2300 {
		t.Errorf("a compiled template holds %.0f bytes, want at most 2,300", per)
	}
}

func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestLoadPlansSameTextOnce: steps whose expressions have the same text
// in the same environment share one checked and planned program, so a
// stored chain of n steps that all read input.base checks that text once
// at run time, not n times.
func TestLoadPlansSameTextOnce(t *testing.T) {
	const n = 40
	var b strings.Builder
	b.WriteString("workflow \"same\" {\n  version = \"1.0.0\"\n  input \"limit\" { type = number }\n")
	for i := range n {
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf("    depends_on = [step.s%d]\n", i-1)
		}
		fmt.Fprintf(&b, "  step \"s%d\" {\n%s    when = \"input.limit > 1\"\n    set { v = %d }\n  }\n", i, dep, i)
	}
	b.WriteString("}\n")
	m, diags := lang.LoadFile("same.hcl", []byte(b.String()))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := testsrc.Stored(t, m.Workflows[0].Graph)
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	a := &expr.Activation{Input: map[string]any{"limit": 10.0}}
	before := expr.CheckRuns.Load()
	for _, s := range g.Steps {
		if v, err := p.Eval(context.Background(), s.When, a); err != nil || v != true {
			t.Fatalf("step %s: when = %v, %v", s.Name, v, err)
		}
	}
	if runs := expr.CheckRuns.Load() - before; runs > 2 {
		t.Errorf("%d steps with the same when checked it %d times, want once", n, runs)
	}
}
