package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/flowrun/flowrun/interp"
)

// Starter starts runs of stored versions.
type Starter interface {
	// Start starts a run of a stored version, or finds the run its key
	// names (interp.Engine.StartRun decides which): created says which.
	Start(ctx context.Context, req StartRequest) (view *interp.RunView, created bool, err error)
}

// StartRequest starts a run: the body of POST
// /v1/workflows/{workflow}/runs, and the workflow of its path.
type StartRequest struct {
	Workflow string `json:"-"`
	// Inputs are converted by the workflow's declared input types
	// (interp.ConvertInputs); defaults are applied.
	Inputs map[string]any `json:"inputs,omitempty"`
	// Version pins the stored version: MAJOR, MAJOR.MINOR or
	// MAJOR.MINOR.PATCH; "" is the newest.
	Version string `json:"version,omitempty"`
	// New starts a new run even when one with the same key exists.
	New bool `json:"new,omitempty"`
}

// PinError is a Version that names no stored version, or is no pin.
type PinError struct{ Err error }

func (e *PinError) Error() string { return e.Err.Error() }
func (e *PinError) Unwrap() error { return e.Err }

// Start implements Starter: the newest stored version the pin accepts,
// with its inputs converted by their declared types.
func (l *Local) Start(ctx context.Context, req StartRequest) (*interp.RunView, bool, error) {
	v, err := l.eng.ResolveVersion(ctx, req.Workflow, req.Version)
	var pe *interp.PinError
	if errors.As(err, &pe) {
		return nil, false, &PinError{Err: err}
	}
	if err != nil {
		return nil, false, err
	}
	_, g, err := l.eng.VersionGraph(ctx, req.Workflow, v.Version)
	if err != nil {
		return nil, false, err
	}
	inputs, err := interp.ConvertInputs(ctx, interp.ConvertInputsParams{Graph: g, Object: req.Inputs})
	if err != nil {
		return nil, false, err
	}
	run, created, err := l.eng.StartRun(ctx, interp.StartParams{Workflow: req.Workflow, Version: g.Version, Inputs: inputs, New: req.New})
	if err != nil {
		return nil, false, err
	}
	view, err := l.eng.Show(ctx, run.ID)
	return view, created, err
}

// Start implements Starter.
func (c *Client) Start(ctx context.Context, req StartRequest) (*interp.RunView, bool, error) {
	view := &interp.RunView{}
	status, err := c.callStatus(ctx, http.MethodPost, "/v1/workflows/"+url.PathEscape(req.Workflow)+"/runs", nil, req, view)
	if err != nil {
		return nil, false, err
	}
	return view, status == http.StatusCreated, nil
}
