package graph

import (
	"strings"
	"testing"
)

func TestJSONDepthOver(t *testing.T) {
	cases := []struct {
		in    string
		limit int
		want  int
	}{
		{`1`, 0, -1},
		{`[]`, 0, 0},
		{`[]`, 1, -1},
		{`{"a": [1, {"b": []}]}`, 4, -1},
		{`{"a": [1, {"b": []}]}`, 3, 16},
		{`{"a": [1, {"b": []}]}`, 2, 10},
		{`["[[[[", "\"[[[["]`, 1, -1},
		{`[[]] [[]]`, 2, -1}, // siblings do not add up
		{strings.Repeat("[", 5), 4, 4},
	}
	for _, c := range cases {
		if got := JSONDepthOver([]byte(c.in), c.limit); got != c.want {
			t.Errorf("JSONDepthOver(%q, %d) = %d, want %d", c.in, c.limit, got, c.want)
		}
	}
}

func TestValueTooDeep(t *testing.T) {
	var v any = "x"
	for range 10 {
		v = []any{v}
	}
	if ValueTooDeep(v, 10) || !ValueTooDeep(v, 9) {
		t.Errorf("a value of 10 lists: wrong answer at limits 10 and 9")
	}
	m := map[string]any{"a": map[string]any{"b": []string{"c"}}}
	if ValueTooDeep(m, 3) || !ValueTooDeep(m, 2) {
		t.Errorf("a map of 3 levels with a typed slice: wrong answer at limits 3 and 2")
	}
}
