package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// This file serves the token routes (scope admin): list, create, revoke,
// as flowrun tokens does.

// TokenJSON is one token as `flowrun tokens list --json` prints it and
// GET /v1/tokens lists it: never the token itself.
type TokenJSON struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	CreatedAt string `json:"created_at"`
}

// TokensJSON returns the JSON forms of tokens.
func TokensJSON(ts []store.Token) []TokenJSON {
	out := make([]TokenJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, TokenJSON{Name: t.Name, Scope: string(t.Scope), CreatedAt: interp.JSONTime(t.CreatedAt)})
	}
	return out
}

// TokenNameProblem says what is wrong with a token name, or "": 1 to 64
// letters, digits, '.', '_' or '-', starting with a letter or digit (it
// is shown in lists, logs and messages).
func TokenNameProblem(name string) string {
	if validTokenName(name) {
		return ""
	}
	return fmt.Sprintf("token name %q is not 1 to 64 letters, digits, '.', '_' or '-' (starting with a letter or digit)", name)
}

// validTokenName reports whether name is 1 to 64 ASCII letters, digits,
// '.', '_' or '-', the first a letter or digit. (A regular expression
// compiled at package init cost every flowrun process, serve or not.)
func validTokenName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

// createTokenRequest is the body of POST /v1/tokens.
type createTokenRequest struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
}

// createdToken is the answer of POST /v1/tokens: the token, shown once.
type createdToken struct {
	TokenJSON
	Token string `json:"token"`
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	ts, err := s.st.TokenList(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, TokensJSON(ts))
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var req createTokenRequest
	if err := decodeBody(b, &req); err != nil {
		return err
	}
	if p := TokenNameProblem(req.Name); p != "" {
		return &Problem{Status: http.StatusBadRequest, Field: "name", Detail: p}
	}
	scope := store.ScopeWrite
	if req.Scope != "" {
		scope = store.TokenScope(req.Scope)
	}
	if !scope.Valid() {
		return &Problem{Status: http.StatusBadRequest, Field: "scope", Detail: fmt.Sprintf("scope %q is not read, write, deploy or admin", req.Scope)}
	}
	token, err := NewToken()
	if err != nil {
		return err
	}
	t, err := s.st.TokenCreate(r.Context(), store.TokenCreateParams{Name: req.Name, Scope: scope, Hash: HashToken(token), Now: s.clk.Now()})
	if errors.Is(err, store.ErrConflict) {
		return &Problem{Status: http.StatusConflict, Field: "name", Err: err,
			Detail: fmt.Sprintf("a token named %q exists; pick another name, or revoke it first", req.Name)}
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusCreated, createdToken{TokenJSON: TokensJSON([]store.Token{t})[0], Token: token})
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	t, err := s.st.TokenRevoke(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return &Problem{Status: http.StatusNotFound, Err: err, Detail: fmt.Sprintf("no token is named %q; list them with GET /v1/tokens", name)}
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, TokensJSON([]store.Token{t})[0])
}
