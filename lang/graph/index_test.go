package graph

import (
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// TestIndex: the indices by step that the engine reads are those of the
// graph's steps, built once and shared by every caller.
func TestIndex(t *testing.T) {
	a := irStep("a", irExec("true"))
	route := irStep("route", Action{Kind: KindSwitch, Switch: &SwitchAction{
		Cases:   []SwitchCase{{When: irExpr("true", TypeBool), Next: []string{"b", "c"}}, {When: irExpr("false", TypeBool), Next: []string{"b"}}},
		Default: []string{"c"},
	}}, "a")
	pick := irStep("pick", Action{Kind: KindSwitch, Switch: &SwitchAction{Default: []string{"c"}}}, "a")
	b := irStep("b", irExec("true"), "route")
	c := irStep("c", irExec("true"), "route", "pick", "gone")
	c.Foreach = &Foreach{Items: irExpr("[1]", ListOf(TypeInt)), Concurrency: 1}
	g := &Graph{Workflow: "w", Version: "1.0.0", Steps: []*Step{a, route, pick, b, c}}

	if i, ok := g.StepIndex("pick"); !ok || i != 2 {
		t.Errorf("StepIndex(pick) = %d, %v", i, ok)
	}
	if _, ok := g.StepIndex("gone"); ok {
		t.Error("StepIndex finds a step the graph does not have")
	}
	if got := g.NeedPositions(4); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("NeedPositions(c) = %v; want [1 2] (a need that is no step is left out)", got)
	}
	if got := g.NeedPositions(0); len(got) != 0 {
		t.Errorf("NeedPositions(a) = %v", got)
	}
	if got := g.SwitchesTargeting("c"); !slices.Equal(got, []string{"route", "pick"}) {
		t.Errorf("SwitchesTargeting(c) = %v; want each switch once, in graph order", got)
	}
	if got := g.SwitchesTargeting("b"); !slices.Equal(got, []string{"route"}) {
		t.Errorf("SwitchesTargeting(b) = %v", got)
	}
	if got := g.SwitchesTargeting("a"); got != nil {
		t.Errorf("SwitchesTargeting(a) = %v", got)
	}
	if !g.Expands() {
		t.Error("a graph with a foreach does not expand")
	}
	if first := g.index(); g.index() != first {
		t.Error("the index is built again")
	}
	if (&Graph{Steps: []*Step{a}}).Expands() {
		t.Error("a graph without foreach or until expands")
	}
}

// TestIndexSize: the index of a 10,000-step chain costs a few int32 a
// step. A worker keeps it next to every cached graph; a map by name and a
// slice of needs a step cost about 80 bytes a step.
func TestIndexSize(t *testing.T) {
	const n = 10000
	steps := make([]*Step, n)
	for i := range steps {
		var needs []string
		if i > 0 {
			needs = []string{"s" + strconv.Itoa(i-1)}
		}
		steps[i] = irStep("s"+strconv.Itoa(i), irExec("true"), needs...)
	}
	g := &Graph{Workflow: "w", Version: "1.0.0", Steps: steps}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g.index()
	runtime.ReadMemStats(&after)
	if per := float64(after.TotalAlloc-before.TotalAlloc) / n; per > 16 {
		t.Errorf("the index of a %d-step chain allocates %.1f bytes a step; want at most 16", n, per)
	}
	if got := after.Mallocs - before.Mallocs; got > 32 {
		t.Errorf("the index of a %d-step chain makes %d allocations; want a few, not one a step", n, got)
	}
	for _, i := range []int{0, 1, 4567, n - 1} {
		if j, ok := g.StepIndex("s" + strconv.Itoa(i)); !ok || j != i {
			t.Errorf("StepIndex(s%d) = %d, %v", i, j, ok)
		}
		want := []int32{int32(i - 1)}
		if i == 0 {
			want = nil
		}
		if got := g.NeedPositions(i); !slices.Equal(got, want) {
			t.Errorf("NeedPositions(%d) = %v; want %v", i, got, want)
		}
	}
	if _, ok := g.StepIndex("s10000"); ok {
		t.Error("StepIndex finds a step past the last")
	}
}

// BenchmarkStepIndex looks up every step of a 10,000-step chain by name,
// as a rebuild of a long run does several times over.
func BenchmarkStepIndex(b *testing.B) {
	const n = 10000
	steps := make([]*Step, n)
	for i := range steps {
		steps[i] = irStep("s"+strconv.Itoa(i), irExec("true"))
	}
	g := &Graph{Workflow: "w", Version: "1.0.0", Steps: steps}
	g.index()
	for b.Loop() {
		for _, s := range steps {
			if _, ok := g.StepIndex(s.Name); !ok {
				b.Fatal("a step is not found")
			}
		}
	}
}
