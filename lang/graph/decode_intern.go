package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// Decoding a stored graph with little memory.
//
// encoding/json gives every value of a stored graph its own *Type tree and
// its own copy of the short mode strings, although a long workflow repeats
// a handful of types (number, string, the object a set step outputs) and
// modes (all, fail, set) thousands of times. A worker keeps the graph of
// every run it works on for as long as it runs, so Decode makes equal types
// one shared tree and equal mode strings one string: a 10,000-step chain of
// set steps then holds about half the memory (8.5 -> 4.7 MB). Types are
// shared and never modified after decoding (as TypeString and the others
// are). Decode also reads the steps one at a time (decodeStream), so that
// its buffer holds one step rather than a copy of the whole record.

// decodeCollectBytes is the size of a stored graph (about 3,000 steps)
// from which the encoding/json path of Decode runs the collector once it is
// done (see decodeReference; the fast decoder makes little garbage).
const decodeCollectBytes = 1 << 20

// typeInterner maps a type's structure to its one shared tree.
type typeInterner struct {
	byKey map[string]*Type
	keyOf map[*Type]string // the key of every shared tree
	b     strings.Builder
}

func newTypeInterner() *typeInterner {
	in := &typeInterner{byKey: map[string]*Type{}, keyOf: map[*Type]string{}}
	for _, t := range []*Type{TypeString, TypeNumber, TypeInt, TypeBool, TypeAny, TypeNull} {
		in.byKey[string(t.Kind)] = t
		in.keyOf[t] = string(t.Kind)
	}
	return in
}

// intern returns the shared tree equal to t (t itself the first time).
func (in *typeInterner) intern(t *Type) *Type {
	if t == nil {
		return nil
	}
	if _, shared := in.keyOf[t]; shared {
		return t
	}
	if t.Elem == nil && t.Fields == nil {
		if s, ok := in.byKey[string(t.Kind)]; ok {
			return s // a scalar: number, string, ...
		}
	}
	t.Elem = in.intern(t.Elem)
	names := make([]string, 0, len(t.Fields))
	for name, f := range t.Fields {
		t.Fields[name] = in.intern(f)
		names = append(names, name)
	}
	slices.Sort(names)
	// The key names the kind and the shared trees of the children, which
	// are interned already: equal keys are equal structures.
	in.b.Reset()
	in.b.WriteString(string(t.Kind))
	if t.Elem != nil {
		in.b.WriteString("(")
		in.b.WriteString(in.keyOf[t.Elem])
		in.b.WriteString(")")
	}
	if t.Fields != nil {
		in.b.WriteString("{")
		for _, name := range names {
			// Field names are quoted: no name can fake a separator.
			in.b.WriteString(quoteKey(name))
			in.b.WriteString(":")
			in.b.WriteString(in.keyOf[t.Fields[name]])
			in.b.WriteString(",")
		}
		in.b.WriteString("}")
	}
	key := in.b.String()
	if s, ok := in.byKey[key]; ok {
		return s
	}
	in.byKey[key] = t
	in.keyOf[t] = key
	return t
}

func quoteKey(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// modeStrings are the mode and kind strings a graph repeats on every step
// (join, on_error, on_failure, the action kind), each mapped to its one
// shared copy.
var modeStrings = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"all", "any", "continue", "dead_letter", KindNone, KindSet, KindExec, KindHTTP,
		KindSleep, KindWait, KindWorkflow, KindFail, KindSwitch} {
		m[s] = s
	}
	return m
}()

// modeString returns the shared copy of a known mode or kind string, so
// that thousands of steps share it; other strings are returned as they are.
func modeString(s string) string {
	if m, ok := modeStrings[s]; ok {
		return m
	}
	return s
}

// decodeStream decodes a stored graph whose top level is an object, its
// steps one at a time: each step is put in normal form and interned as it
// is read, and the decoder's buffer holds one step, not the whole record.
// The other members are decoded strictly as a Graph of their own. It
// returns false on anything unusual (not an object, a malformed or unknown
// member, trailing data): Decode then decodes the record whole, for the
// same result or encoding/json's own error.
func decodeStream(b []byte, in *typeInterner) (*Graph, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var steps []*Step
	sawSteps := false
	// The other members, copied as they stand into an object of their own.
	head := []byte{'{'}
	norm := &encNormalizer{fix: true, normal: true}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, false
		}
		if key != "steps" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, false
			}
			name, err := json.Marshal(key)
			if err != nil {
				return nil, false
			}
			if len(head) > 1 {
				head = append(head, ',')
			}
			head = append(append(append(head, name...), ':'), raw...)
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, false // null, or not a list: the whole decode says what
		}
		sawSteps, steps = true, nil
		for dec.More() {
			var s *Step
			if err := dec.Decode(&s); err != nil {
				return nil, false
			}
			norm.step(s)
			in.step(s)
			steps = append(steps, s)
		}
		if t, err := dec.Token(); err != nil || t != json.Delim(']') {
			return nil, false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	head = append(head, '}')
	g := &Graph{}
	hd := json.NewDecoder(bytes.NewReader(head))
	hd.DisallowUnknownFields()
	if err := hd.Decode(g); err != nil || g.Steps != nil {
		return nil, false // a bad member, or steps spelled another way
	}
	if sawSteps {
		g.Steps = steps
		if g.Steps == nil {
			g.Steps = []*Step{}
		}
	}
	return g, true
}

// namedValues interns the types of named values.
func (in *typeInterner) namedValues(nv NamedValues) {
	for _, e := range nv {
		in.value(e.Value)
	}
}

// shareDependsOn: DependsOn is mostly the same list as Needs (no
// expression reads another step): one copy, capped so that an append to
// either cannot write the other.
func shareDependsOn(s *Step) {
	if len(s.DependsOn) > 0 && slices.Equal(s.DependsOn, s.Needs) {
		s.DependsOn = s.Needs[:len(s.Needs):len(s.Needs)]
	}
}
