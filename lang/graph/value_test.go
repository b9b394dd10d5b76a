package graph

import (
	"strings"
	"testing"
)

func TestCheckValue(t *testing.T) {
	t.Parallel()
	obj := ObjectOf(map[string]*Type{"city": TypeString})
	cases := []struct {
		t    *Type
		v    any
		want string // "" for no error
	}{
		{TypeString, "x", ""},
		{TypeString, 5.0, "amount must be a string, got a number"},
		{TypeNumber, 1.5, ""},
		{TypeInt, 1.5, "amount must be a whole number, got 1.5"},
		{ListOf(TypeNumber), []any{1.0, "two"}, "amount[1] must be a number, got a string"},
		{MapOf(TypeBool), map[string]any{"a": true, "b": 1.0}, "amount.b must be a bool, got a number"},
		{obj, map[string]any{}, `amount is missing the field "city"`},
		{obj, map[string]any{"city": "Oslo"}, ""},
		// An extra field is an error, like a missing one (language.md §3).
		{obj, map[string]any{"city": "Oslo", "extra": 1.0}, `amount has the field "extra", which is not part of object({city = string})`},
		{obj, map[string]any{"cty": "Oslo"}, `amount has the field "cty", which is not part of object({city = string}); did you mean "city"?`},
		{obj, map[string]any{"zip": "0150"}, `amount is missing the field "city"`},
		// ... at any depth: in lists, maps and objects.
		{ListOf(obj), []any{map[string]any{"city": "Oslo"}, map[string]any{"city": "Bergen", "x": true}}, `amount[1] has the field "x", which is not part of object({city = string})`},
		{MapOf(obj), map[string]any{"home": map[string]any{"city": "Oslo", "x": nil}}, `amount.home has the field "x"`},
		{ObjectOf(map[string]*Type{"address": obj}), map[string]any{"address": map[string]any{"city": "Oslo", "street": "x"}}, `amount.address has the field "street"`},
		{ObjectOf(map[string]*Type{"meta": TypeAny}), map[string]any{"meta": map[string]any{"anything": 1.0}}, ""},
		{TypeAny, map[string]any{"x": nil}, ""},
	}
	for _, c := range cases {
		err := CheckValue(c.t, c.v, "amount")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckValue(%s, %v) = %v, want nil", c.t, c.v, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckValue(%s, %v) = %v, want %q", c.t, c.v, err, c.want)
		}
	}
}
