package lang

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
)

// This file turns HCL type expressions into *Type, and HCL literal values
// into canonical JSON.

// decodeTypeExpr reads an input's `type` attribute: string, number, bool,
// any, list(T), map(T), set(T) (kept as a list) and object({...}).
func decodeTypeExpr(expr hcl.Expression) (*graph.Type, hcl.Diagnostics) {
	ty, diags := typeexpr.TypeConstraint(expr)
	if diags.HasErrors() {
		for _, d := range diags {
			if d.Summary == "Invalid type specification" {
				d.Detail += " Valid types are string, number, bool, any, list(T), map(T), set(T) and object({name = T, ...})."
			}
		}
		return graph.TypeAny, diags
	}
	t, err := typeFromCty(ty)
	if err != nil {
		return graph.TypeAny, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unsupported type",
			Detail:   err.Error(),
			Subject:  expr.Range().Ptr(),
		}}
	}
	return t, nil
}

func typeFromCty(ty cty.Type) (*graph.Type, error) {
	switch {
	case ty == cty.DynamicPseudoType:
		return graph.TypeAny, nil
	case ty == cty.String:
		return graph.TypeString, nil
	case ty == cty.Number:
		return graph.TypeNumber, nil
	case ty == cty.Bool:
		return graph.TypeBool, nil
	case ty.IsListType() || ty.IsSetType():
		elem, err := typeFromCty(ty.ElementType())
		if err != nil {
			return nil, err
		}
		return graph.ListOf(elem), nil
	case ty.IsMapType():
		elem, err := typeFromCty(ty.ElementType())
		if err != nil {
			return nil, err
		}
		return graph.MapOf(elem), nil
	case ty.IsObjectType():
		fields := map[string]*graph.Type{}
		for name, at := range ty.AttributeTypes() {
			if ty.AttributeOptional(name) {
				//lint:ignore ST1005 the message is a diagnostic detail shown to users as a sentence
				return nil, fmt.Errorf("The attribute %q is optional, and flowrun types have no optional attributes. Declare it as a plain attribute and give the input a default instead.", name)
			}
			ft, err := typeFromCty(at)
			if err != nil {
				return nil, err
			}
			fields[name] = ft
		}
		return graph.ObjectOf(fields), nil
	case ty.IsTupleType():
		//lint:ignore ST1005 the message is a diagnostic detail shown to users as a sentence
		return nil, fmt.Errorf("Tuple types are not supported. Use list(T) for a list whose elements share a type, or list(any).")
	default:
		//lint:ignore ST1005 the message is a diagnostic detail shown to users as a sentence
		return nil, fmt.Errorf("The type %s is not supported. Use string, number, bool, any, list(T), map(T) or object({...}).", typeexpr.TypeString(ty))
	}
}

// ctyToGo converts a known, wholly literal cty value to the JSON-like Go
// values of a Value literal: nil, bool, string, json.Number, []any and
// map[string]any. Sets become lists.
func ctyToGo(v cty.Value) (any, error) {
	if !v.IsKnown() {
		return nil, fmt.Errorf("the value is not known until run time")
	}
	if v.IsNull() {
		return nil, nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString(), nil
	case ty == cty.Bool:
		return v.True(), nil
	case ty == cty.Number:
		return ctyNumberJSON(v.AsBigFloat())
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			g, err := ctyToGo(ev)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	case ty.IsMapType() || ty.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			g, err := ctyToGo(ev)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = g
		}
		return out, nil
	default:
		return nil, fmt.Errorf("a value of type %s cannot be written as JSON", ty.FriendlyName())
	}
}

// ctyNumberJSON renders a number in its shortest JSON form: integers without a
// fraction, others as float64 would print them.
func ctyNumberJSON(f *big.Float) (json.Number, error) {
	if f.IsInf() {
		return "", fmt.Errorf("the number is infinite")
	}
	if f.IsInt() {
		if i, acc := f.Int64(); acc == big.Exact {
			return json.Number(fmt.Sprint(i)), nil
		}
	}
	x, _ := f.Float64()
	b, err := json.Marshal(x)
	if err != nil {
		return "", fmt.Errorf("the number %s cannot be written as JSON: %w", f.Text('g', 10), err)
	}
	return json.Number(b), nil
}

