package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeBody: whatever a client sends, decoding a start body either
// succeeds with a request that encodes and decodes back to itself, or is
// a 400 Problem with a message; it never panics. The same holds for a
// retry, a decision and a signal's data. A body that is not UTF-8 is
// refused (encoding/json would turn its bytes into U+FFFD, and the run
// would get text the client never sent).
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"inputs": {"a": 1}, "version": "1.2", "wait": "30s"}`,
		`{"inputs": [1]}`, `{"input": {}}`, `[]`, `null`, `{"inputs": {}} {}`,
		`{"inputs": {"a": "\u0000"}}`, `{"wait": 5}`, `{"choose": "old"}`, `{"from": "step"}`,
		`{"inputs": {"a": [[[[[[[[[[1]]]]]]]]]]}}`, `{"inputs":`, "\xff\xfe", `{"inputs": {"a": 1e400}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req startRequest
		checkDecoded(t, b, decodeBody(b, &req), &req)
		var rr retryRequest
		checkDecoded(t, b, decodeBody(b, &rr), &rr)
		var dr decideRequest
		checkDecoded(t, b, decodeBody(b, &dr), &dr)
		if v, err := decodeValue(b); err != nil {
			checkProblem400(t, b, err)
		} else if v != nil && (!json.Valid(v) || !utf8.Valid(v)) {
			t.Fatalf("decodeValue(%q) accepted %q, which is not UTF-8 JSON", b, v)
		}
	})
}

func checkDecoded[T any](t *testing.T, b []byte, err error, v *T) {
	t.Helper()
	if err != nil {
		checkProblem400(t, b, err)
		return
	}
	if !utf8.Valid(b) {
		t.Fatalf("decoded %q, which is not UTF-8, into %+v", b, *v)
	}
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("decoded %q into %+v, which does not encode: %v", b, *v, err)
	}
	var again T
	if err := decodeBody(enc, &again); err != nil {
		t.Fatalf("decoded %q, encoded as %s, which does not decode: %v", b, enc, err)
	}
	if !reflect.DeepEqual(*v, again) {
		t.Fatalf("decoded %q as %+v, but its encoding %s decodes as %+v", b, *v, enc, again)
	}
}

func checkProblem400(t *testing.T, b []byte, err error) {
	t.Helper()
	var p *Problem
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Detail == "" {
		t.Fatalf("decoding %q: %v (%T), want a 400 Problem with a message", b, err, err)
	}
}
