package lang

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

func TestCompileChain(t *testing.T) {
	m, diags := LoadFile("big.hcl", testsrc.Chain(50))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := m.Workflows[0].Graph
	if len(g.Steps) != 50 || g.Steps[49].Name != "s49" {
		t.Fatalf("steps %d", len(g.Steps))
	}
	if got := g.Steps[49].Needs; len(got) != 1 || got[0] != "s48" {
		t.Fatalf("needs %v", got)
	}
}

// BenchmarkCompile1000Steps compiles a 1,000-step workflow with CEL in
// every step (a when and a template reading the previous step).
//
// cpu-ms/op is the processor time of the whole process per compile (all
// goroutines, the collector's included): unlike ns/op, it does not depend
// on whether the other processor was free.
func BenchmarkCompile1000Steps(b *testing.B) {
	src := testsrc.Chain(1000)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	cpu := testsrc.ProcessCPU()
	for i := 0; i < b.N; i++ {
		_, diags := LoadFile("big.hcl", src)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
	}
	testsrc.ReportCPU(b, cpu)
}

// storedGraph compiles testsrc.Chain(n) and returns its graph as stored:
// through JSON, so that Load sees fresh pointers and types.
func storedGraph(tb testing.TB, n int) *graph.Graph {
	tb.Helper()
	m, diags := LoadFile("big.hcl", testsrc.Chain(n))
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	return testsrc.Stored(tb, m.Workflows[0].Graph)
}

