package interp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flowrun/flowrun/store"
)

// redactor replaces secret values in text and in JSON values before they
// are stored (language.md §4). Besides each value as it is, it replaces the
// forms the value takes when it is encoded on its way into a message or a
// stream (secretForms): Go's *url.Error, for one, quotes the URL and
// percent-encodes its path, and a JSON document or a %q in a program's
// output escapes quotes and backslashes. In a JSON value it also replaces
// numbers and booleans whose text holds a secret (value), and a secret
// only the encoding shows (seal); transition applies it to everything a
// run's commit stores.
type redactor struct {
	forms []string // longest first, so that a form containing another is replaced whole
}

// newRedactor keeps the forms of the non-empty secret values, computed
// once per run.
func newRedactor(secrets map[string]string) *redactor {
	r := &redactor{}
	seen := map[string]bool{}
	for _, v := range secrets {
		// A value read from a file often ends in a line break that the
		// programs given it drop: the value without the white space around
		// it is a secret too.
		for _, v := range []string{v, strings.TrimSpace(v)} {
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
	}
	sort.Slice(r.forms, func(i, j int) bool {
		if len(r.forms[i]) != len(r.forms[j]) {
			return len(r.forms[i]) > len(r.forms[j])
		}
		return r.forms[i] < r.forms[j]
	})
	return r
}

// with returns a redactor that also replaces v (and its forms), or r when
// v is empty or known already. r itself is not changed: flights in progress
// keep reading it.
func (r *redactor) with(v string) *redactor {
	if v == "" || r.text(v) == "***" {
		return r
	}
	seen := map[string]bool{}
	n := &redactor{forms: append([]string(nil), r.forms...)}
	for _, f := range n.forms {
		seen[f] = true
	}
	for _, f := range secretForms(v) {
		if f != "" && !seen[f] {
			seen[f] = true
			n.forms = append(n.forms, f)
		}
	}
	sort.Slice(n.forms, func(i, j int) bool {
		if len(n.forms[i]) != len(n.forms[j]) {
			return len(n.forms[i]) > len(n.forms[j])
		}
		return n.forms[i] < n.forms[j]
	})
	return n
}

// secretForms returns v and the forms it takes in URLs (a query value, a
// path segment, a whole path, a fragment, a host, a user name, as net/url
// escapes each, and as other languages percent-encode it), each of those
// as the body of a Go quoted string (strconv.Quote, QuoteToASCII) and of a
// JSON string (with and without HTML escaping), and v as the body of a
// JSON string other encoders write: in ASCII, \uXXXX in lower or upper
// case, with / escaped or not. Duplicates are left to the caller.
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
		// As other languages percent-encode it: RFC 3986's unreserved
		// characters kept (Python's quote with safe=''), / kept too
		// (quote), a space as + (quote_plus), JavaScript's
		// encodeURIComponent and encodeURI.
		percentEscape(v, "-._~", false),
		percentEscape(v, "-._~/", false),
		percentEscape(v, "-._~", true),
		percentEscape(v, "-_.!~*'()", false),
		percentEscape(v, "-_.!~*'();/?:@&=+$,#", false),
	}
	forms := make([]string, 0, 5*len(base)+12)
	for _, b := range base {
		forms = append(forms, b,
			trim(strconv.Quote(b), `"`, `"`),
			trim(strconv.QuoteToASCII(b), `"`, `"`),
			jsonStringBody(b, true),
			jsonStringBody(b, false))
	}
	// The value in a JSON string as other encoders write it: ASCII only
	// (Python's json.dumps, PHP's json_encode), with / escaped (PHP), with
	// <, > and & escaped or not.
	for _, html := range []bool{false, true} {
		body := jsonStringBody(v, html)
		for _, b := range []string{body, jsonASCII(body, "\\u%04x"), jsonASCII(body, "\\u%04X")} {
			forms = append(forms, b, strings.ReplaceAll(b, "/", `\/`))
		}
	}
	return forms
}

