package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/store"
)

// A value stored with encoding/json's HTML escapes is shown as it was
// sent: <, > and & are the characters, not \u003c, \u003e, \u0026 (the
// template escapes them for HTML); an escaped backslash before "u0026"
// stays as it is, and a big integer stays exact.
func TestPrettyShowsTextAsSent(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"name":"R\u0026D \u003cteam\u003e"}`, "{\n  \"name\": \"R&D <team>\"\n}"},
		{`{"n":123456789012345678901234567890,"f":1.50}`, "{\n  \"n\": 123456789012345678901234567890,\n  \"f\": 1.50\n}"},
		{`["a\\u0026b","\u0026\"\u003E"]`, "[\n  \"a\\\\u0026b\",\n  \"&\\\">\"\n]"},
		{`"R\u0026D"`, "R&D"},
	} {
		if got := pretty(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("pretty(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
	if got := funcs()["json"].(func(json.RawMessage) string)(json.RawMessage(`{"a":"\u003cb\u003e"}`)); got != `{"a":"<b>"}` {
		t.Errorf("json = %q", got)
	}
}

// A run's page shows an input with & and < as the user typed it.
func TestRunPageShowsInputAsSent(t *testing.T) {
	s := newSite(t)
	v, _, err := s.door.Start(context.Background(), api.StartRequest{Workflow: "w", Inputs: map[string]any{"n": "R&D <team>"}})
	if err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.signIn(s.tokens[store.ScopeRead])
	code, page := b.get("/runs/" + v.RunID)
	if code != http.StatusOK || !strings.Contains(page, "&#34;n&#34;: &#34;R&amp;D &lt;team&gt;&#34;") || strings.Contains(page, `\u00`) {
		t.Fatalf("the run's inputs are not shown as sent: %d\n%s", code, page)
	}
}
