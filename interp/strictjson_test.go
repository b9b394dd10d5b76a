package interp

import (
	"errors"
	"strings"
	"testing"
)

// TestStrictJSON: a lone surrogate escape and a key given twice are
// refused, naming the byte (and the key); pairs, escaped backslashes and
// the same key in two objects are not.
func TestStrictJSON(t *testing.T) {
	for body, want := range map[string]string{
		`{"a": "\ud800"}`:                     "lone UTF-16 surrogate escape (at byte 8)",
		`{"a": "x\udc00y"}`:                   "lone UTF-16 surrogate escape",
		`{"a": "\ud800\u0041"}`:               "lone UTF-16 surrogate escape",
		`{"a": 1, "a": 2}`:                    `the key "a" twice in one object (the second at byte 10)`,
		`{"o": {"k": [1, {"k": 1, "k": 2}]}}`: `the key "k" twice`,
		`{"a": "\ud83d\ude00"}`:               "",
		`{"a": "\\ud800"}`:                    "",
		`{"a": {"k": 1}, "b": {"k": 2}}`:      "",
		`[{"k": 1}, {"k": 1}]`:                "",
		`{"a": ["k", "k"], "k": 1}`:           "",
	} {
		err := StrictJSON([]byte(body))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s refused: %v", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// TestWebhookBodyStrict: a webhook's body that is not UTF-8, has a lone
// surrogate escape or a key twice is refused as the request's fault.
func TestWebhookBodyStrict(t *testing.T) {
	for body, want := range map[string]string{
		"{\"a\": \"\xff\"}": "not UTF-8 (at byte 8)",
		`{"a": "\ud800"}`:   "lone UTF-16 surrogate",
		`{"a": 1, "a": 1}`:  `the key "a" twice`,
		`{"a": "\u00e9"}`:   "",
	} {
		_, err := webhookBody([]byte(body))
		var we *WebhookRequestError
		switch {
		case want == "" && err != nil:
			t.Errorf("%q refused: %v", body, err)
		case want != "" && (!errors.As(err, &we) || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want a WebhookRequestError with %q", body, err, want)
		}
	}
}
