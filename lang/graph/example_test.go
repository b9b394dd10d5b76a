package graph

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExampleFitsItsType: the example of every kind of type, nested, is
// accepted by CheckValue after a JSON round trip.
func TestExampleFitsItsType(t *testing.T) {
	for _, typ := range []*Type{
		TypeString, TypeNumber, TypeInt, TypeBool, TypeNull, TypeAny,
		ListOf(TypeInt), MapOf(TypeBool),
		ObjectOf(map[string]*Type{"approved": TypeBool, "by": TypeString, "items": ListOf(ObjectOf(map[string]*Type{"n": TypeInt}))}),
	} {
		b, err := json.Marshal(Example(typ))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := CheckValue(typ, v, "data"); err != nil {
			t.Errorf("Example(%s) = %s: %v", typ, b, err)
		}
	}
}

// TestCheckValueAll: every mismatch, each with its path, bounded; the
// first is CheckValue's.
func TestCheckValueAll(t *testing.T) {
	typ := ObjectOf(map[string]*Type{"approved": TypeBool, "count": TypeInt, "tags": ListOf(TypeString), "by": TypeString})
	var v any
	if err := json.Unmarshal([]byte(`{"approved": "yes", "count": 1.5, "tags": ["a", 2, 3], "bye": "x"}`), &v); err != nil {
		t.Fatal(err)
	}
	errs := CheckValueAll(typ, v, "data", 10)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`data has the field "bye", which is not part of object({approved = bool, by = string, count = int, tags = list(string)}); did you mean "by"?`,
		`data is missing the field "by" of object({approved = bool, by = string, count = int, tags = list(string)})`,
		`data.approved must be a bool, got a string`,
		`data.count must be a whole number, got 1.5`,
		`data.tags[1] must be a string, got a number`,
		`data.tags[2] must be a string, got a number`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("CheckValueAll =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if first := CheckValue(typ, v, "data"); first == nil || first.Error() != got[0] {
		t.Errorf("CheckValue = %v, want the first of CheckValueAll", first)
	}
	if n := len(CheckValueAll(typ, v, "data", 2)); n != 2 {
		t.Errorf("CheckValueAll bounded to 2 gave %d", n)
	}
}
