package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
)

// The page an action lands on says what it did: the action redirects to
// it with the words in the query ("done") and the server's signature of
// them for the session ("sig", an HMAC under a key made with the handler).
// A page shows the words only when the signature holds, so a link made
// elsewhere cannot put words of its own in the page's status line, and
// one session's link shows nothing in another's.

// doneURL is path with the status message msg, signed for s.
func (h *Handler) doneURL(s *session, path, msg string) string {
	return path + "?done=" + url.QueryEscape(msg) + "&sig=" + h.doneSig(s, msg)
}

func (h *Handler) doneSig(s *session, msg string) string {
	m := hmac.New(sha256.New, h.doneKey)
	m.Write([]byte(s.csrf))
	m.Write([]byte{0})
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// doneText is the request's status message when the server signed it for
// s; "" otherwise.
func (h *Handler) doneText(r *http.Request, s *session) string {
	q := r.URL.Query()
	msg := q.Get("done")
	if msg == "" || !hmac.Equal([]byte(q.Get("sig")), []byte(h.doneSig(s, msg))) {
		return ""
	}
	return msg
}
