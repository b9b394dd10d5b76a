package graph

import "reflect"

// MaxValueDepth is how deeply a value that flowrun stores may nest
// (language.md §15): a list or object counts one level, so `[[1]]` is two
// deep and a scalar none. It bounds the values that come from outside a
// workflow (a program's stdout and an http body parsed as JSON, signal
// data, run inputs) and the values a step computes (a set attribute, a
// workflow output). The stored JSON of a step or a run wraps such a value
// in a few levels more, far below encoding/json's own limit of 10,000,
// past which a value could be written but not read back.
const MaxValueDepth = 1000

// JSONDepthOver returns the offset in data (JSON text, valid or not) of the
// first [ or { that opens a level deeper than limit, or -1. Strings are
// skipped, escapes included; nothing is allocated.
func JSONDepthOver(data []byte, limit int) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			if depth > limit {
				return i
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return -1
}

// ValueTooDeep reports whether v, a JSON-like value (maps with string keys
// and slices, at any level), nests deeper than limit. It walks at most
// limit+1 levels.
func ValueTooDeep(v any, limit int) bool {
	switch x := v.(type) {
	case nil, bool, float64, string, int, int64:
		return false
	case []any:
		if limit == 0 {
			return true
		}
		for _, e := range x {
			if ValueTooDeep(e, limit-1) {
				return true
			}
		}
		return false
	case map[string]any:
		if limit == 0 {
			return true
		}
		for _, e := range x {
			if ValueTooDeep(e, limit-1) {
				return true
			}
		}
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return false
		}
		return ValueTooDeep(rv.Elem().Interface(), limit)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return false // []byte is written as a string
		}
		if limit == 0 {
			return true
		}
		for i := 0; i < rv.Len(); i++ {
			if ValueTooDeep(rv.Index(i).Interface(), limit-1) {
				return true
			}
		}
	case reflect.Map:
		if limit == 0 {
			return true
		}
		it := rv.MapRange()
		for it.Next() {
			if ValueTooDeep(it.Value().Interface(), limit-1) {
				return true
			}
		}
	}
	return false
}
