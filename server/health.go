package server

import (
	"net/http"
)

// health registers /healthz (the process answers) and /readyz (the store
// answers and its schema is this binary's), both without a token.
func (s *Server) health() {
	s.Handle(Route{Method: http.MethodGet, Path: "/healthz", Handler: func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}})
	s.Handle(Route{Method: http.MethodGet, Path: "/readyz", Handler: func(w http.ResponseWriter, r *http.Request) error {
		if err := s.st.Ready(r.Context()); err != nil {
			return &Problem{Status: http.StatusServiceUnavailable, Detail: "the store is not ready", Public: "the store is not ready", RetryAfter: 1, Err: err}
		}
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}})
}
