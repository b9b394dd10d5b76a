package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
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

// VersionLister lists a workflow's stored versions.
type VersionLister interface {
	// Versions lists the stored versions of workflow, oldest first, with
	// the runs bound to each; a workflow with none is a *Refusal naming
	// the nearest stored ones.
	Versions(ctx context.Context, workflow string) ([]interp.VersionJSON, error)
}

// Versions implements VersionLister.
func (l *Local) Versions(ctx context.Context, workflow string) ([]interp.VersionJSON, error) {
	vs, err := l.st.VersionHeads(ctx, workflow)
	if err != nil {
		return nil, fmt.Errorf("listing the versions of workflow %q: %w", workflow, err)
	}
	if len(vs) == 0 {
		msg := fmt.Sprintf("no version of workflow %q is stored", workflow)
		if _, nearest, err := l.eng.NearestWorkflows(ctx, workflow); err == nil && len(nearest) > 0 {
			msg += "; the nearest stored workflows are " + quoteJoin(nearest)
		}
		return nil, &Refusal{Status: http.StatusNotFound, Message: msg,
			Hint: "Apply its file first (flowrun apply FILE.hcl), or check the name and --db."}
	}
	runs, err := l.st.RunList(ctx, store.RunListParams{Workflow: workflow})
	if err != nil {
		return nil, fmt.Errorf("listing the runs of workflow %q: %w", workflow, err)
	}
	return interp.VersionsJSON(vs, runs), nil
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// Versions implements VersionLister.
func (c *Client) Versions(ctx context.Context, workflow string) ([]interp.VersionJSON, error) {
	var out []interp.VersionJSON
	return out, c.call(ctx, http.MethodGet, "/v1/workflows/"+url.PathEscape(workflow)+"/versions", nil, nil, &out)
}
