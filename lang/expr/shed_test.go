package expr

import (
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// A shed template holds no syntax tree, keeps its references, and checks
// to the same template, type and diagnostics as one that kept its tree.
func TestShedTemplateChecksTheSame(t *testing.T) {
	t.Parallel()
	sc := StepScope(ctGraph(), ctStep(graph.KindExec, "fan"), SlotData)
	for _, src := range []string{
		"order {{ input.order_id }} of {{ steps.build.output.stdout }}",
		"{{ input.amount * 1.2 }}",
		"{{ steps.build.output.nope }}",
		"x {{ input.ordr }}",
		"{{ input.amount + 'a' }}",
	} {
		rng := hcl.Range{Filename: "t.hcl", Start: hcl.InitialPos, End: hcl.Pos{Line: 1, Column: len(src) + 3, Byte: len(src) + 2}}
		kept, diags := ParseTemplate(src, rng)
		if diags.HasErrors() {
			t.Fatalf("%q: %s", src, diags)
		}
		shed, _ := ParseTemplate(src, rng)
		shed.Shed()
		for _, pt := range shed.parts {
			if pt.expr != nil && pt.expr.ast != nil {
				t.Fatalf("%q: the shed template keeps a syntax tree", src)
			}
		}
		if !reflect.DeepEqual(shed.StepRefs(), kept.StepRefs()) {
			t.Errorf("%q: step refs %v, want %v", src, shed.StepRefs(), kept.StepRefs())
		}
		tm1, typ1, d1 := CheckTemplate(kept, sc)
		tm2, typ2, d2 := CheckTemplate(shed, sc)
		if !reflect.DeepEqual(tm1, tm2) || !reflect.DeepEqual(typ1, typ2) {
			t.Errorf("%q: checked %v %v, want %v %v", src, tm2, typ2, tm1, typ1)
		}
		if d1.Error() != d2.Error() || !reflect.DeepEqual(d1, d2) {
			t.Errorf("%q: diagnostics %v, want %v", src, d2, d1)
		}
	}
}
