package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// checkAnswer checks what every answer of the API promises: a JSON body
// (problem+json for an error) that parses.
func checkAnswer(t *testing.T, req *http.Request, reqBody []byte, ans answer) {
	t.Helper()
	ct := ans.header.Get("Content-Type")
	want := "application/json"
	if ans.status >= 400 {
		want = "application/problem+json"
	}
	if ct != want {
		t.Fatalf("%s %s: %d with Content-Type %q, want %q", req.Method, req.URL.Path, ans.status, ct, want)
	}
	if !json.Valid(ans.body) {
		t.Fatalf("%s %s: %d body is not JSON:\n%s", req.Method, req.URL.Path, ans.status, ans.body)
	}
}
