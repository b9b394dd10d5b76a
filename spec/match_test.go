package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Wildcards a want document may use in place of a value.
const (
	anyValue = "<any>"  // any value that is not null
	anyTime  = "<time>" // any RFC 3339 time
	idMask   = "<id>"   // what every run id is replaced with
)

// ulid matches a run id (a ULID in Crockford base32).
var ulid = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)

// mask replaces every run id of the case's store, wherever it occurs in a
// string (run_id, parent_run_id, idempotency keys, messages), with "<id>".
func mask(v any, ids map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = mask(e, ids)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = mask(e, ids)
		}
		return x
	case string:
		return ulid.ReplaceAllStringFunc(x, func(s string) string {
			if ids[s] {
				return idMask
			}
			return s
		})
	}
	return v
}

// decodeDoc decodes JSON with numbers kept as json.Number.
func decodeDoc(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// mismatch is one difference between a want document and the actual one.
type mismatch struct {
	path      string
	want, got string
}

func (m mismatch) String() string {
	return fmt.Sprintf("%s: want %s, got %s", m.path, m.want, m.got)
}

// subset compares want against got: objects of want are subsets of those
// of got (an absent field equals null), arrays must have the same length
// and match element-wise, numbers compare by value, RFC 3339 times compare
// as instants, and the wildcards "<any>" and "<time>" match as described.
// It returns every mismatch, in path order.
func subset(path string, want, got any) []mismatch {
	bad := func() []mismatch { return []mismatch{{path, show(want), show(got)}} }
	switch w := want.(type) {
	case nil:
		if got != nil {
			return bad()
		}
		return nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return bad()
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []mismatch
		for _, k := range keys {
			out = append(out, subset(join(path, k), w[k], g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return bad()
		}
		var out []mismatch
		for i := range w {
			out = append(out, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(w, g) {
			return bad()
		}
		return nil
	case string:
		switch {
		case w == anyValue:
			if got == nil {
				return bad()
			}
			return nil
		case w == anyTime:
			if g, ok := got.(string); !ok || !isTime(g) {
				return bad()
			}
			return nil
		}
		g, ok := got.(string)
		if !ok {
			return bad()
		}
		if g == w {
			return nil
		}
		if wt, err := time.Parse(time.RFC3339Nano, w); err == nil {
			if gt, err := time.Parse(time.RFC3339Nano, g); err == nil && wt.Equal(gt) {
				return nil
			}
		}
		return bad()
	default: // bool
		if want != got {
			return bad()
		}
		return nil
	}
}

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

// sameNumber compares two JSON numbers by value: 1 equals 1.0.
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	if ai, err := a.Int64(); err == nil {
		if bi, err := b.Int64(); err == nil {
			return ai == bi
		}
	}
	af, err1 := a.Float64()
	bf, err2 := b.Float64()
	return err1 == nil && err2 == nil && af == bf
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// show renders a value for a failure message; an absent field shows as
// null.
func show(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// pretty renders a whole document for a failure message.
func pretty(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// mismatches renders a list of mismatches, one per line.
func mismatches(ms []mismatch) string {
	lines := make([]string, len(ms))
	for i, m := range ms {
		lines[i] = "  " + m.String()
	}
	return strings.Join(lines, "\n")
}
