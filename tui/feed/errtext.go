package feed

import (
	"encoding/json"
	"strings"
)

// ErrorText is a stored error ({"kind","message",...}) as one line of
// words, "kind: message" (its first line), unescaped (callers escape it for the terminal);
// the raw JSON when it is not such an object, "" when there is none.
func ErrorText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var e struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Caught  bool   `json:"caught"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return strings.TrimSpace(string(raw))
	}
	if e.Caught {
		e.Kind = "caught " + e.Kind
	}
	msg := strings.TrimSpace(e.Message)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] + " …"
	}
	if e.Kind != "" {
		return e.Kind + ": " + msg
	}
	return msg
}
