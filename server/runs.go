package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// startRequest is the body of POST /v1/workflows/{workflow}/runs.
type startRequest struct {
	Inputs  map[string]any `json:"inputs"`
	Version string         `json:"version"`
	Wait    string         `json:"wait"`
	New     bool           `json:"new"`
}

// startRun starts a run of a stored version, or finds the run its key
// names (interp.StartRun decides which): 201 with the new run, 200 with
// the run found, as show --json prints it.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	var req startRequest
	if err := decodeBody(b, &req); err != nil {
		return err
	}
	wait, err := s.parseWait(req.Wait)
	if err != nil {
		return err
	}
	ctx := r.Context()
	view, created, err := s.door.Start(ctx, api.StartRequest{Workflow: r.PathValue("workflow"), Inputs: req.Inputs, Version: req.Version, New: req.New})
	var pe *api.PinError
	if errors.As(err, &pe) {
		return &Problem{Status: http.StatusBadRequest, Field: "version", Detail: err.Error(), Err: err}
	}
	if err != nil {
		return err
	}
	run := view
	if wait > 0 {
		if err := s.waitSettled(ctx, run.RunID, wait); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil // the client is gone
		}
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/runs/"+run.RunID)
	}
	if wait == 0 {
		return writeJSON(w, status, view)
	}
	return s.writeRun(ctx, w, status, run.RunID)
}

// parseWait reads a start's "wait": a Go duration from 0 to MaxWait.
func (s *Server) parseWait(text string) (time.Duration, error) {
	if text == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 || d > s.opts.MaxWait {
		return 0, &Problem{Status: http.StatusBadRequest, Field: "wait",
			Detail: fmt.Sprintf("wait %q is not a duration from 0s to %s, such as \"30s\"", text, s.opts.MaxWait)}
	}
	return d, nil
}

// settleEvery is how often a start with "wait" looks at its run anyway;
// it looks at each commit the store tells of too.
const settleEvery = 200 * time.Millisecond

// waitSettled waits until the run has ended, parked (waiting, blocked) or
// d has passed, or the request is gone.
//
// A graceful stop (CloseStreams) ends the wait too: the run is answered
// as it is then.
func (s *Server) waitSettled(ctx context.Context, runID string, d time.Duration) error {
	ctx, cancel := clockTimeout(ctx, s, d)
	defer cancel()
	stop := context.AfterFunc(s.streams, cancel)
	defer stop()
	defer s.watchCommits()()
	for {
		changed, since := s.nextChange(), s.clk.Now()
		run, err := s.st.RunGetHead(ctx, runID)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if run.Status.Terminal() || run.Status == store.RunWaiting || run.Status == store.RunBlocked {
			return nil
		}
		if s.awaitChange(ctx, changed, settleEvery, streamGap, since) != nil {
			return nil
		}
	}
}

// clockTimeout is context.WithTimeout on the server's clock.
func clockTimeout(ctx context.Context, s *Server, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	t := s.clk.NewTimer(d)
	done := make(chan struct{})
	go func() { // owned by the returned cancel, which ends it
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() { once.Do(func() { close(done); cancel() }) }
}

// writeRun answers the run as show --json prints it.
func (s *Server) writeRun(ctx context.Context, w http.ResponseWriter, status int, runID string) error {
	v, err := s.eng.Show(ctx, runID)
	if err != nil {
		return err
	}
	return writeJSON(w, status, v)
}

// getRun answers GET /v1/runs/{id}: the run named by a run reference
// (an id or a unique prefix of it, @last, WORKFLOW@last).
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	return s.answerRun(w, r, r.PathValue("id"))
}

// getRunByRef answers GET /v1/runs/by-ref?ref=REF: the run named by any
// run reference, WORKFLOW/KEY included.
func (s *Server) getRunByRef(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "ref")
	if err != nil {
		return err
	}
	if !q.Has("ref") {
		return &Problem{Status: http.StatusBadRequest, Field: "ref", Detail: "name the run with ?ref=, such as ?ref=deploy/prod"}
	}
	return s.answerRun(w, r, q.Get("ref"))
}

// answerRun answers the view of the run ref names, through the one door.
func (s *Server) answerRun(w http.ResponseWriter, r *http.Request, ref string) error {
	v, err := s.door.Run(r.Context(), ref)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// offerDecision answers GET /v1/runs/{id}/decision: whether a version
// decision can be taken on the run now.
func (s *Server) offerDecision(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	o, err := s.door.Offer(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.OfferOf(o))
}

// findRun resolves a run reference as the CLI does (interp.ResolveRun):
// an id or a unique prefix of one, @last, WORKFLOW@last. (WORKFLOW/KEY
// holds a slash, which a path segment cannot: GET /v1/runs?workflow=W&key=K
// finds that run.)
func (s *Server) findRun(ctx context.Context, ref string) (store.Run, error) {
	return s.eng.ResolveRun(ctx, ref)
}

// pinnedGraph is the graph of the stored version of workflow that a start
// request's "version" pin names (the newest when it is empty); a pin that
// matches nothing or is malformed is a 400 naming the field.
func (s *Server) pinnedGraph(ctx context.Context, workflow, pin string) (*graph.Graph, error) {
	v, err := s.eng.ResolveVersion(ctx, workflow, pin)
	var pe *interp.PinError
	if errors.As(err, &pe) {
		return nil, &Problem{Status: http.StatusBadRequest, Field: "version", Detail: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	_, g, err := s.eng.VersionGraph(ctx, workflow, v.Version)
	return g, err
}
