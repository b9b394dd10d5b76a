package graph

import (
	"fmt"
	"testing"
)

// TestTypeString checks the text of types, which also names the CEL object
// types (celName) and keys the environment caches.
func TestTypeString(t *testing.T) {
	many := map[string]*Type{}
	for i := range 10 {
		many[fmt.Sprintf("f%d", 9-i)] = TypeInt
	}
	for _, c := range []struct {
		typ  *Type
		want string
	}{
		{nil, "any"},
		{TypeNumber, "number"},
		{ListOf(nil), "list(any)"},
		{MapOf(ListOf(TypeString)), "map(list(string))"},
		{ObjectOf(map[string]*Type{}), "object({})"},
		{ObjectOf(map[string]*Type{"b": TypeBool, "a": ObjectOf(map[string]*Type{"z": nil, "y": MapOf(TypeAny)})}),
			"object({a = object({y = map(any), z = any}), b = bool})"},
		{ObjectOf(many), "object({f0 = int, f1 = int, f2 = int, f3 = int, f4 = int, f5 = int, f6 = int, f7 = int, f8 = int, f9 = int})"},
	} {
		if got := c.typ.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}
