package graph

import (
	"slices"
	"strings"
)

// TypeKind names a kind of value in the flowrun type system.
type TypeKind string

// The kinds. Number is CEL's double; Int is CEL's int (exit codes, HTTP
// statuses, attempts, indexes). Workflow authors write number; the
// interpreter produces Int where a count is meant. CEL arithmetic and
// comparison accept either on each side (see spec/language.md, "Numbers").
const (
	KindString TypeKind = "string"
	KindNumber TypeKind = "number"
	KindInt    TypeKind = "int"
	KindBool   TypeKind = "bool"
	KindList   TypeKind = "list"
	KindMap    TypeKind = "map"
	KindObject TypeKind = "object"
	KindAny    TypeKind = "any"
	KindNull   TypeKind = "null"
)

// Type is a static type. List and Map have Elem; Object has Fields.
type Type struct {
	Kind   TypeKind         `json:"kind"`
	Elem   *Type            `json:"elem,omitempty"`
	Fields map[string]*Type `json:"fields,omitempty"`
}

// Common types, shared and never modified.
var (
	TypeString = &Type{Kind: KindString}
	TypeNumber = &Type{Kind: KindNumber}
	TypeInt    = &Type{Kind: KindInt}
	TypeBool   = &Type{Kind: KindBool}
	TypeAny    = &Type{Kind: KindAny}
	TypeNull   = &Type{Kind: KindNull}
)

// ListOf returns list(elem).
func ListOf(elem *Type) *Type { return &Type{Kind: KindList, Elem: elem} }

// MapOf returns map(elem).
func MapOf(elem *Type) *Type { return &Type{Kind: KindMap, Elem: elem} }

// ObjectOf returns an object type with the given fields.
func ObjectOf(fields map[string]*Type) *Type { return &Type{Kind: KindObject, Fields: fields} }

// String renders the type the way a workflow author writes it:
// list(string), object({a = number}).
func (t *Type) String() string {
	if t == nil {
		return "any"
	}
	switch t.Kind {
	case KindList, KindMap, KindObject:
		var b strings.Builder
		t.writeString(&b)
		return b.String()
	default:
		return string(t.Kind)
	}
}

// writeString writes String's text of t to b, without building the text
// of each part on its own.
func (t *Type) writeString(b *strings.Builder) {
	if t == nil {
		b.WriteString("any")
		return
	}
	switch t.Kind {
	case KindList, KindMap:
		b.WriteString(string(t.Kind))
		b.WriteByte('(')
		t.Elem.writeString(b)
		b.WriteByte(')')
	case KindObject:
		var buf [8]string
		names := buf[:0]
		for n := range t.Fields {
			names = append(names, n)
		}
		slices.Sort(names)
		b.WriteString("object({")
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
			b.WriteString(" = ")
			t.Fields[n].writeString(b)
		}
		b.WriteString("})")
	default:
		b.WriteString(string(t.Kind))
	}
}

// Equal reports whether two types are the same.
func (t *Type) Equal(u *Type) bool {
	if t == nil || u == nil {
		return t == u
	}
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case KindList, KindMap:
		return t.Elem.Equal(u.Elem)
	case KindObject:
		if len(t.Fields) != len(u.Fields) {
			return false
		}
		for n, ft := range t.Fields {
			if !ft.Equal(u.Fields[n]) {
				return false
			}
		}
	}
	return true
}

// AssignableTo reports whether a value of type t can be used where u is
// expected: any accepts everything, numbers and ints mix, and an object with
// extra fields may stand where fewer are required.
func (t *Type) AssignableTo(u *Type) bool {
	if t == nil || u == nil || u.Kind == KindAny || t.Kind == KindAny {
		return true
	}
	if t.Kind == KindNull {
		return true
	}
	if (t.Kind == KindInt || t.Kind == KindNumber) && (u.Kind == KindInt || u.Kind == KindNumber) {
		return true
	}
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case KindList, KindMap:
		return t.Elem.AssignableTo(u.Elem)
	case KindObject:
		for n, ft := range u.Fields {
			tf, ok := t.Fields[n]
			if !ok || !tf.AssignableTo(ft) {
				return false
			}
		}
	}
	return true
}
