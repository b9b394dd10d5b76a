package expr_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// TestEvalConvertsOnlyWhatItReads: an expression converts the variables it
// reads and no others. A foreach body that reads item alone must not
// convert the run's inputs (a list of 10,000 items, converted once per
// item, made a foreach quadratic in its list).
func TestEvalConvertsOnlyWhatItReads(t *testing.T) {
	g, p := loadGraph(t, "fan.hcl", `workflow "fan" {
  version = "1.0.0"
  input "items" { type = list(number) }
  step "each" {
    foreach {
      items = "input.items"
    }
    set {
      v = "{{ item * 2 }}"
      w = "{{ size(input.items) + index }}"
    }
  }
}`)
	a := &expr.Activation{Input: map[string]any{"items": []any{1.0, 2.0, 3.0}}, Item: 2.0, Index: 1, InForeach: true}
	for _, c := range []struct {
		value string
		want  any
		read  []string
	}{
		{"v", 4.0, []string{"item"}},
		{"w", 4.0, []string{"input", "index"}},
	} {
		val := g.Steps[0].Action.Set.Values.Get(c.value)
		comp, err := p.Compiled(val.Template.Parts[0].Expr)
		if err != nil {
			t.Fatal(err)
		}
		lv := expr.NewLazyVars(comp, a)
		out, _, err := comp.Prg().ContextEval(context.Background(), lv)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := expr.FromCEL(out); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.value, got, c.want)
		}
		if len(lv.Done()) != len(c.read) {
			t.Errorf("%s converted %d variables %v, want only %v", c.value, len(lv.Done()), lv.Done(), c.read)
		}
		for _, name := range c.read {
			if _, ok := lv.Done()[name]; !ok {
				t.Errorf("%s did not convert %s, which it reads", c.value, name)
			}
		}
	}
}

// TestEvalInputCache: evaluations sharing a ConvCache convert the inputs
// once per type (not per evaluation), give the results they give without it, and a result is
// never the cached value itself (changing it changes no later result).
func TestEvalInputCache(t *testing.T) {
	g, p := loadGraph(t, "c.hcl", `workflow "c" {
  version = "1.0.0"
  input "items" { type = list(number) }
  input "prefix" { type = string }
  step "each" {
    foreach {
      items = "input.items"
    }
    set {
      label = "{{ input.prefix }}-{{ item }}"
      all   = "{{ input.items }}"
    }
  }
}`)
	in := map[string]any{"items": []any{1.0, 2.0, 3.0}, "prefix": "p"}
	cache := expr.NewConvCache()
	ctx := context.Background()
	label, all := g.Steps[0].Action.Set.Values.Get("label"), g.Steps[0].Action.Set.Values.Get("all")
	for i, item := range []any{1.0, 2.0, 3.0} {
		for _, c := range []*expr.ConvCache{nil, cache} {
			a := &expr.Activation{Input: in, Item: item, Index: i, InForeach: true, Cache: c}
			got, err := p.EvalValue(ctx, label, a)
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("p-%v", item); got != want {
				t.Fatalf("label = %v, want %v (cache %v)", got, want, c != nil)
			}
			list, err := p.EvalValue(ctx, all, a)
			if err != nil {
				t.Fatal(err)
			}
			l := list.([]any)
			if len(l) != 3 || l[0] != 1.0 {
				t.Fatalf("all = %v, want the input list (cache %v)", list, c != nil)
			}
			l[0] = "changed" // must not reach the cache
		}
	}
	// One conversion for the two expressions, whose scopes declare equal
	// input types, not one per evaluation (six here).
	if n := len(cache.Input()); n != 1 {
		t.Fatalf("the cache holds %d conversions of the inputs, want 1", n)
	}
}