func benchmarkLoad(b *testing.B, n int) {
	g := storedGraph(b, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := expr.Load(g); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad1000Steps loads (indexes the expressions of) the stored
// graph of a 1,000-step chain, as resuming a run does.
func BenchmarkLoad1000Steps(b *testing.B) { benchmarkLoad(b, 1000) }

// BenchmarkLoad10000Steps is BenchmarkLoad1000Steps with 10,000 steps: Load
// must scale linearly.
func BenchmarkLoad10000Steps(b *testing.B) { benchmarkLoad(b, 10000) }

// BenchmarkResume10000Steps is what resuming a run of a 10,000-step graph
// costs lang: Load, then the first evaluation of the last step's when and
// data (which compiles them).
func BenchmarkResume10000Steps(b *testing.B) {
	g := storedGraph(b, 10000)
	last := g.Steps[len(g.Steps)-1]
	a := &expr.Activation{Input: map[string]any{"limit": 1e9}, Steps: map[string]expr.StepResult{
		g.Steps[len(g.Steps)-2].Name: {Status: "completed", Attempts: 1, Output: map[string]any{"n": 1.0, "label": "x"}},
	}}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := expr.Load(g)
		if err != nil {
			b.Fatal(err)
		}
		if v, err := p.Eval(ctx, last.When, a); err != nil || v != true {
			b.Fatal(v, err)
		}
		if v, err := p.EvalValue(ctx, last.Action.Set.Values.Get("n"), a); err != nil || v != 2.0 {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkCompile1000StepsCold is BenchmarkCompile1000Steps with the
// process-wide cache of scope environments emptied before each compile, as
// in a process that compiles one workflow.
func BenchmarkCompile1000StepsCold(b *testing.B) {
	src := testsrc.Chain(1000)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		expr.ResetEnvCache()
		_, diags := LoadFile("big.hcl", src)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

// BenchmarkLoadEvalAll1000Steps loads the stored graph of a 1,000-step
// chain and evaluates every step's when and data once: what a whole run
// costs lang in compiling, spread over its steps.
func BenchmarkLoadEvalAll1000Steps(b *testing.B) {
	g := storedGraph(b, 1000)
	a := &expr.Activation{Input: map[string]any{"limit": 1e9}, Steps: map[string]expr.StepResult{}}
	for _, s := range g.Steps {
		a.Steps[s.Name] = expr.StepResult{Status: "completed", Attempts: 1, Output: map[string]any{"n": 1.0, "label": "x"}}
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := expr.Load(g)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range g.Steps[1:] {
			if _, err := p.Eval(ctx, s.When, a); err != nil {
				b.Fatal(err)
			}
			if _, err := p.EvalValue(ctx, s.Action.Set.Values.Get("n"), a); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestParallelDecodeSameGraph checks that decoding a large workflow's steps
// in parallel gives the graph, hash and diagnostics of decoding them one by
// one.
func TestParallelDecodeSameGraph(t *testing.T) {
	src := testsrc.Chain(400)
	bad := []byte(strings.Replace(strings.Replace(string(src), "steps.s17.output.n < input.limit", "steps.s17.output.n <", 1),
		"n = \"{{ steps.s300.output.n + 1 }}\"", "n = \"{{ steps.nope.output }}\"", 1))
	// Type errors and unknown names in whens, which are checked while the
	// steps are built and again after.
	badWhen := []byte(strings.Replace(strings.Replace(strings.Replace(string(src),
		"steps.s30.output.n < input.limit", "steps.s30.output.label < 1", 1),
		"steps.s200.output.n < input.limit", "steps.nope.output.n < input.limit", 1),
		"steps.s350.output.n < input.limit", "steps.s349.output.m < input.limit", 1))
	var sources []*SourceMap
	compile := func(src []byte) (string, string) {
		m, diags := LoadFile("big.hcl", src)
		var hash string
		if len(m.Workflows) == 1 && m.Workflows[0].Graph != nil {
			h, err := graph.Hash(m.Workflows[0].Graph)
			if err != nil {
				t.Fatal(err)
			}
			hash = h
		}
		for _, w := range m.Workflows {
			sources = append(sources, w.Sources)
		}
		var all []string
		for _, d := range diags {
			all = append(all, d.Error())
		}
		return hash, strings.Join(all, "\n")
	}
	saved, savedMin := graph.ParallelStepDecode, parallelParseMin
	defer func() { graph.ParallelStepDecode, parallelParseMin = saved, savedMin }()
	// A step declared twice (the second is not decoded), and a step block
	// with two labels.
	dup := []byte(strings.Replace(strings.Replace(string(src), "step \"s251\" {", "step \"s250\" {", 1),
		"step \"s99\" {", "step \"s99\" \"x\" {", 1))
	for _, in := range [][]byte{src, bad, badWhen, dup} {
		// One goroutine parses and decodes; goroutines decode;
		// goroutines parse (parseConfig) and decode.
		var hashes, diags []string
		sources = nil
		for _, config := range []struct{ decode, parse int }{{1 << 30, 1 << 30}, {2, 1 << 30}, {2, 0}} {
			graph.ParallelStepDecode, parallelParseMin = config.decode, config.parse
			h, d := compile(in)
			hashes, diags = append(hashes, h), append(diags, d)
		}
		for i := 1; i < len(hashes); i++ {
			if hashes[i] != hashes[0] || diags[i] != diags[0] || !reflect.DeepEqual(sources[i], sources[0]) {
				t.Errorf("decode %d differs:\nhash %q vs %q\ndiags %q\nvs    %q", i, hashes[i], hashes[0], diags[i], diags[0])
			}
		}
	}
	if h, d := compile(src); h == "" || d != "" {
		t.Errorf("valid source: hash %q diags %q", h, d)
	}
	if _, d := compile(bad); !strings.Contains(d, "big.hcl") || !strings.Contains(d, "nope") {
		t.Errorf("invalid source: diags %q", d)
	}
	if _, d := compile(badWhen); strings.Count(d, "big.hcl") != 3 || !strings.Contains(d, "nope") || !strings.Contains(d, "label") {
		t.Errorf("invalid whens: diags %q", d)
	}
}

// BenchmarkHCLParse1000Steps parses the source of BenchmarkCompile1000Steps
// with hclsyntax only: a fixed reference against which the compile figures
// are given as ratios on a shared, noisy machine.
func BenchmarkHCLParse1000Steps(b *testing.B) {
	src := testsrc.Chain(1000)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	cpu := testsrc.ProcessCPU()
	for i := 0; i < b.N; i++ {
		if _, diags := hclsyntax.ParseConfig(src, "big.hcl", hcl.InitialPos); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
	testsrc.ReportCPU(b, cpu)
}
