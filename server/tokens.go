package server

import (
	"net/http"

	"github.com/flowrun/flowrun/store"
)

// This file serves the token routes (scope admin): list, create, revoke,
// as flowrun tokens does, through the one door (api.TokenKeeper).

// createTokenRequest is the body of POST /v1/tokens.
type createTokenRequest struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	ts, err := s.door.Tokens(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ts)
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
	scope := store.ScopeWrite
	if req.Scope != "" {
		scope = store.TokenScope(req.Scope)
	}
	t, err := s.door.CreateToken(r.Context(), req.Name, scope)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusCreated, t)
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	t, err := s.door.RevokeToken(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}
