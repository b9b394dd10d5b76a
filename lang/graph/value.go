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
	c := valueCheck{max: 1}
	c.check(t, v, path)
	if len(c.errs) == 0 {
		return nil
	}
	return c.errs[0]
}

// CheckValueAll is CheckValue reporting every mismatch, each with its
// path, up to limit of them (at least one), in the order CheckValue finds
// the first: a payload with several wrong fields is fixed in one go.
func CheckValueAll(t *Type, v any, path string, limit int) []error {
	c := valueCheck{max: max(limit, 1)}
	c.check(t, v, path)
	return c.errs
}

// valueCheck collects the mismatches of a value, up to max.
type valueCheck struct {
	max  int
	errs []error
}

// full reports whether no more mismatch is wanted.
func (c *valueCheck) full() bool { return len(c.errs) >= c.max }

func (c *valueCheck) add(err error) { c.errs = append(c.errs, err) }

func (c *valueCheck) check(t *Type, v any, path string) {
	if t == nil || t.Kind == KindAny || c.full() {
		return
	}
	bad := func() error {
		return fmt.Errorf("%s must be %s, got %s", path, typeArticle(t), JSONKind(v))
	}
	switch t.Kind {
	case KindString:
		if _, ok := v.(string); !ok {
			c.add(bad())
			return
		}
	case KindNumber:
		if !isNumber(v) {
			c.add(bad())
			return
		}
	case KindInt:
		if _, ok := v.(int64); ok {
			return
		}
		if u, ok := v.(uint64); ok {
			c.add(fmt.Errorf("%s must be a whole number from -9223372036854775808 to 9223372036854775807 (a CEL int), got %d; declare it as number or any to accept it", path, u))
			return
		}
		f, ok := v.(float64)
		if !ok {
			c.add(bad())
			return
		}
		if f != math.Trunc(f) {
			c.add(fmt.Errorf("%s must be a whole number, got %v", path, f))
		}
	case KindBool:
		if _, ok := v.(bool); !ok {
			c.add(bad())
			return
		}
	case KindNull:
		if v != nil {
			c.add(bad())
			return
		}
	case KindList:
		l, ok := v.([]any)
		if !ok {
			c.add(bad())
			return
		}
		for i, el := range l {
			c.check(t.Elem, el, fmt.Sprintf("%s[%d]", path, i))
		}
	case KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			c.add(bad())
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c.check(t.Elem, m[k], path+"."+k)
		}
	case KindObject:
		m, ok := v.(map[string]any)
		if !ok {
			c.add(bad())
			return
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
		var plain []string
		for _, k := range extra {
			if s := naming.NearestName(k, missing); s != "" {
				c.add(fmt.Errorf("%s has the field %q, which is not part of %s; did you mean %q?", path, k, t, s))
			} else {
				plain = append(plain, k)
			}
		}
		for _, n := range missing {
			c.add(fmt.Errorf("%s is missing the field %q of %s", path, n, t))
		}
		for _, k := range plain {
			c.add(fmt.Errorf("%s has the field %q, which is not part of %s", path, k, t))
		}
		for _, n := range names {
			if _, ok := m[n]; ok {
				c.check(t.Fields[n], m[n], path+"."+n)
			}
		}
	}
	if len(c.errs) > c.max {
		c.errs = c.errs[:c.max]
	}
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
	case float64, int64, uint64:
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

// isNumber reports whether v is a JSON number in Go form: a float64, or an
// int64 or uint64 that UnmarshalJSON keeps exact.
func isNumber(v any) bool {
	switch v.(type) {
	case float64, int64, uint64:
		return true
	}
	return false
}
