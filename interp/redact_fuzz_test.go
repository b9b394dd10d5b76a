package interp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRedactorJSON: whatever the secret and the JSON document, what json
// stores holds no form of the secret, and it is valid JSON.
func FuzzRedactorJSON(f *testing.F) {
	for _, c := range []struct{ secret, doc string }{
		{"48213907", `{"pin": 48213907, "list": [48213907, "x48213907"]}`},
		{"1,2,3,4", `[1,2,3,4,5]`},
		{`"b":"c`, `{"a":"c","b":"c"}`},
		{"n1234567", `{"s": "\n1234567"}`},
		{"pä/ss😀", `{"k": "pä/ss😀", "pä/ss😀": true}`},
		{"true", `[true, false, null]`},
		{"1e+22", `[1e22, 1E+22]`},
		{"12345678901234567891", `{"n": 12345678901234567891}`},
	} {
		f.Add(c.secret, c.doc)
	}
	f.Fuzz(func(t *testing.T, secret, doc string) {
		if len(strings.TrimSpace(secret)) < 4 || !utf8.ValidString(secret) || strings.Contains(`"***"`, strings.TrimSpace(secret)) {
			t.Skip() // a secret of a few characters redacts most text; one *** holds cannot be redacted
		}
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			t.Skip()
		}
		r := newRedactor(map[string]string{"s": secret})
		out := r.json(v)
		if r.holdsBytes(out) {
			t.Fatalf("secret %q: json(%s) = %s still holds it", secret, doc, out)
		}
		if !json.Valid(out) {
			t.Fatalf("secret %q: json(%s) = %s is not JSON", secret, doc, out)
		}
		if c := mustJSON(r.clean(v)); string(c) != string(out) {
			t.Fatalf("secret %q: clean gives %s, json %s", secret, c, out)
		}
	})
}
