package graph

import (
	"fmt"
	"math"
	"sort"

	"github.com/flowrun/flowrun/lang/naming"
)

// CheckValue reports whether a JSON-decoded value (nil, bool, float64,
// string, []any, map[string]any) fits the type;
// path names the value in the message (amount, items[2], address.city).
// An object value must have exactly the fields of its type: a missing
// field and an extra one are errors, at any depth (inside lists, maps and
// other objects).
func CheckValue(t *Type, v any, path string) error {
	if t == nil || t.Kind == KindAny {
		return nil
	}
	bad := func() error {
		return fmt.Errorf("%s must be %s, got %s", path, typeArticle(t), JSONKind(v))
	}
	switch t.Kind {
	case KindString:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case KindNumber:
		if _, ok := v.(float64); !ok {
			return bad()
		}
	case KindInt:
		f, ok := v.(float64)
		if !ok {
			return bad()
		}
		if f != math.Trunc(f) {
			return fmt.Errorf("%s must be a whole number, got %v", path, f)
		}
	case KindBool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case KindNull:
		if v != nil {
			return bad()
		}
	case KindList:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		for i, el := range l {
			if err := CheckValue(t.Elem, el, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := CheckValue(t.Elem, m[k], path+"."+k); err != nil {
				return err
			}
		}
	case KindObject:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		// An object has exactly its fields (language.md §3): a missing
		// field and an extra one (a typo, say) are both errors. An extra
		// field that looks like a missing one is reported first, as the
		// typo it probably is.
		names := make([]string, 0, len(t.Fields))
		var missing []string
		for n := range t.Fields {
			names = append(names, n)
			if _, ok := m[n]; !ok {
				missing = append(missing, n)
			}
		}
		sort.Strings(names)
		sort.Strings(missing)
		var extra []string
		for k := range m {
			if _, ok := t.Fields[k]; !ok {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			if s := naming.NearestName(k, missing); s != "" {
				return fmt.Errorf("%s has the field %q, which is not part of %s; did you mean %q?", path, k, t, s)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%s is missing the field %q of %s", path, missing[0], t)
		}
		if len(extra) > 0 {
			return fmt.Errorf("%s has the field %q, which is not part of %s", path, extra[0], t)
		}
		for _, n := range names {
			if err := CheckValue(t.Fields[n], m[n], path+"."+n); err != nil {
				return err
			}
		}
	}
	return nil
}

// typeArticle names a type with its article, for messages.
func typeArticle(t *Type) string {
	switch t.Kind {
	case KindString, KindNumber, KindBool, KindList, KindMap:
		return "a " + t.String()
	case KindInt:
		return "a whole number"
	case KindObject, KindAny:
		return "an " + t.String()
	}
	return t.String()
}

// JSONKind names the kind of a JSON-decoded value, for messages.
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a bool"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
