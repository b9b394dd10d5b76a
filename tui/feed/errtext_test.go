package feed

import (
	"encoding/json"
	"testing"
)

func TestErrorText(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{``, ``},
		{`null`, ``},
		{`{"kind":"exec","message":"command \"x\" exited with status 3\nmore"}`, `exec: command "x" exited with status 3 …`},
		{`{"kind":"exec","message":"no stock","caught":true}`, `caught exec: no stock`},
		{`{"odd":1}`, `{"odd":1}`},
	} {
		if got := ErrorText(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("ErrorText(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}
