package interp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/flowrun/flowrun/lang/graph"
)

// InputError is a bad run input: unknown, missing, or of the wrong type.
// The CLI exits 2 on it without writing to the store.
type InputError struct {
	Workflow string
	Input    string
	Problem  string // what is wrong and how to fix it
}

func (e *InputError) Error() string {
	return fmt.Sprintf("workflow %q input %q: %s", e.Workflow, e.Input, e.Problem)
}

// checkInputs validates given inputs against the graph's declarations and
// returns the complete inputs with defaults applied. A string given for an
// input that is not a string is parsed as JSON, so `--input amount=10`
// works for a number input.
func checkInputs(g *graph.Graph, given map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(g.Inputs))
	declared := make(map[string]*graph.Input, len(g.Inputs))
	for i := range g.Inputs {
		declared[g.Inputs[i].Name] = &g.Inputs[i]
	}
	names := make([]string, 0, len(given))
	for n := range given {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		in := declared[n]
		if in == nil {
			known := make([]string, 0, len(g.Inputs))
			for _, d := range g.Inputs {
				known = append(known, d.Name)
			}
			hint := "this workflow declares no inputs; remove it"
			if len(known) > 0 {
				hint = "the declared inputs are " + strings.Join(known, ", ") + "; check the spelling or add an input block for it"
			}
			return nil, &InputError{g.Workflow, n, "is not declared: " + hint}
		}
		v := normalizeJSON(given[n])
		if s, ok := v.(string); ok && in.Type != nil && in.Type.Kind != graph.KindString && in.Type.Kind != graph.KindAny {
			var parsed any
			if err := graph.UnmarshalJSON([]byte(s), &parsed); err == nil {
				v = parsed
			}
		}
		if graph.ValueTooDeep(v, graph.MaxValueDepth) {
			return nil, &InputError{g.Workflow, n, fmt.Sprintf("nests deeper than %d levels of lists and objects, the most a stored value may; flatten it", graph.MaxValueDepth)}
		}
		if err := graph.CheckValue(in.Type, v, n); err != nil {
			return nil, &InputError{g.Workflow, n, fmt.Sprintf("%s; give a value of type %s", err, in.Type)}
		}
		out[n] = v
	}
	for _, in := range g.Inputs {
		if _, ok := out[in.Name]; ok {
			continue
		}
		if in.Default == nil {
			return nil, &InputError{g.Workflow, in.Name, fmt.Sprintf("is required and was not given; pass it with --input %s=VALUE (type %s)", in.Name, in.Type)}
		}
		var v any
		if err := graph.UnmarshalJSON(in.Default, &v); err != nil {
			return nil, fmt.Errorf("workflow %q input %q: the stored default is not JSON: %w", g.Workflow, in.Name, err)
		}
		out[in.Name] = v
	}
	return out, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return "a bool"
	case int64, uint64:
		return "a whole number"
	case float64:
		if x == math.Trunc(x) {
			return "a whole number"
		}
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

// normalizeJSON turns any Go value into the JSON-decoded form (float64
// numbers, []any, map[string]any) by a round trip through encoding/json.
func normalizeJSON(v any) any {
	if jsonShaped(v, 0) {
		return v // the round trip would return an equal value
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := graph.UnmarshalJSON(b, &out); err != nil {
		return v
	}
	return out
}

// jsonShapedDepth bounds jsonShaped's walk (a deeper value, or a cyclic
// one, takes the round trip).
const jsonShapedDepth = 64

// jsonShaped reports whether v is already what decoding its JSON gives
// back: nil, bools, finite float64s, valid UTF-8 strings, []any and
// map[string]any of them. Such a value survives the round trip unchanged
// (encoding/json would replace invalid UTF-8, and cannot encode NaN).
func jsonShaped(v any, depth int) bool {
	if depth > jsonShapedDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case int64:
		return x > 1<<53 || x < -(1<<53) // exact past a float64's reach
	case uint64:
		return x > math.MaxInt64
	case string:
		return utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if !jsonShaped(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !jsonShaped(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// decodeJSON decodes stored JSON; nil or "null" is nil.
func decodeJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	var v any
	if err := graph.UnmarshalJSON(b, &v); err != nil {
		return nil
	}
	return v
}

// decodeMap decodes a stored JSON object; anything else is nil.
func decodeMap(b json.RawMessage) map[string]any {
	m, _ := decodeJSON(b).(map[string]any)
	return m
}

// inputsKey is the default run key: the first 16 hex digits of the
// SHA-256 of the canonical inputs JSON (defaults applied; encoding/json
// sorts object keys and writes no spaces), language.md §2.
func inputsKey(inputs map[string]any) string {
	b := mustJSON(inputs)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// keyString renders a key expression's value as the run key.
func keyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	return string(mustJSON(normalizeJSON(v)))
}
