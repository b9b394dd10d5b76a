package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/store"
)

// Sessions last this long from sign-in; then the user signs in again.
const sessionLife = 8 * time.Hour

// maxSessions bounds the sessions held at once: past it, expired ones are
// dropped, and a sign-in is refused while it is still full.
const maxSessions = 10000

// Cookie names.
const (
	sessionCookie = "flowrun_session"
	loginCookie   = "flowrun_login" // the sign-in form's CSRF token
)

// session is one signed-in browser: who signed in (the token's name and
// scope, never the token), the hash that tells whether the token was
// revoked since, and the CSRF token of its forms.
type session struct {
	id, csrf string
	name     string
	scope    store.TokenScope
	hash     string // "" without auth
	expires  time.Time
}

// can reports whether the session's scope allows need.
func (s *session) can(need store.TokenScope) bool { return s.scope.Allows(need) }

// sessions are the signed-in browsers, in memory: a restart signs every
// browser out, which costs a sign-in, never a token.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// add stores a new session; false when full.
func (ss *sessions) add(s *session, now time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[string]*session{}
	}
	if len(ss.m) >= maxSessions {
		for id, o := range ss.m {
			if !now.Before(o.expires) {
				delete(ss.m, id)
			}
		}
		if len(ss.m) >= maxSessions {
			return false
		}
	}
	ss.m[s.id] = s
	return true
}

func (ss *sessions) get(id string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.m[id]
}

func (ss *sessions) drop(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, id)
}

// errSignedOut is a request without a live session; errRevoked one whose
// session ended because its token was revoked (it is errSignedOut too).
// Both are made by the linker, not by an init (init_cheap.txtar).
var (
	errSignedOut       = errors.New("not signed in")
	errRevoked   error = revokedError{}
)

type revokedError struct{}

func (revokedError) Error() string        { return "not signed in: the token was revoked" }
func (revokedError) Is(target error) bool { return target == errSignedOut }

// current returns the request's session: its cookie's, while it has not
// expired and its token was not revoked. A server without auth has one
// session of scope admin for every browser (Handler.open), for the CSRF
// token of its forms; it stores nothing per browser, so requests without
// cookies cannot fill the sessions.
func (h *Handler) current(w http.ResponseWriter, r *http.Request) (*session, error) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if s := h.sessions.get(c.Value); s != nil {
			if !h.clk.Now().Before(s.expires) {
				h.sessions.drop(s.id)
			} else if s.hash == "" {
				return s, nil
			} else if ok, err := h.tokenValid(r.Context(), s.hash); err != nil {
				return nil, err // the store failed: the session stays
			} else if ok {
				return s, nil
			} else {
				h.sessions.drop(s.id) // the token was revoked: so is the session
				return nil, errRevoked
			}
		}
	}
	if h.opts.NoAuth {
		return h.open, nil
	}
	return nil, errSignedOut
}

// tokenValid reports whether the token of hash is still known, or the
// store's error when it could not tell: a store that fails for a moment
// does not end every session, as a revoked token ends its own.
func (h *Handler) tokenValid(ctx context.Context, hash string) (bool, error) {
	_, err := h.opts.Tokens(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// start begins a session and sets its cookie.
func (h *Handler) start(w http.ResponseWriter, name string, scope store.TokenScope, hash string) (*session, error) {
	s := &session{id: randomHex(32), csrf: randomHex(32), name: name, scope: scope, hash: hash, expires: h.clk.Now().Add(sessionLife)}
	if !h.sessions.add(s, h.clk.Now()) {
		return nil, errors.New("the server holds as many sessions as it can; try again when some have expired")
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.id, Path: "/", HttpOnly: true, Secure: h.opts.TLS,
		SameSite: http.SameSiteStrictMode, Expires: s.expires})
	return s, nil
}

// signIn checks a token and begins its session.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, token string) (*session, error) {
	t, err := h.opts.Tokens(r.Context(), api.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errors.New("the token is not known or was revoked; create one with: flowrun tokens create NAME")
	}
	if err != nil {
		return nil, err
	}
	return h.start(w, t.Name, t.Scope, t.Hash)
}

// signOut ends the request's session.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		h.sessions.drop(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: h.opts.TLS,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// csrfOK reports whether a form carries the session's CSRF token.
func csrfOK(s *session, r *http.Request) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

// Name, Scope and CSRF are what the pages show and put in forms; Hash
// says whether the session came from a token (one can sign out).
func (s *session) Name() string            { return s.name }
func (s *session) Scope() store.TokenScope { return s.scope }
func (s *session) CSRF() string            { return s.csrf }
func (s *session) Hash() bool              { return s.hash != "" }
func (s *session) CanAdmin() bool          { return s.can(store.ScopeAdmin) }