// literalJSON encodes a Go value from ctyToGo compactly, with object keys
// sorted.
func literalJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// ctyToGo only produces encodable values.
		panic(fmt.Sprintf("lang: literal cannot be encoded: %v", err))
	}
	return b
}

// typeOfLiteral is the static type of a literal: objects are objects of
// their fields, lists are lists of their elements' common type (any when
// they differ or the list is empty).
func typeOfLiteral(v any) *graph.Type {
	switch x := v.(type) {
	case nil:
		return graph.TypeNull
	case bool:
		return graph.TypeBool
	case string:
		return graph.TypeString
	case json.Number:
		return graph.TypeNumber
	case []any:
		elems := make([]*graph.Type, len(x))
		for i, e := range x {
			elems[i] = typeOfLiteral(e)
		}
		return graph.ListOf(literalCommonType(elems))
	case map[string]any:
		fields := make(map[string]*graph.Type, len(x))
		for k, e := range x {
			fields[k] = typeOfLiteral(e)
		}
		return graph.ObjectOf(fields)
	}
	return graph.TypeAny
}

// literalCommonType is the type shared by all of ts, or any.
func literalCommonType(ts []*graph.Type) *graph.Type {
	if len(ts) == 0 {
		return graph.TypeAny
	}
	for _, t := range ts[1:] {
		if !t.Equal(ts[0]) {
			return graph.TypeAny
		}
	}
	return ts[0]
}

// conformLiteral checks that a literal Go value (from ctyToGo) is a value of
// type t, and returns a sentence saying where it is not. Types are matched
// strictly: a string "5" is not a number.
func conformLiteral(v any, t *graph.Type, path string) error {
	at := ""
	if path != "" {
		at = " at " + path
	}
	if t == nil || t.Kind == graph.KindAny {
		return nil
	}
	switch t.Kind {
	case graph.KindString:
		if _, ok := v.(string); ok {
			return nil
		}
	case graph.KindNumber, graph.KindInt:
		if _, ok := v.(json.Number); ok {
			return nil
		}
	case graph.KindBool:
		if _, ok := v.(bool); ok {
			return nil
		}
	case graph.KindList:
		if l, ok := v.([]any); ok {
			for i, e := range l {
				if err := conformLiteral(e, t.Elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			return nil
		}
	case graph.KindMap:
		if m, ok := v.(map[string]any); ok {
			for _, k := range naming.NamesSorted(m) {
				if err := conformLiteral(m[k], t.Elem, literalPath(path, k)); err != nil {
					return err
				}
			}
			return nil
		}
	case graph.KindObject:
		if m, ok := v.(map[string]any); ok {
			var missing, extra []string
			for k := range t.Fields {
				if _, ok := m[k]; !ok {
					missing = append(missing, k)
				}
			}
			for k := range m {
				if _, ok := t.Fields[k]; !ok {
					extra = append(extra, k)
				}
			}
			sort.Strings(missing)
			sort.Strings(extra)
			if len(missing) > 0 {
				return fmt.Errorf("the attribute %q is missing%s", missing[0], at)
			}
			if len(extra) > 0 {
				return fmt.Errorf("the attribute %q is not part of %s%s", extra[0], t, at)
			}
			for _, k := range naming.NamesSorted(m) {
				if err := conformLiteral(m[k], t.Fields[k], literalPath(path, k)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return fmt.Errorf("a %s is required%s, but the value is %s", t, at, describeLiteral(v))
}

func describeLiteral(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "unknown"
}

func literalPath(path, key string) string {
	if naming.ValidIdent(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return fmt.Sprintf("%s[%q]", path, key)
}

// reservedNames are words CEL reserves; a name used as input.NAME or
// steps.NAME cannot be one of them.
var reservedNames = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true,
	"const": true, "continue": true, "else": true, "for": true, "function": true,
	"if": true, "import": true, "let": true, "loop": true, "package": true,
	"namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// LiteralGo converts a known, wholly literal cty value (an HCL literal
// evaluated without variables) to JSON-like Go values: nil, bool, string,
// json.Number, []any and map[string]any. Test files (lang/testfile) read
// their inputs, mock results and expectations with it.
func LiteralGo(v cty.Value) (any, error) { return ctyToGo(v) }
