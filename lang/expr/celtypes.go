package expr

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"github.com/flowrun/flowrun/lang/graph"
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
// An objectTypes of one scope is filled while the scope's environment is
// built. The objectTypes of a graph (see celgraph.go) is shared by the
// environments of all its expressions and grows as they are checked. Both
// are safe for concurrent use by the checker and the interpreter.
type objectTypes struct {
	base types.Provider

	mu    sync.RWMutex
	byCEL map[string]*graph.Type
	// What the checker asked before, by struct name and by struct name
	// and field: the checker asks for every selection.
	structs map[string]*types.Type
	fields  map[fieldKey]*types.FieldType
	// objects holds the CEL type of each object type by its name: equal
	// object types (a long chain's steps' results) share one.
	objects map[string]*cel.Type
	// graph resolves the fields of the graph-wide steps types (nil for
	// the objectTypes of one scope).
	graph *CelGraph
}

func newObjectTypes(base types.Provider) *objectTypes {
	return &objectTypes{base: base, byCEL: map[string]*graph.Type{}, structs: map[string]*types.Type{},
		fields: map[fieldKey]*types.FieldType{}, objects: map[string]*cel.Type{}}
}

// fieldKey names a field of a struct type.
type fieldKey struct{ typeName, field string }

// celName returns the CEL type name of an object type.
func celName(t *graph.Type) string {
	sum := sha256.Sum256([]byte(t.String()))
	return objectTypePrefix + hex.EncodeToString(sum[:8])
}

// celType returns the CEL type of t, declaring the object types it holds.
//
// number is double, int is int, any is dyn, list and map are CEL list and
// map (with string keys), and object is a declared struct type.
func (o *objectTypes) celType(t *graph.Type) *cel.Type {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.celTypeLocked(t)
}

func (o *objectTypes) celTypeLocked(t *graph.Type) *cel.Type {
	if t == nil {
		return cel.DynType
	}
	switch t.Kind {
	case graph.KindString:
		return cel.StringType
	case graph.KindNumber:
		return cel.DoubleType
	case graph.KindInt:
		return cel.IntType
	case graph.KindBool:
		return cel.BoolType
	case graph.KindNull:
		return cel.NullType
	case graph.KindList:
		return cel.ListType(o.celTypeLocked(t.Elem))
	case graph.KindMap:
		return cel.MapType(cel.StringType, o.celTypeLocked(t.Elem))
	case graph.KindObject:
		name := celName(t)
		if ct, ok := o.objects[name]; ok {
			return ct
		}
		if _, ok := o.byCEL[name]; !ok {
			o.byCEL[name] = t
			for _, ft := range t.Fields {
				o.celTypeLocked(ft)
			}
		}
		ct := cel.ObjectType(name)
		o.objects[name] = ct
		return ct
	default:
		return cel.DynType
	}
}

// lookup returns the flowrun object type of a CEL struct name.
func (o *objectTypes) lookup(name string) (*graph.Type, bool) {
	o.mu.RLock()
	t, ok := o.byCEL[name]
	o.mu.RUnlock()
	return t, ok
}

// flowType returns the flowrun type of a checked CEL type. Types flowrun
// has no name for (timestamps, durations, type values) are any; bytes are
// string, as they are rendered.
func (o *objectTypes) flowType(t *cel.Type) *graph.Type {
	if t == nil {
		return graph.TypeAny
	}
	switch t.Kind() {
	case types.BoolKind:
		return graph.TypeBool
	case types.IntKind, types.UintKind:
		return graph.TypeInt
	case types.DoubleKind:
		return graph.TypeNumber
	case types.StringKind, types.BytesKind:
		return graph.TypeString
	case types.NullTypeKind:
		return graph.TypeNull
	case types.ListKind:
		return graph.ListOf(o.flowType(t.Parameters()[0]))
	case types.MapKind:
		return graph.MapOf(o.flowType(t.Parameters()[1]))
	case types.StructKind:
		if ft, ok := o.lookup(t.TypeName()); ok {
			return ft
		}
		return graph.TypeAny
	default:
		return graph.TypeAny
	}
}

