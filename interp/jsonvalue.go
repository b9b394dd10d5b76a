package interp

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// appendValueJSON appends the JSON of v exactly as json.Marshal writes it
// (keys sorted, HTML characters escaped), for the values the engine
// stores most: nil, bools, finite floats, integers, strings and []any and
// map[string]any of them. It reports false, having appended a part or
// nothing, for anything else; mustJSON then leaves the whole value to
// encoding/json, whose map encoding goes through reflection for every key
// and value.
func appendValueJSON(b []byte, v any, depth int) ([]byte, bool) {
	if depth > jsonShapedDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return appendFloatJSON(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	case string:
		return appendStringJSON(b, x), true
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendValueJSON(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if len(x) == 0 {
			return append(b, "{}"...), true
		}
		var small [16]string
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendStringJSON(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendValueJSON(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendFloatJSON formats f as encoding/json does: the shortest text,
// with an exponent below 1e-6 and from 1e21 on (e-07 written e-7). NaN
// and the infinities have no JSON.
func appendFloatJSON(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendStringJSON appends s quoted as json.Marshal quotes it. Text of
// printable ASCII without a quote, a backslash or an HTML character is
// copied; anything else is left to encoding/json.
func appendStringJSON(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
