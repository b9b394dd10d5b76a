package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// This file serves webhooks (spec/api.md, spec/language.md §9.2): POST
// /hooks/{workflow}/{name} needs no token; the request's signature is its
// credential, checked by interp.Engine.StartWebhook before anything is
// read from the body or written. The server only maps its refusals to
// statuses.

// hookRoutes registers the webhook route.
func (s *Server) hookRoutes() {
	s.Handle(Route{Method: http.MethodPost, Path: "/hooks/{workflow}/{name}", Handler: s.webhook})
}

// webhook answers a webhook request: 201 with the run it started, 200
// with the run a redelivery or a run key names, 401 for a missing or
// wrong signature, 413 for a body over the limit; nothing is written
// unless a run starts.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	workflow, name := r.PathValue("workflow"), r.PathValue("name")
	res, err := s.eng.StartWebhook(ctx, interp.WebhookRequest{Workflow: workflow, Webhook: name, Body: b, Header: r.Header})
	if err != nil {
		return webhookProblem(workflow, name, err)
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/runs/"+res.Run.ID)
	}
	return s.writeRun(ctx, w, status, res.Run.ID)
}

// webhookProblem maps StartWebhook's refusals. An unknown workflow or
// webhook is a 404 that names no other workflow or webhook: the caller
// has no token, so the answer tells nothing of what is stored.
func webhookProblem(workflow, name string, err error) error {
	var sig *interp.SignatureError
	var sec *interp.WebhookSecretError
	var req *interp.WebhookRequestError
	var in *interp.WebhookInputsError
	switch {
	case errors.As(err, &sig):
		return &Problem{Status: http.StatusUnauthorized, Detail: err.Error(), Err: err}
	case errors.As(err, &sec):
		msg := fmt.Sprintf("webhook %q of workflow %q cannot verify requests: its secret is not set in the server's environment", name, workflow)
		return &Problem{Status: http.StatusServiceUnavailable, Err: err, Detail: msg, Public: msg}
	case errors.As(err, &req):
		return &Problem{Status: http.StatusBadRequest, Detail: err.Error(), Err: err}
	case errors.As(err, &in):
		return &Problem{Status: http.StatusUnprocessableEntity, Field: in.Input, Detail: err.Error(), Err: err}
	case errors.Is(err, store.ErrNotFound):
		return &Problem{Status: http.StatusNotFound, Err: err,
			Detail: fmt.Sprintf("no webhook %q of workflow %q is stored; apply the workflow file that declares it", name, workflow)}
	}
	return err
}
