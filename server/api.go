package server

import "net/http"

// api registers the routes of /v1 (spec/api.md).
func (s *Server) api() {
	const read, write, deploy, admin = "read", "write", "deploy", "admin"
	for _, rt := range []Route{
		{Method: http.MethodPost, Path: "/v1/workflows/{workflow}/runs", Scope: write, Handler: s.startRun},
		{Method: http.MethodGet, Path: "/v1/workflows", Scope: read, Handler: s.listWorkflows},
		{Method: http.MethodPost, Path: "/v1/versions", Scope: deploy, Handler: s.deploy, MaxBody: maxDeployBody},
		{Method: http.MethodPost, Path: "/v1/versions/plan", Scope: read, Handler: s.plan, MaxBody: maxDeployBody},
		{Method: http.MethodGet, Path: "/v1/workflows/{workflow}/versions", Scope: read, Handler: s.listVersions},
		{Method: http.MethodGet, Path: "/v1/workflows/{workflow}/versions/{version}/graph", Scope: read, Handler: s.versionGraph},
		{Method: http.MethodGet, Path: "/v1/runs", Scope: read, Handler: s.listRuns},
		{Method: http.MethodGet, Path: "/v1/runs/{id}", Scope: read, Handler: s.getRun},
		{Method: http.MethodGet, Path: "/v1/runs/by-ref", Scope: read, Handler: s.getRunByRef},
		{Method: http.MethodGet, Path: "/v1/runs/{id}/decision", Scope: read, Handler: s.offerDecision},
		{Method: http.MethodGet, Path: "/v1/runs/{id}/decision/plan", Scope: read, Handler: s.planDecision},
		{Method: http.MethodGet, Path: "/v1/runs/{id}/events", Scope: read, Handler: s.runEvents},
		{Method: http.MethodGet, Path: "/v1/runs/{id}/log", Scope: read, Handler: s.runLog},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/signals/{name}", Scope: write, Handler: s.signalRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/cancel", Scope: write, Handler: s.cancelRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/retry", Scope: write, Handler: s.retryRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/decision", Scope: write, Handler: s.decideRun},
		{Method: http.MethodGet, Path: "/v1/dead-letters", Scope: read, Handler: s.listDeadLetters},
		{Method: http.MethodPost, Path: "/v1/dead-letters/{id}/retry", Scope: write, Handler: s.retryDeadLetter},
		{Method: http.MethodPost, Path: "/v1/dead-letters/{id}/drop", Scope: write, Handler: s.dropDeadLetter},
		{Method: http.MethodGet, Path: "/v1/breakers", Scope: read, Handler: s.listBreakers},
		{Method: http.MethodGet, Path: "/v1/workers", Scope: read, Handler: s.listWorkers},
		{Method: http.MethodGet, Path: "/v1/schedules", Scope: read, Handler: s.listSchedules},
		{Method: http.MethodPost, Path: "/v1/schedules/{workflow}/{name}/pause", Scope: write, Handler: s.scheduleAction("pause")},
		{Method: http.MethodPost, Path: "/v1/schedules/{workflow}/{name}/unpause", Scope: write, Handler: s.scheduleAction("unpause")},
		{Method: http.MethodPost, Path: "/v1/schedules/{workflow}/{name}/trigger", Scope: write, Handler: s.scheduleAction("trigger")},
		{Method: http.MethodGet, Path: "/v1/records/runs", Scope: read, Handler: s.recordRuns},
		{Method: http.MethodGet, Path: "/v1/records/runs/{id}", Scope: read, Handler: s.recordRun},
		{Method: http.MethodGet, Path: "/v1/records/runs/{id}/steps", Scope: read, Handler: s.recordSteps},
		{Method: http.MethodGet, Path: "/v1/records/runs/{id}/signals", Scope: read, Handler: s.recordSignals},
		{Method: http.MethodGet, Path: "/v1/records/runs/{id}/attempts", Scope: read, Handler: s.recordAttempts},
		{Method: http.MethodGet, Path: "/v1/records/runs/{id}/output", Scope: read, Handler: s.recordOutput},
		{Method: http.MethodGet, Path: "/v1/records/events", Scope: read, Handler: s.recordEvents},
		{Method: http.MethodGet, Path: "/v1/records/versions", Scope: read, Handler: s.recordVersions},
		{Method: http.MethodGet, Path: "/v1/records/graphs/{workflow}/{hash}", Scope: read, Handler: s.recordGraph},
		{Method: http.MethodGet, Path: "/v1/records/dead-letters", Scope: read, Handler: s.recordDeadLetters},
		{Method: http.MethodGet, Path: "/v1/records/breakers", Scope: read, Handler: s.recordBreakers},
		{Method: http.MethodGet, Path: "/v1/records/schedules", Scope: read, Handler: s.recordSchedules},
		{Method: http.MethodGet, Path: "/v1/records/queue", Scope: read, Handler: s.recordQueue},
		{Method: http.MethodGet, Path: "/v1/records/sources/{workflow}/{hash}", Scope: read, Handler: s.recordSource},
		{Method: http.MethodGet, Path: "/v1/openapi.json", Handler: s.openAPI},
		{Method: http.MethodGet, Path: "/v1/tokens", Scope: admin, Handler: s.listTokens},
		{Method: http.MethodPost, Path: "/v1/tokens", Scope: admin, Handler: s.createToken},
		{Method: http.MethodDelete, Path: "/v1/tokens/{name}", Scope: admin, Handler: s.revokeToken},
	} {
		s.Handle(rt)
	}
}
