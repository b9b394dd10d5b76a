package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The encoder of the IR: each generated type's appendJSON (ir_gen.go)
// writes the bytes encMarshal (encoding/json without HTML escaping) writes
// for it, without reflection; the helpers below append the field types the
// generator does not write itself. Whatever they do not take the fast way
// (a string with a control character or a non-ASCII rune, a float) they
// hand to encoding/json itself, so the bytes are its bytes; an error (an
// invalid literal, a NaN) makes encFast's caller encode the whole value
// through encMarshal, which gives encoding/json's error.

// encGraph is encMarshal(g) through the generated encoder.
func encGraph(g *Graph) ([]byte, error) {
	b, err := g.appendJSON(make([]byte, 0, encSizeHint(g)))
	if err != nil {
		return encMarshal(g)
	}
	return b, nil
}

// encSizeHint estimates the length of g's encoding from that of a sample
// of its steps spread over the list (later steps of a chain have longer
// names), so that the buffer of a long graph is allocated about once
// rather than grown (and copied) by doubling, each old copy garbage.
func encSizeHint(g *Graph) int {
	const sample = 32
	n := min(len(g.Steps), sample)
	if n == 0 {
		return 1024
	}
	var b []byte
	for i := range n {
		var err error
		if b, err = g.Steps[i*len(g.Steps)/n].appendJSON(b); err != nil {
			return 1024
		}
	}
	return len(b)/n*len(g.Steps)*9/8 + 4096
}

// encBufs holds the buffers step hashes are encoded into.
var encBufs = sync.Pool{New: func() any { return new([]byte) }}

// encAppendString appends s quoted as encoding/json quotes it with HTML
// escaping off.
func encAppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return encAppendStringSlow(b, s)
		}
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', c)
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// encAppendStringSlow is encAppendString by encoding/json itself (control
// characters, invalid UTF-8, U+2028 and U+2029 are escaped as it escapes
// them).
func encAppendStringSlow(b []byte, s string) []byte {
	q, err := encMarshal(s)
	if err != nil { // a string always encodes
		panic(err)
	}
	return append(b, q...)
}

func encAppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// encAppendFloat appends f as encoding/json formats a float64 (an error
// for NaN and the infinities).
func encAppendFloat(b []byte, f float64) ([]byte, error) {
	q, err := json.Marshal(f)
	if err != nil {
		return b, err
	}
	return append(b, q...), nil
}

// encAppendStrings appends a []string (null for nil).
func encAppendStrings(b []byte, l []string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = encAppendString(b, s)
	}
	return append(b, ']')
}

// encAppendInts appends a []int (null for nil).
func encAppendInts(b []byte, l []int) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, n := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}

// errEncEmptyRaw: encoding/json refuses an empty non-nil RawMessage.
var errEncEmptyRaw = errors.New("encode graph: an empty JSON literal")

// encAppendRaw appends a literal as encoding/json writes a RawMessage:
// null for nil, else compacted (an error when it is not valid JSON).
func encAppendRaw(b []byte, m json.RawMessage) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	if len(m) == 0 {
		return b, errEncEmptyRaw
	}
	if encCanonicalScalar(m) {
		return append(b, m...), nil
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, m); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}

// encSortedKeys returns the keys of m in the order encoding/json writes
// them.
func encSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendJSON appends t as encoding/json writes a *Type: null for nil, its
// kind, its element when set and its fields (in name order) when it has
// some.
func (t *Type) appendJSON(b []byte) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = encAppendString(b, string(t.Kind))
	if t.Elem != nil {
		b = append(b, `,"elem":`...)
		b = t.Elem.appendJSON(b)
	}
	if len(t.Fields) != 0 {
		b = append(b, `,"fields":{`...)
		for i, k := range encSortedKeys(t.Fields) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(encAppendString(b, k), ':')
			b = t.Fields[k].appendJSON(b)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendJSON appends nv as its MarshalJSON writes it: the object of its
// values keyed by name (null for nil). A list not in strictly increasing
// name order (not in normal form) is written through its map, as
// MarshalJSON writes it.
func (nv NamedValues) appendJSON(b []byte) ([]byte, error) {
	if nv == nil {
		return append(b, "null"...), nil
	}
	if !slices.IsSortedFunc(nv, func(a, b NamedValue) int { return strings.Compare(a.Name, b.Name) }) || encDupNames(nv) {
		q, err := nv.MarshalJSON()
		if err != nil {
			return b, err
		}
		return append(b, q...), nil
	}
	b = append(b, '{')
	var err error
	for i, e := range nv {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(encAppendString(b, e.Name), ':')
		if b, err = e.Value.appendJSON(b); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// encDupNames reports whether a sorted list names a value twice.
func encDupNames(nv NamedValues) bool {
	for i := 1; i < len(nv); i++ {
		if nv[i].Name == nv[i-1].Name {
			return true
		}
	}
	return false
}
