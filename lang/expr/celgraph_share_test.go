package expr

import (
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// The steps of a graph whose results have one type share one CEL type:
// a long chain declared a CEL object type (and its name, a hash of the
// type's text) per step.
func TestStepFieldsShareCELTypes(t *testing.T) {
	out := map[string]*graph.Type{
		"a": graph.ObjectOf(map[string]*graph.Type{"v": graph.TypeNumber}),
		"b": graph.ObjectOf(map[string]*graph.Type{"v": graph.TypeNumber}),
		"c": graph.ObjectOf(map[string]*graph.Type{"v": graph.TypeString}),
	}
	g := NewCelGraph(func(n string) *graph.Type { return out[n] }, func() []string { return []string{"a", "b", "c"} })
	if _, err := g.provider(); err != nil {
		t.Fatal(err)
	}
	fa, fb, fc := g.stepField(g.name, "a"), g.stepField(g.name, "b"), g.stepField(g.name, "c")
	if fa == nil || fb == nil || fc == nil {
		t.Fatal("a step field is missing")
	}
	if fa.Type != fb.Type {
		t.Error("steps a and b, of one result type, have two CEL types")
	}
	if fa.Type == fc.Type || fa.Type.String() == fc.Type.String() {
		t.Errorf("steps a and c, of different result types, share CEL type %s", fa.Type)
	}
	if again := g.stepField(g.name, "a"); again != fa {
		t.Error("a second lookup of steps.a made another field type")
	}
}
