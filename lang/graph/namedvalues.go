package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// NamedValues are a set action's values, sorted by name, each name once.
// Their JSON is an object, byte for byte what encoding/json writes for a
// map[string]*Value (keys sorted), so stored graphs and their hashes are
// the same as when the IR held a map. A slice holds one value in 24 bytes
// where a map held about 250: the values of set steps were two fifths of
// the memory of a decoded chain of set steps.
type NamedValues []NamedValue

// NamedValue is one value of a set action.
type NamedValue struct {
	Name  string
	Value *Value
}

func (nv NamedValues) find(name string) (int, bool) {
	return slices.BinarySearchFunc(nv, name, func(e NamedValue, n string) int { return strings.Compare(e.Name, n) })
}

// Get returns the value named name, or nil.
func (nv NamedValues) Get(name string) *Value {
	if i, ok := nv.find(name); ok {
		return nv[i].Value
	}
	return nil
}

// Put sets the value named name, keeping the order.
func (nv *NamedValues) Put(name string, v *Value) {
	i, ok := nv.find(name)
	if ok {
		(*nv)[i].Value = v
		return
	}
	*nv = slices.Insert(*nv, i, NamedValue{Name: name, Value: v})
}

// Names returns the names in order.
func (nv NamedValues) Names() []string {
	out := make([]string, len(nv))
	for i, e := range nv {
		out[i] = e.Name
	}
	return out
}

// asMap is the map the JSON of nv is written from and read into.
func (nv NamedValues) asMap() map[string]*Value {
	if nv == nil {
		return nil
	}
	m := make(map[string]*Value, len(nv))
	for _, e := range nv {
		m[e.Name] = e.Value
	}
	return m
}

// NamedValuesOf returns the values of m in name order (nil for nil).
func NamedValuesOf(m map[string]*Value) NamedValues {
	if m == nil {
		return nil
	}
	nv := make(NamedValues, 0, len(m))
	for name, v := range m {
		nv = append(nv, NamedValue{Name: name, Value: v})
	}
	slices.SortFunc(nv, func(a, b NamedValue) int { return strings.Compare(a.Name, b.Name) })
	return nv
}

// MarshalJSON writes the object a map of the values gives (null for nil),
// without HTML escaping, as the canonical encoding does.
func (nv NamedValues) MarshalJSON() ([]byte, error) {
	return encMarshal(nv.asMap())
}

// UnmarshalJSON reads an object as encoding/json reads it into a map (a
// repeated name: the last one; null: nil), strictly: a value with a field
// the IR does not have is an error, as everywhere in a stored graph.
func (nv *NamedValues) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m map[string]*Value
	if err := dec.Decode(&m); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &json.SyntaxError{}
	}
	*nv = NamedValuesOf(m)
	return nil
}
