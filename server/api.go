package server

import "net/http"

// api registers the routes of /v1 (spec/api.md).
func (s *Server) api() {
	const read, write = "read", "write"
	for _, rt := range []Route{
		{Method: http.MethodPost, Path: "/v1/workflows/{workflow}/runs", Scope: write, Handler: s.startRun},
		{Method: http.MethodGet, Path: "/v1/runs/{id}", Scope: read, Handler: s.getRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/signals/{name}", Scope: write, Handler: s.signalRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/cancel", Scope: write, Handler: s.cancelRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/retry", Scope: write, Handler: s.retryRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/decision", Scope: write, Handler: s.decideRun},
	} {
		s.Handle(rt)
	}
}
