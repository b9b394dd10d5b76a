package lang

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// objectTypePrefix starts the CEL name of every flowrun object type. The
// prefix keeps the names out of the way of the variables (a type named
// "input" would shadow the variable input).
const objectTypePrefix = "flowrun.object_"

// objectTypes maps flowrun object types to CEL object types and back, and is
// the types.Provider that gives CEL static field checking on them, the way
// the Kubernetes apiserver declares its schema types (DeclType): an object
// type is a named CEL struct type whose fields the provider lists, while the
// values bound at run time stay plain map[string]any, whose field selection
// the interpreter does as a map lookup.
//
// Object types are named by a hash of their structure, so two objects of the
// same shape are the same CEL type and compare with ==.
//
// An objectTypes is filled while a scope's environment is built and is
// read-only afterwards, so it is safe for concurrent use by the checker and
// the interpreter.
type objectTypes struct {
	base  types.Provider
	byCEL map[string]*Type
}

func newObjectTypes(base types.Provider) *objectTypes {
	return &objectTypes{base: base, byCEL: map[string]*Type{}}
}

// celName returns the CEL type name of an object type.
func celName(t *Type) string {
	sum := sha256.Sum256([]byte(t.String()))
	return objectTypePrefix + hex.EncodeToString(sum[:8])
}

// celType returns the CEL type of t, declaring the object types it holds.
//
// number is double, int is int, any is dyn, list and map are CEL list and
// map (with string keys), and object is a declared struct type.
func (o *objectTypes) celType(t *Type) *cel.Type {
	if t == nil {
		return cel.DynType
	}
	switch t.Kind {
	case KindString:
		return cel.StringType
	case KindNumber:
		return cel.DoubleType
	case KindInt:
		return cel.IntType
	case KindBool:
		return cel.BoolType
	case KindNull:
		return cel.NullType
	case KindList:
		return cel.ListType(o.celType(t.Elem))
	case KindMap:
		return cel.MapType(cel.StringType, o.celType(t.Elem))
	case KindObject:
		name := celName(t)
		if _, ok := o.byCEL[name]; !ok {
			o.byCEL[name] = t
			for _, ft := range t.Fields {
				o.celType(ft)
			}
		}
		return cel.ObjectType(name)
	default:
		return cel.DynType
	}
}

// flowType returns the flowrun type of a checked CEL type. Types flowrun
// has no name for (timestamps, durations, type values) are any; bytes are
// string, as they are rendered.
func (o *objectTypes) flowType(t *cel.Type) *Type {
	if t == nil {
		return TypeAny
	}
	switch t.Kind() {
	case types.BoolKind:
		return TypeBool
	case types.IntKind, types.UintKind:
		return TypeInt
	case types.DoubleKind:
		return TypeNumber
	case types.StringKind, types.BytesKind:
		return TypeString
	case types.NullTypeKind:
		return TypeNull
	case types.ListKind:
		return ListOf(o.flowType(t.Parameters()[0]))
	case types.MapKind:
		return MapOf(o.flowType(t.Parameters()[1]))
	case types.StructKind:
		if ft, ok := o.byCEL[t.TypeName()]; ok {
			return ft
		}
		return TypeAny
	default:
		return TypeAny
	}
}

// describeNames replaces CEL type names in a checker message with flowrun
// type names: double is number, and object types are written out.
func (o *objectTypes) describeNames(msg string) string {
	for name, t := range o.byCEL {
		msg = strings.ReplaceAll(msg, name, t.String())
	}
	msg = strings.ReplaceAll(msg, "double", "number")
	return msg
}

// EnumValue implements types.Provider.
func (o *objectTypes) EnumValue(name string) ref.Val { return o.base.EnumValue(name) }

// FindIdent implements types.Provider.
func (o *objectTypes) FindIdent(name string) (ref.Val, bool) { return o.base.FindIdent(name) }

// FindStructType implements types.Provider.
func (o *objectTypes) FindStructType(name string) (*types.Type, bool) {
	if _, ok := o.byCEL[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return o.base.FindStructType(name)
}

// FindStructFieldNames implements types.Provider.
func (o *objectTypes) FindStructFieldNames(name string) ([]string, bool) {
	if t, ok := o.byCEL[name]; ok {
		return fieldNames(t), true
	}
	return o.base.FindStructFieldNames(name)
}

// FindStructFieldType implements types.Provider. The field getters are left
// nil so that the interpreter selects fields of the bound maps by key.
func (o *objectTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if t, ok := o.byCEL[name]; ok {
		ft, ok := t.Fields[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: o.celType(ft)}, true
	}
	return o.base.FindStructFieldType(name, field)
}

// NewValue implements types.Provider. flowrun objects cannot be built by
// name in CEL; a map literal does that.
func (o *objectTypes) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if t, ok := o.byCEL[name]; ok {
		return types.NewErr("an object of type %s cannot be constructed by name; write a map literal {'field': value} instead", t)
	}
	return o.base.NewValue(name, fields)
}

// fieldNames returns an object type's field names, sorted.
func fieldNames(t *Type) []string {
	names := make([]string, 0, len(t.Fields))
	for n := range t.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// typeKey is a stable text of a type for cache keys.
func typeKey(t *Type) string {
	if t == nil {
		return "-"
	}
	return t.String()
}

// quoteList renders names for a message: `a`, `b` and `c`.
func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
