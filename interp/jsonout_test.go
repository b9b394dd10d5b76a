package interp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

// depthOf is the nesting of a decoded JSON value: a list or object counts
// one level, a scalar none.
func depthOf(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

func nested(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func TestParseOutputJSON(t *testing.T) {
	limit := graph.MaxValueDepth
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"empty", "  \n", false},
		{"object", ` {"a": [1, {"b": null}]} ` + "\n", true},
		{"not JSON", "done\n", false},
		{"two values", "1 2", false},
		{"lists at the limit", nested("[", "", "]", limit), true},
		{"lists past the limit", nested("[", "", "]", limit+1), false},
		{"objects past the limit", nested(`{"a":`, "1", "}", limit+1), false},
		{"past encoding/json's own limit", nested("[", "", "]", 10001), false},
		{"brackets in strings do not count", `["` + strings.Repeat("[{", 5000) + `"]`, true},
		{"an escaped quote does not end a string", `["\"` + strings.Repeat("[", 5000) + `"]`, true},
	}
	for _, c := range cases {
		v, ok := parseOutputJSON([]byte(c.in))
		if ok != c.ok {
			t.Errorf("%s: ok = %v, want %v", c.name, ok, c.ok)
			continue
		}
		if !ok && v != nil {
			t.Errorf("%s: not ok but a value", c.name)
		}
	}
}

// FuzzParseOutputJSON checks the decoding of program output and http
// bodies into exec's json and http's body: it never panics, it agrees with
// encoding/json on every text within the depth limit, it refuses every
// text past it, and what it returns can be stored and read back inside a
// step's output, inside show --json's layout (the values at most
// lang.MaxValueDepth levels, far below encoding/json's 10,000).
func FuzzParseOutputJSON(f *testing.F) {
	limit := graph.MaxValueDepth
	for _, s := range []string{
		"", "null", " 42 \n", `"text"`, `{"a": [1, 2, {"b": "c"}]}`, "[1,", "{} {}", "not json",
		`["\\", "\"[[[", {"k]": "{"}]`,
		nested("[", "", "]", limit-1), nested("[", "", "]", limit), nested("[", "", "]", limit+1),
		nested(`{"a":`, "1", "}", limit), nested(`{"a":`, "1", "}", limit+1),
		nested("[", "", "]", 9998), nested("[", "", "]", 10000), nested("[", "", "]", 10001),
		nested("[", "", "", 20000), nested("[{\"x\":", "0", "}]", 600),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := parseOutputJSON(data)
		trimmed := bytes.TrimSpace(data)
		over := graph.JSONDepthOver(trimmed, limit) >= 0
		var ref any
		refOK := len(trimmed) > 0 && json.Unmarshal(trimmed, &ref) == nil
		switch {
		case over && ok:
			t.Fatalf("parsed a text nested deeper than %d levels", limit)
		case !over && ok != refOK:
			t.Fatalf("ok = %v, encoding/json says %v", ok, refOK)
		case !ok && v != nil:
			t.Fatalf("not ok, but returned %v", v)
		}
		if !ok {
			return
		}
		if d := depthOf(v); d > limit {
			t.Fatalf("the value nests %d levels", d)
		}
		// Stored in a step's output, within show --json's layout
		// (run, steps, NAME, items, [i], output): it reads back.
		stored := mustJSON(map[string]any{"steps": map[string]any{"s": map[string]any{"items": []any{
			map[string]any{"output": map[string]any{"stdout": string(data), "json": v}}}}}})
		var back any
		if err := json.Unmarshal(stored, &back); err != nil {
			t.Fatalf("the stored output does not read back: %v", err)
		}
	})
}
