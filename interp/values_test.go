package interp

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// roundTrip is what normalizeJSON did for every non-scalar: encode and
// decode.
func roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// TestNormalizeJSONFastPath: a value already in decoded form is returned
// as it is, and equals what the round trip gives; anything else takes the
// round trip.
func TestNormalizeJSONFastPath(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	cases := []struct {
		name   string
		v      any
		shaped bool
	}{
		{"exec output", map[string]any{"exit_code": 0.0, "stdout": "ok\n", "stderr": "", "json": nil}, true},
		{"nested", map[string]any{"a": []any{1.5, "x", true, nil, map[string]any{"b": math.Copysign(0, -1)}}}, true},
		{"int", map[string]any{"exit_code": 0}, false},
		{"invalid utf-8 value", map[string]any{"stdout": "a\xffb"}, false},
		{"invalid utf-8 key", map[string]any{"k\xfe": "v"}, false},
		{"NaN", []any{math.NaN()}, false},
		{"struct", []any{struct{ A int }{1}}, false},
		{"typed slice", map[string]any{"l": []string{"a"}}, false},
		{"cyclic", cyclic, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonShaped(tc.v, 0); got != tc.shaped {
				t.Fatalf("jsonShaped = %v, want %v", got, tc.shaped)
			}
			if tc.name == "cyclic" || tc.name == "NaN" {
				return // not encodable: both ways return the value itself
			}
			got := normalizeJSON(tc.v)
			if want := roundTrip(tc.v); !reflect.DeepEqual(got, want) {
				t.Fatalf("normalizeJSON = %#v, the round trip gives %#v", got, want)
			}
		})
	}
}
