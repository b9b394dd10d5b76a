package interp

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// redactor replaces secret values in text before it is stored. Besides
// each value as it is, it replaces the forms the value takes when it is
// encoded on its way into a message or a stream (secretForms): Go's
// *url.Error, for one, quotes the URL and percent-encodes its path, and a
// JSON document or a %q in a program's output escapes quotes and
// backslashes.
type redactor struct {
	forms []string // longest first, so that a form containing another is replaced whole
}

// newRedactor keeps the forms of the non-empty secret values, computed
// once per run.
func newRedactor(secrets map[string]string) *redactor {
	r := &redactor{}
	seen := map[string]bool{}
	for _, v := range secrets {
		if v == "" {
			continue
		}
		for _, f := range secretForms(v) {
			if f != "" && !seen[f] {
				seen[f] = true
				r.forms = append(r.forms, f)
			}
		}
	}
	sort.Slice(r.forms, func(i, j int) bool {
		if len(r.forms[i]) != len(r.forms[j]) {
			return len(r.forms[i]) > len(r.forms[j])
		}
		return r.forms[i] < r.forms[j]
	})
	return r
}

// secretForms returns v and the forms it takes in URLs (a query value, a
// path segment, a whole path, a fragment, a host, a user name, as net/url
// escapes each), each of those as the body of a Go quoted string
// (strconv.Quote, QuoteToASCII) and of a JSON string (with and without
// HTML escaping). Duplicates are left to the caller.
func secretForms(v string) []string {
	trim := func(s, prefix, suffix string) string {
		return strings.TrimSuffix(strings.TrimPrefix(s, prefix), suffix)
	}
	base := []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		(&url.URL{Path: v}).EscapedPath(),
		(&url.URL{Fragment: v}).EscapedFragment(),
		trim((&url.URL{Host: v}).String(), "//", ""),
		trim((&url.URL{User: url.User(v)}).String(), "//", "@"),
	}
	forms := make([]string, 0, 5*len(base))
	for _, b := range base {
		forms = append(forms, b,
			trim(strconv.Quote(b), `"`, `"`),
			trim(strconv.QuoteToASCII(b), `"`, `"`),
			jsonStringBody(b, true),
			jsonStringBody(b, false))
	}
	return forms
}

// jsonStringBody is s as encoding/json writes it in a string, without the
// quotes.
func jsonStringBody(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(s) != nil {
		return s
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return strings.TrimSuffix(strings.TrimPrefix(out, `"`), `"`)
}

func (r *redactor) text(s string) string {
	if r == nil {
		return s
	}
	for _, f := range r.forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, "***")
		}
	}
	return s
}

// lookahead is how many bytes past a cut a stream must be seen to tell
// whether a secret straddles the cut: the longest form's length less one.
func (r *redactor) lookahead() int {
	if r == nil || len(r.forms) == 0 {
		return 0
	}
	return len(r.forms[0]) - 1
}

// maxCutMoves bounds how many times safeCut moves a cut back over
// overlapping occurrences before it gives up and keeps nothing.
const maxCutMoves = 1024

// safeCut returns where to cut the stream whose first bytes are b so that
// what is kept, b[:n] with n <= at, does not end with part of a secret:
// no occurrence of a form in b starts before n and ends after it. b must
// hold at least r.lookahead() bytes past at when the stream has them, so
// that every occurrence starting before at is seen whole. Redacting the
// kept text, as everything stored is, then leaves no prefix of a secret
// at its end.
func (r *redactor) safeCut(b []byte, at int) int {
	if r == nil || len(r.forms) == 0 {
		return at
	}
	at = min(at, len(b))
	for moves := 0; ; moves++ {
		if moves > maxCutMoves {
			return 0 // a run of overlapping secrets: keep none of it
		}
		moved := false
		for _, f := range r.forms {
			// An occurrence straddling at starts in (at-len(f), at).
			lo, hi := max(0, at-len(f)+1), min(len(b), at+len(f)-1)
			if lo >= at || hi-lo < len(f) {
				continue
			}
			if i := bytes.Index(b[lo:hi], []byte(f)); i >= 0 {
				at, moved = lo+i, true
			}
		}
		if !moved {
			return at
		}
	}
}

// value redacts every string inside a JSON-like value, keys included.
func (r *redactor) value(v any) any {
	if r == nil || len(r.forms) == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		return r.text(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[r.text(k)] = r.value(e)
		}
		return out
	}
	return v
}
