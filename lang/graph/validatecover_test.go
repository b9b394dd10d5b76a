package graph_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// TestValidateReachesEveryValue: ValidateGraph checks the form of every
// value, expression and type a graph holds, whatever field holds it. For
// each field of the IR holding a *Value, *Expr or *Type (and the elements
// of a value's list and object), a malformed one is planted where the
// stored corpus has one, and ValidateGraph must report it. A field the
// validator's walk forgets fails here.
func TestValidateReachesEveryValue(t *testing.T) {
	plants := map[reflect.Type]struct {
		bad  func() reflect.Value
		want string
	}{
		reflect.TypeFor[*graph.Value](): {func() reflect.Value { return reflect.ValueOf(&graph.Value{Type: graph.TypeAny}) }, "it holds 0"},
		reflect.TypeFor[*graph.Expr]():  {func() reflect.Value { return reflect.ValueOf(&graph.Expr{CEL: " ", Type: graph.TypeBool}) }, "the expression is empty"},
		reflect.TypeFor[*graph.Type]():  {func() reflect.Value { return reflect.ValueOf(&graph.Type{Kind: "bogus"}) }, `type kind "bogus" is not known`},
	}
	gen, _ := irTypes(t)
	want := map[string]bool{"Value.List[]": true, "Value.Object{}": true, "NamedValue.Value": true}
	for name, ty := range gen {
		for _, f := range ty.Fields {
			if f.Type == "*Value" || f.Type == "*Expr" || f.Type == "*Type" {
				want[name+"."+f.Name] = true
			}
		}
	}
	planted := map[string]bool{}
	corpus := storedCorpus(t)
	for _, gname := range slices.Sorted(maps.Keys(corpus)) {
		g := corpus[gname]
		if err := graph.ValidateGraph(g); err != nil {
			t.Fatalf("%s is not valid: %v", gname, err)
		}
		// try plants a malformed value at site (once per site), through set.
		try := func(site string, cur reflect.Value, set func(reflect.Value)) {
			p, ok := plants[cur.Type()]
			if !ok || cur.IsNil() || planted[site] {
				return
			}
			planted[site] = true
			set(p.bad())
			err := graph.ValidateGraph(g)
			set(cur)
			if err == nil || !strings.Contains(err.Error(), p.want) {
				t.Errorf("%s: a malformed %s in %s is not reported (%v)", gname, cur.Type().Elem().Name(), site, err)
			}
		}
		var walk func(v reflect.Value)
		walk = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.Pointer:
				if !v.IsNil() && v.Type() != reflect.TypeFor[*graph.Type]() {
					walk(v.Elem())
				}
			case reflect.Slice:
				for i := range v.Len() {
					e := v.Index(i)
					if v.Type() == reflect.TypeFor[[]*graph.Value]() {
						try("Value.List[]", e, func(x reflect.Value) { e.Set(x) })
					}
					walk(e)
				}
			case reflect.Map:
				for _, k := range v.MapKeys() {
					e := v.MapIndex(k)
					if v.Type() == reflect.TypeFor[map[string]*graph.Value]() {
						try("Value.Object{}", e, func(x reflect.Value) { v.SetMapIndex(k, x) })
					}
					walk(e)
				}
			case reflect.Struct:
				for i := range v.NumField() {
					sf := v.Type().Field(i)
					if !sf.IsExported() {
						continue
					}
					fv := v.Field(i)
					if fv.Kind() == reflect.Pointer && fv.CanSet() {
						try(v.Type().Name()+"."+sf.Name, fv, func(x reflect.Value) { fv.Set(x) })
					}
					walk(fv)
				}
			}
		}
		walk(reflect.ValueOf(g))
	}
	for site := range want {
		if !planted[site] {
			t.Errorf("%s: the corpus holds none, so the validator's reach there is not checked", site)
		}
	}
}
