package api

import (
	"context"
	"net/http"

	"github.com/flowrun/flowrun/interp"
)

// Overview lists what surrounds the runs: the stored workflows, the
// circuit breakers and the workers.
type Overview interface {
	// Workflows lists the stored workflows with their newest version.
	Workflows(ctx context.Context) ([]interp.WorkflowJSON, error)
	// Breakers lists the circuit breakers that have been used.
	Breakers(ctx context.Context) ([]interp.BreakerJSON, error)
	// Workers lists the workers that registered, live or gone.
	Workers(ctx context.Context) ([]interp.WorkerJSON, error)
}

// Workflows implements Overview.
func (l *Local) Workflows(ctx context.Context) ([]interp.WorkflowJSON, error) {
	vs, err := l.st.VersionHeads(ctx, "")
	if err != nil {
		return nil, err
	}
	return interp.Workflows(vs), nil
}

// Breakers implements Overview.
func (l *Local) Breakers(ctx context.Context) ([]interp.BreakerJSON, error) {
	bs, err := l.eng.BreakerList(ctx)
	if err != nil {
		return nil, err
	}
	return interp.Breakers(bs), nil
}

// Workers implements Overview.
func (l *Local) Workers(ctx context.Context) ([]interp.WorkerJSON, error) {
	ws, err := l.eng.WorkerList(ctx)
	if err != nil {
		return nil, err
	}
	return interp.Workers(ws), nil
}

// Workflows implements Overview.
func (c *Client) Workflows(ctx context.Context) ([]interp.WorkflowJSON, error) {
	var out []interp.WorkflowJSON
	return out, c.call(ctx, http.MethodGet, "/v1/workflows", nil, nil, &out)
}

// Breakers implements Overview.
func (c *Client) Breakers(ctx context.Context) ([]interp.BreakerJSON, error) {
	var out []interp.BreakerJSON
	return out, c.call(ctx, http.MethodGet, "/v1/breakers", nil, nil, &out)
}

// Workers implements Overview.
func (c *Client) Workers(ctx context.Context) ([]interp.WorkerJSON, error) {
	var out []interp.WorkerJSON
	return out, c.call(ctx, http.MethodGet, "/v1/workers", nil, nil, &out)
}
