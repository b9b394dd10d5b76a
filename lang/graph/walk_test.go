package graph_test

import (
	"reflect"
	"testing"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
)

// exprsOf returns every expression reachable from v, found by reflection.
func exprsOf(v reflect.Value, out map[*graph.Expr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if e, ok := v.Interface().(*graph.Expr); ok {
			out[e] = true
			return
		}
		if _, ok := v.Interface().(*graph.Type); ok {
			return
		}
		exprsOf(v.Elem(), out)
	case reflect.Slice:
		for i := range v.Len() {
			exprsOf(v.Index(i), out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			exprsOf(v.MapIndex(k), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				exprsOf(v.Field(i), out)
			}
		}
	}
}

// TestWalkExprs: on every graph of the stored corpus, WalkExprs visits
// every expression the graph holds (found by reflection, templates
// included), in a slot that lang/expr knows, with the step that holds it
// for a step's slot and none for the workflow's.
func TestWalkExprs(t *testing.T) {
	stepSlots := map[string]bool{expr.SlotWhen: true, expr.SlotData: true, expr.SlotUntil: true, expr.SlotItems: true,
		expr.SlotRetryWhen: true, expr.SlotCaseWhen: true, expr.SlotCatchWhen: true, expr.SlotCompensate: true, expr.SlotIdempotencyKey: true}
	graphSlots := map[string]bool{expr.SlotKey: true, expr.SlotConcurrencyKey: true, expr.SlotOutput: true, expr.SlotAlert: true,
		expr.SlotSchedule: true, expr.SlotWebhookInputs: true, expr.SlotWebhookKey: true}
	seenSlots := map[string]bool{}
	for name, g := range storedCorpus(t) {
		want := map[*graph.Expr]bool{}
		exprsOf(reflect.ValueOf(g), want)
		got := map[*graph.Expr]bool{}
		graph.WalkExprs(g, func(e *graph.Expr, s *graph.Step, slot string) {
			got[e] = true
			seenSlots[slot] = true
			switch {
			case stepSlots[slot]:
				in := map[*graph.Expr]bool{}
				if s != nil {
					exprsOf(reflect.ValueOf(s), in)
				}
				if !in[e] {
					t.Errorf("%s: %q in slot %s is not an expression of the step given (%v)", name, e.CEL, slot, s != nil)
				}
			case graphSlots[slot]:
				if s != nil {
					t.Errorf("%s: %q in the workflow's slot %s comes with step %q", name, e.CEL, slot, s.Name)
				}
			default:
				t.Errorf("%s: %q is in slot %q, which lang/expr does not know", name, e.CEL, slot)
			}
		})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: WalkExprs visits %d expressions, the graph holds %d", name, len(got), len(want))
		}
	}
	for slot := range stepSlots {
		if !seenSlots[slot] {
			t.Errorf("no expression of the corpus is in slot %s", slot)
		}
	}
	for slot := range graphSlots {
		if !seenSlots[slot] {
			t.Errorf("no expression of the corpus is in slot %s", slot)
		}
	}
}
