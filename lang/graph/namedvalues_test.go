package graph

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestNamedValuesJSON: the values of a set action encode exactly as the
// map they replaced (so stored graphs and hashes did not change), decode
// as a map did (a repeated name: the last; null: nil; strict fields), and
// Get and Put keep the names sorted.
func TestNamedValuesJSON(t *testing.T) {
	m := map[string]*Value{
		"b":     {Lit: json.RawMessage(`"<a&b>"`), Type: TypeString},
		"a":     {Lit: json.RawMessage(`1`), Type: TypeNumber},
		"zé<&>": {Template: &Template{Parts: []TemplatePart{{Text: "x<y"}}}, Type: TypeString},
	}
	want, err := encMarshal(m)
	if err != nil {
		t.Fatal(err)
	}
	nv := NamedValuesOf(m)
	got, err := encMarshal(nv)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("NamedValues encode as\n%s\nwant the map's\n%s", got, want)
	}
	if names := nv.Names(); !reflect.DeepEqual(names, []string{"a", "b", "zé<&>"}) {
		t.Fatalf("names %v, want sorted", names)
	}
	var back NamedValues
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, nv) {
		t.Fatalf("decoded %v, want %v", back, nv)
	}
	if b, _ := encMarshal(NamedValues(nil)); string(b) != "null" {
		t.Fatalf("nil encodes as %s, want null (as a nil map)", b)
	}
	var n NamedValues = NamedValues{}
	if err := json.Unmarshal([]byte(`null`), &n); err != nil || n != nil {
		t.Fatalf("null decodes to %v, %v; want nil", n, err)
	}
	if err := json.Unmarshal([]byte(`{"x":{"lit":1},"x":{"lit":2}}`), &n); err != nil || len(n) != 1 || string(n.Get("x").Lit) != "2" {
		t.Fatalf("a repeated name decodes to %v, %v; want the last one", n, err)
	}
	if err := json.Unmarshal([]byte(`{"x":{"lit":1,"bogus":2}}`), &n); err == nil {
		t.Fatal("a value with an unknown field decoded; want an error")
	}

	nv.Put("c", &Value{Lit: json.RawMessage(`3`)})
	nv.Put("a", &Value{Lit: json.RawMessage(`4`)})
	if names := nv.Names(); !reflect.DeepEqual(names, []string{"a", "b", "c", "zé<&>"}) {
		t.Fatalf("after Put: names %v, want sorted", names)
	}
	if string(nv.Get("a").Lit) != "4" || string(nv.Get("c").Lit) != "3" || nv.Get("nope") != nil {
		t.Fatal("Get does not return what Put set")
	}
}

// TestNamedValuesOutOfOrder: a graph built with unsorted set values is put
// in order by normalisation, and one with a repeated name does not validate.
func TestNamedValuesOutOfOrder(t *testing.T) {
	g := irShip(t)
	s := irFind(t, g, "price")
	s.Action.Set.Values.Put("label", &Value{Lit: json.RawMessage(`"x"`), Type: TypeString})
	vals := s.Action.Set.Values // label, total
	vals[0], vals[1] = vals[1], vals[0]
	b, err := Encode(g)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := irFind(t, d, "price").Action.Set.Values.Names(); !reflect.DeepEqual(got, []string{vals[1].Name, vals[0].Name}) {
		t.Fatalf("names after a round trip %v, want sorted", got)
	}
	s.Action.Set.Values = NamedValues{vals[0], vals[0]}
	if err := ValidateGraph(g); err == nil {
		t.Fatal("a repeated set value name validated")
	}
}
