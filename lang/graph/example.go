package graph

import "sort"

// Example returns a JSON-decoded value that has type t, for hints and
// forms that show what a typed value looks like: "text" for a string, 1
// for a number, true for a bool, a one-element list, a map of one key
// ("key"), and an object with every field. CheckValue accepts it. A nil
// type or any gives an empty object.
func Example(t *Type) any {
	if t == nil {
		return map[string]any{}
	}
	switch t.Kind {
	case KindString:
		return "text"
	case KindNumber, KindInt:
		return float64(1)
	case KindBool:
		return true
	case KindNull:
		return nil
	case KindList:
		return []any{Example(t.Elem)}
	case KindMap:
		return map[string]any{"key": Example(t.Elem)}
	case KindObject:
		names := make([]string, 0, len(t.Fields))
		for n := range t.Fields {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make(map[string]any, len(names))
		for _, n := range names {
			out[n] = Example(t.Fields[n])
		}
		return out
	}
	return map[string]any{}
}