// percentEscape writes each byte of s as %XX (upper-case hex) but ASCII
// letters, digits and the characters of keep; with plus, a space as +.
func percentEscape(s, keep string, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c < utf8.RuneSelf && strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// jsonASCII is the body of a JSON string written in ASCII: each character
// past U+007F as \uXXXX in the format given (lower or upper case hex),
// past U+FFFF as a UTF-16 surrogate pair.
func jsonASCII(body, format string) string {
	var b strings.Builder
	for _, r := range body {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, format+format, r1, r2)
		default:
			fmt.Fprintf(&b, format, r)
		}
	}
	return b.String()
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

// partialStart returns where the longest end of b that is the beginning
// of a form (shorter than the form) starts, or len(b) when no end of b
// is: a stream cut at len(b) may have a secret straddling the cut only
// from there. It is at least len(b) - r.lookahead().
func (r *redactor) partialStart(b []byte) int {
	if r == nil {
		return len(b)
	}
	start := len(b)
	for _, f := range r.forms {
		for k := min(len(f)-1, len(b)); k > len(b)-start; k-- {
			if bytes.HasSuffix(b, []byte(f[:k])) {
				start = len(b) - k
				break
			}
		}
	}
	return start
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

// holds reports whether s contains a form of a secret.
func (r *redactor) holds(s string) bool {
	if r == nil {
		return false
	}
	for _, f := range r.forms {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// holdsBytes is holds of b, without a copy.
func (r *redactor) holdsBytes(b []byte) bool {
	if r == nil {
		return false
	}
	for _, f := range r.forms {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// value redacts a JSON-like value (normalizeJSON's form): every string
// and key as text, and every number and boolean whose text holds a secret
// (a secret of digits that a program printed as a JSON number, language.md
// §4): a number becomes the string of its decimal digits with the secret
// replaced by ***, a boolean the string "***". What a value's parts cannot
// show, a secret spanning several of them, is left to json and clean.
func (r *redactor) value(v any) any {
	if r == nil || len(r.forms) == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		return r.text(x)
	case float64:
		return r.number(x)
	case int64, uint64:
		if d := fmt.Sprint(x); r.text(d) != d {
			return r.text(d)
		}
	case bool:
		if t := strconv.FormatBool(x); r.holds(t) {
			return "***"
		}
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

// number redacts a number whose decimal text, or the text encoding/json
// writes for it (1e+21 and up, below 1e-6), holds a secret.
func (r *redactor) number(x float64) any {
	d := strconv.FormatFloat(x, 'f', -1, 64)
	if rd := r.text(d); rd != d {
		return rd
	}
	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) && r.holdsBytes(mustJSON(x)) {
		return "***"
	}
	return x
}

// clean returns v redacted for the store: value, and then, when the JSON
// encoding of the result still holds a secret, seal. What clean returns is
// what is stored and what later expressions see.
func (r *redactor) clean(v any) any {
	if r == nil || len(r.forms) == 0 {
		return normalizeJSON(v) // no encoding needed to know it holds no secret
	}
	v, _ = r.cleanJSON(v)
	return v
}

// json is the stored JSON of v, redacted (clean).
func (r *redactor) json(v any) json.RawMessage {
	_, b := r.cleanJSON(v)
	return b
}

// cleanJSON returns clean(v) and its JSON (what json returns), encoding it
// once: a step's output is both stored and read by later expressions.
func (r *redactor) cleanJSON(v any) (any, json.RawMessage) {
	v = normalizeJSON(v)
	if r == nil || len(r.forms) == 0 {
		return v, mustJSON(v)
	}
	v = r.value(v)
	if b := mustJSON(v); !r.holdsBytes(b) {
		return v, b
	}
	v = r.seal(v)
	return v, mustJSON(v)
}

// raw redacts JSON about to be stored: b itself when it holds no secret,
// else b decoded, redacted and encoded again (text that is not JSON
// becomes a JSON string of its redacted text).
func (r *redactor) raw(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !r.holdsBytes(b) {
		return b
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return r.json(r.text(string(b)))
	}
	return r.json(v)
}

// seal replaces the smallest parts of a redacted value (value's result,
// whose containers are its own) whose JSON encoding still holds a secret:
// a secret spanning several values ("1,2,3,4" in [1,2,3,4]), or one that
// the encoding makes (a secret "n1234567" out of a newline and 1234567,
// which JSON writes \n1234567). A string, key, number or boolean becomes
// "***"; a list or object becomes the string of its encoding, redacted,
// or "***" when even that string's encoding holds a secret.
func (r *redactor) seal(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = r.seal(e)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		for _, k := range keys { // not a range over x: it changes keys
			e := r.seal(x[k])
			if r.holdsBytes(mustJSON(k)) {
				delete(x, k)
				k = "***"
			}
			x[k] = e
		}
	}
	b := mustJSON(v)
	if !r.holdsBytes(b) {
		return v
	}
	switch v.(type) {
	case []any, map[string]any:
		if s := r.text(string(b)); !r.holdsBytes(mustJSON(s)) {
			return s
		}
	}
	return "***"
}

// transition redacts everything of a run's transition that holds data of
// the run: outputs, errors, details and idempotency keys of steps and
// attempts, event data, the run's outputs and error, child runs' inputs,
// dead letters, alert messages and live output. Each place that builds these redacts
// what it puts in, so that what later expressions read is what is stored;
// this is the boundary that makes a place that forgot no leak. A step's
// State (flowrun's own bookkeeping: foreach items are redacted when they
// are evaluated) is left as it is.
func (r *redactor) transition(t *store.Transition) {
	if r == nil || len(r.forms) == 0 {
		return
	}
	if u := t.Run; u != nil {
		u.Outputs, u.Error = r.raw(u.Outputs), r.raw(u.Error)
		if u.WaitReason != nil {
			u.WaitReason = ptr(r.text(*u.WaitReason))
		}
	}
	for i := range t.Steps {
		w := &t.Steps[i]
		if !bytes.Equal(w.Output, store.ItemOutputs) {
			// store.ItemOutputs stands for item outputs redacted when they
			// were written; a secret that happened to be part of its text
			// would turn it into a string.
			w.Output = r.raw(w.Output)
		}
		w.Error, w.Detail = r.raw(w.Error), r.text(w.Detail)
	}
	for i := range t.Attempts {
		a := &t.Attempts[i]
		a.Output, a.Error, a.IdempotencyKey = r.raw(a.Output), r.raw(a.Error), r.text(a.IdempotencyKey)
	}
	for i := range t.Events {
		t.Events[i].Data = r.raw(t.Events[i].Data)
	}
	for i := range t.Children {
		t.Children[i].Inputs = r.raw(t.Children[i].Inputs)
	}
	for i := range t.DeadLetters {
		d := &t.DeadLetters[i]
		d.Item, d.Error = r.raw(d.Item), r.raw(d.Error)
	}
	for i := range t.Alerts {
		t.Alerts[i].Message = r.text(t.Alerts[i].Message)
	}
	// Live output is redacted as it is cut (chunker), which holds back
	// what a secret could straddle; this only guards the boundary.
	for i := range t.Output {
		if o := &t.Output[i]; r.holdsBytes(o.Data) {
			o.Data = []byte(r.text(string(o.Data)))
		}
	}
}

// outputJSON is parseOutputJSON of a program's stdout or an http body,
// with each number whose text, as written, holds a secret replaced by that
// text redacted, a string (language.md §4). Decoded to a float64 first, a
// secret of more digits than a float64 keeps (past 2^53, a card or account
// number) would be rounded to digits that no longer hold it, yet give most
// of it away. The output is decoded a second time only when its text holds
// a secret.
func (r *redactor) outputJSON(b []byte) (any, bool) {
	v, ok := parseOutputJSON(b)
	if !ok || !r.holdsBytes(b) {
		return v, ok
	}
	d := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(b)))
	d.UseNumber()
	var lit any
	if d.Decode(&lit) != nil {
		return v, ok
	}
	return r.literals(lit), true
}

// literals turns the json.Numbers of a value decoded with UseNumber into
// float64s, or into their redacted text when it holds a secret. Every
// number parseOutputJSON accepted is in the range of a float64.
func (r *redactor) literals(v any) any {
	switch x := v.(type) {
	case json.Number:
		if t := r.text(string(x)); t != string(x) {
			return t
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case []any:
		for i, e := range x {
			x[i] = r.literals(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = r.literals(e)
		}
	}
	return v
}