// describeNames replaces CEL type names in a checker message with flowrun
// type names: double is number, and object types are written out.
func (o *objectTypes) describeNames(msg string) string {
	o.mu.RLock()
	for name, t := range o.byCEL {
		msg = strings.ReplaceAll(msg, name, t.String())
	}
	o.mu.RUnlock()
	msg = strings.ReplaceAll(msg, "double", "number")
	return msg
}

// EnumValue implements types.Provider. The checker asks it about every
// qualified name it resolves (steps.a.output.x, steps.a.output, steps.a);
// one under a flowrun variable cannot name an enum (flowrun declares no
// protobuf types), and the answer, an error the checker only tests the
// type of, is then a shared one instead of a new formatted error.
func (o *objectTypes) EnumValue(name string) ref.Val {
	if i := strings.IndexByte(name, '.'); i > 0 && flowVars[name[:i]] {
		return errNotEnum
	}
	return o.base.EnumValue(name)
}

var errNotEnum = types.NewErr("not an enum value")

// FindIdent implements types.Provider.
func (o *objectTypes) FindIdent(name string) (ref.Val, bool) { return o.base.FindIdent(name) }

// FindStructType implements types.Provider.
func (o *objectTypes) FindStructType(name string) (*types.Type, bool) {
	o.mu.RLock()
	t, ok := o.structs[name]
	o.mu.RUnlock()
	if ok {
		return t, true
	}
	_, ok = o.lookup(name)
	if !ok && o.graph != nil {
		ok = o.graph.isStepsType(name)
	}
	if !ok {
		return o.base.FindStructType(name)
	}
	t = types.NewTypeTypeWithParam(types.NewObjectType(name))
	o.mu.Lock()
	o.structs[name] = t
	o.mu.Unlock()
	return t, true
}

// FindStructFieldNames implements types.Provider.
func (o *objectTypes) FindStructFieldNames(name string) ([]string, bool) {
	if t, ok := o.lookup(name); ok {
		return fieldNames(t), true
	}
	if o.graph != nil && o.graph.isStepsType(name) {
		return o.graph.stepNames(name), true
	}
	return o.base.FindStructFieldNames(name)
}

// FindStructFieldType implements types.Provider. The field getters are left
// nil so that the interpreter selects fields of the bound maps by key.
func (o *objectTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if t, ok := o.lookup(name); ok {
		key := fieldKey{name, field}
		o.mu.RLock()
		cached, ok := o.fields[key]
		o.mu.RUnlock()
		if ok {
			return cached, true
		}
		ft, ok := t.Fields[field]
		if !ok {
			return nil, false
		}
		cached = &types.FieldType{Type: o.celType(ft)}
		o.mu.Lock()
		o.fields[key] = cached
		o.mu.Unlock()
		return cached, true
	}
	if o.graph != nil && o.graph.isStepsType(name) {
		if f := o.graph.stepField(name, field); f != nil {
			return f, true
		}
		return nil, false
	}
	return o.base.FindStructFieldType(name, field)
}

// NewValue implements types.Provider. flowrun objects cannot be built by
// name in CEL; a map literal does that.
func (o *objectTypes) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if t, ok := o.lookup(name); ok {
		return types.NewErr("an object of type %s cannot be constructed by name; write a map literal {'field': value} instead", t)
	}
	if o.graph != nil && o.graph.isStepsType(name) {
		return types.NewErr("the steps object cannot be constructed by name")
	}
	return o.base.NewValue(name, fields)
}

// fieldNames returns an object type's field names, sorted.
func fieldNames(t *graph.Type) []string {
	names := make([]string, 0, len(t.Fields))
	for n := range t.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// typeKey is a stable text of a type for cache keys.
func typeKey(t *graph.Type) string {
	if t == nil {
		return "-"
	}
	return t.String()
}
