package server

import (
	"encoding/json"
	"net/http"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
)

// signalRun delivers the signal of the path to the run, with the body
// (any JSON value; none is {}) as its data: 202 with the run.
func (s *Server) signalRun(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	data, err := decodeValue(b)
	if err != nil {
		return err
	}
	v, err := s.door.Signal(r.Context(), r.PathValue("id"), r.PathValue("name"), data)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, v)
}

// cancelRun asks for the run and its descendants to be canceled: 202 with
// the run (canceled at once when nobody works on it).
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if err := decodeBody(b, &struct{}{}); err != nil {
		return err
	}
	v, err := s.door.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, v)
}

// retryRequest is the body of POST /v1/runs/{id}/retry.
type retryRequest struct {
	From string `json:"from"`
}

// retryRun redrives a failed or canceled run (from a step): 202 with the
// run.
func (s *Server) retryRun(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var req retryRequest
	if err := decodeBody(b, &req); err != nil {
		return err
	}
	v, err := s.door.Retry(r.Context(), r.PathValue("id"), req.From)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, v)
}

// decideRequest is the body of POST /v1/runs/{id}/decision.
type decideRequest struct {
	Choose string `json:"choose"`
	// From is the version the caller saw the run bound to; a run decided
	// or rebound since is not decided again (409).
	From string `json:"from"`
}

// decideRun makes the version decision of a blocked run: 200 with the run
// that goes on (for "new", the run that replaces it).
func (s *Server) decideRun(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var req decideRequest
	if err := decodeBody(b, &req); err != nil {
		return err
	}
	choice, err := interp.ParseChoice(req.Choose)
	if err != nil {
		return &Problem{Status: http.StatusBadRequest, Field: "choose", Detail: err.Error()}
	}
	d, err := s.door.Decide(r.Context(), r.PathValue("id"), choice, req.From, "api "+caller(r.Context()))
	if err != nil {
		return err
	}
	b, err = api.DecidedJSON(d)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, json.RawMessage(b))
}