// TestEvalStepOutputCache: evaluations sharing a ConvCache convert a large
// step output once per value (a foreach body that indexes it costs the
// items, not items × its length), convert a new result of the step again,
// never cache a small output, and give the results they give without it.
func TestEvalStepOutputCache(t *testing.T) {
	g, p := loadGraph(t, "c.hcl", `workflow "c" {
  version = "1.0.0"
  step "src" {
    set { list = [0, 1, 2] }
  }
  step "each" {
    foreach {
      items = "steps.src.output.list"
    }
    set { v = "{{ steps.src.output.list[index] * 10 }}" }
  }
}`)
	v := g.Steps[1].Action.Set.Values.Get("v")
	ctx := context.Background()
	eval := func(c *expr.ConvCache, out map[string]any, i int) any {
		t.Helper()
		a := &expr.Activation{Steps: map[string]expr.StepResult{"src": {Status: "completed", Output: out}}, Index: i, InForeach: true, Cache: c}
		got, err := p.EvalValue(ctx, v, a)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	big := func(base float64) map[string]any {
		l := make([]any, 100)
		for i := range l {
			l[i] = base + float64(i)
		}
		return map[string]any{"list": l}
	}
	cache := expr.NewConvCache()
	first := big(0)
	for i := range 100 {
		if got, want := eval(cache, first, i), eval(nil, first, i); got != want || got != float64(i*10) {
			t.Fatalf("item %d: %v with the cache, %v without, want %d", i, got, want, i*10)
		}
	}
	e := cache.Steps()["src"]
	if e == nil {
		t.Fatal("a 100-item output was not kept converted")
	}
	for i := range 100 {
		eval(cache, first, i)
		if cache.Steps()["src"] != e {
			t.Fatal("the same output was converted again")
		}
	}
	// A new result of the step (an until iteration) is a new value.
	if got := eval(cache, big(1000), 3); got != float64(10030) {
		t.Fatalf("a new output gave %v, want 10030 (the old conversion was used)", got)
	}
	if cache.Steps()["src"] == e {
		t.Fatal("a new output did not replace the kept conversion")
	}
	cache.ForgetStep("src")
	if len(cache.Steps()) != 0 {
		t.Fatal("ForgetStep kept the conversion")
	}
	// A small output is converted each time and not kept.
	small := map[string]any{"list": []any{7.0, 8.0}}
	if got := eval(cache, small, 1); got != float64(80) {
		t.Fatalf("small output gave %v, want 80", got)
	}
	if len(cache.Steps()) != 0 {
		t.Fatal("a small output was kept")
	}
}

// loadGraph compiles src (one workflow) and loads its program.
func loadGraph(t *testing.T, name, src string) (*graph.Graph, *expr.Program) {
	t.Helper()
	m, diags := lang.LoadFile(name, []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := m.Workflows[0].Graph
	p, err := expr.Load(g)
	if err != nil {
		t.Fatal(err)
	}
	return g, p
}

// TestEvalInputFunc: inputs given by Activation.InputFunc are asked for
// only by an evaluation that reads them, once per conversion the cache
// keeps, and read as Input would be.
func TestEvalInputFunc(t *testing.T) {
	g, p := loadGraph(t, "c.hcl", `workflow "c" {
  version = "1.0.0"
  input "items" { type = list(number) }
  step "each" {
    foreach {
      items = "input.items"
    }
    set {
      twice = "{{ item * 2 }}"
      first = "{{ input.items[0] + item }}"
    }
  }
}`)
	calls := 0
	load := func() map[string]any {
		calls++
		return map[string]any{"items": []any{10.0, 20.0}}
	}
	cache := expr.NewConvCache()
	ctx := context.Background()
	twice, first := g.Steps[0].Action.Set.Values.Get("twice"), g.Steps[0].Action.Set.Values.Get("first")
	for i, item := range []any{1.0, 2.0} {
		a := &expr.Activation{InputFunc: load, Item: item, Index: i, InForeach: true, Cache: cache}
		if got, err := p.EvalValue(ctx, twice, a); err != nil || got != 2*item.(float64) {
			t.Fatalf("twice = %v, %v", got, err)
		}
		if calls != 0 {
			t.Fatalf("an expression that does not read the inputs asked for them")
		}
	}
	for i, item := range []any{1.0, 2.0} {
		a := &expr.Activation{InputFunc: load, Item: item, Index: i, InForeach: true, Cache: cache}
		if got, err := p.EvalValue(ctx, first, a); err != nil || got != 10+item.(float64) {
			t.Fatalf("first = %v, %v", got, err)
		}
	}
	if calls != 1 {
		t.Fatalf("the inputs were asked for %d times, want once (the cache keeps their conversion)", calls)
	}
	a := &expr.Activation{InputFunc: load, Item: 1.0, InForeach: true}
	if got, err := p.EvalValue(ctx, first, a); err != nil || got != 11.0 || calls != 2 {
		t.Fatalf("without a cache: first = %v, %v (%d calls)", got, err, calls)
	}
}
