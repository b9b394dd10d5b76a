package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// RunControl steers runs: signal, cancel and retry.
type RunControl interface {
	// Signal delivers a signal to the run ref names, with data as its
	// payload (nil is {}), and answers the run as it is then.
	Signal(ctx context.Context, ref, name string, data json.RawMessage) (*interp.RunView, error)
	// Cancel cancels the run and its child runs: at once when nobody
	// holds it, else at its worker's next heartbeat.
	Cancel(ctx context.Context, ref string) (*interp.RunView, error)
	// Retry redrives a failed or canceled run (from a step and every
	// step after it, when from is not "").
	Retry(ctx context.Context, ref, from string) (*interp.RunView, error)
	// LiveWorkers counts the live workers the store knows of.
	LiveWorkers(ctx context.Context) (int, error)
}

// Refusal is a request the run's state does not allow, in the words of
// every face: what was refused and how to go on. The server carries it
// (the problem's detail, hint and continue).
type Refusal struct {
	// Status is the HTTP status it is answered with: 409 for a state
	// that does not allow it, 404 for a name the run does not have.
	Status        int
	Message, Hint string
	Field         string
	// Continue names the unfinished run the refused request would have
	// moved: it goes on as it is. How to go on with it depends on where
	// the caller stands (flowrun resume drives it in the caller's process;
	// through a server, a worker of the server goes on with it by
	// itself), so each face words it (ContinueHint, the server's hint,
	// the dashboard), and Hint is then empty.
	Continue string
}

// ContinueHint words a refusal's Continue for a caller of the CLI: the
// resume that drives the run here, or, through the server at remote, the
// logs that follow what the server's worker does with it.
func ContinueHint(runID, remote string) string {
	if remote != "" {
		return fmt.Sprintf("A worker of the server goes on with an unfinished run by itself; follow it with: flowrun logs %s -f --server %s", runID, remote)
	}
	return fmt.Sprintf("Continue it with: flowrun resume %s", runID)
}

func (r *Refusal) Error() string { return r.Message }

// Unwrap is the store's sentinel for the status (conflict, not found).
func (r *Refusal) Unwrap() error {
	if r.Status == http.StatusNotFound {
		return store.ErrNotFound
	}
	return store.ErrConflict
}

// SignalDataError is signal data that does not have the type the wait
// step declares: its message, the type and a value of it.
type SignalDataError struct {
	Message string
	Type    string
	Example json.RawMessage
}

func (e *SignalDataError) Error() string { return e.Message }

// SignalProblemJSON is the wire form of a SignalDataError: the problem's
// "signal" member (its detail is the message).
type SignalProblemJSON struct {
	Type    string          `json:"type"`
	Example json.RawMessage `json:"example"`
}

// trimSentinel drops the store's sentinel words from the end of a
// message (": conflict", ": not found"): the refusal says them.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{store.ErrConflict, store.ErrNotFound} {
		msg = strings.TrimSuffix(msg, ": "+s.Error())
	}
	return msg
}

// Signal implements RunControl.
func (l *Local) Signal(ctx context.Context, ref, name string, data json.RawMessage) (*interp.RunView, error) {
	run, err := l.eng.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	_, err = l.eng.Signal(ctx, run.ID, name, data)
	var de *interp.SignalDataError
	switch {
	case errors.As(err, &de):
		ex, _ := json.Marshal(graph.Example(de.Type))
		return nil, &SignalDataError{Message: de.Error(), Type: de.Type.String(), Example: ex}
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		status := http.StatusConflict
		if errors.Is(err, store.ErrNotFound) {
			status = http.StatusNotFound
		}
		return nil, &Refusal{Status: status, Message: trimSentinel(err),
			Hint: fmt.Sprintf("Check the signal name and the run's state with: flowrun show %s", run.ID)}
	case err != nil:
		return nil, err
	}
	return l.eng.Show(ctx, run.ID)
}

// Cancel implements RunControl.
func (l *Local) Cancel(ctx context.Context, ref string) (*interp.RunView, error) {
	run, err := l.eng.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	if run.Status.Terminal() {
		return nil, &Refusal{Status: http.StatusConflict,
			Message: fmt.Sprintf("run %s already ended (%s); there is nothing to cancel", run.ID, run.Status),
			Hint:    fmt.Sprintf("See it with: flowrun show %s", run.ID)}
	}
	var ce *interp.CompensatingError
	if _, err := l.eng.Cancel(ctx, run.ID); errors.As(err, &ce) {
		return nil, &Refusal{Status: http.StatusConflict, Message: ce.Error(),
			Hint: fmt.Sprintf("Follow it with: flowrun logs %s -f", run.ID)}
	} else if errors.Is(err, store.ErrConflict) {
		return nil, &Refusal{Status: http.StatusConflict, Message: fmt.Sprintf("run %s ended before it could be canceled", run.ID),
			Hint: fmt.Sprintf("See it with: flowrun show %s", run.ID)}
	} else if err != nil {
		return nil, err
	}
	return l.eng.Show(ctx, run.ID)
}

// Retry implements RunControl.
func (l *Local) Retry(ctx context.Context, ref, from string) (*interp.RunView, error) {
	run, err := l.eng.ResolveRun(ctx, ref)
	if err != nil {
		return nil, err
	}
	if run.Status != store.RunFailed && run.Status != store.RunCanceled {
		rf := &Refusal{Status: http.StatusConflict,
			Message: fmt.Sprintf("run %s is %s; only a failed or canceled run can be retried", run.ID, run.Status), Continue: run.ID}
		if run.Status == store.RunCompleted {
			rf.Continue, rf.Hint = "", "A completed run is not run again; start a new run of its workflow with: flowrun apply FILE.hcl --new"
		}
		return nil, rf
	}
	if _, err := l.eng.Retry(ctx, run.ID, from); err != nil {
		if errors.Is(err, store.ErrNotFound) && from != "" {
			return nil, &Refusal{Status: http.StatusNotFound, Field: "from", Message: trimSentinel(err),
				Hint: fmt.Sprintf("See the steps with: flowrun show %s", ref)}
		}
		return nil, err
	}
	return l.eng.Show(ctx, run.ID)
}

// LiveWorkers implements RunControl.
func (l *Local) LiveWorkers(ctx context.Context) (int, error) {
	ws, err := l.eng.LiveWorkers(ctx)
	return len(ws), err
}

// Signal implements RunControl.
func (c *Client) Signal(ctx context.Context, ref, name string, data json.RawMessage) (*interp.RunView, error) {
	var body any
	if data != nil {
		body = data
	}
	return c.runAction(ctx, ref, "/signals/"+url.PathEscape(name), body)
}

// Cancel implements RunControl.
func (c *Client) Cancel(ctx context.Context, ref string) (*interp.RunView, error) {
	return c.runAction(ctx, ref, "/cancel", struct{}{})
}

// Retry implements RunControl.
func (c *Client) Retry(ctx context.Context, ref, from string) (*interp.RunView, error) {
	return c.runAction(ctx, ref, "/retry", struct {
		From string `json:"from,omitempty"`
	}{from})
}

// LiveWorkers implements RunControl.
func (c *Client) LiveWorkers(ctx context.Context) (int, error) {
	var ws []struct {
		Live bool `json:"live"`
	}
	if err := c.call(ctx, http.MethodGet, "/v1/workers", nil, nil, &ws); err != nil {
		return 0, err
	}
	n := 0
	for _, w := range ws {
		if w.Live {
			n++
		}
	}
	return n, nil
}

// runAction posts body to a run's action route (/cancel, /retry,
// /signals/NAME) and reads the run it answers. A WORKFLOW/KEY reference,
// which no path segment can hold, is resolved first.
func (c *Client) runAction(ctx context.Context, ref, rest string, body any) (*interp.RunView, error) {
	id := ref
	if strings.Contains(ref, "/") {
		v, err := c.Run(ctx, ref)
		if err != nil {
			return nil, err
		}
		id = v.RunID
	}
	view := &interp.RunView{}
	if err := c.call(ctx, http.MethodPost, runPath(id, rest), nil, body, view); err != nil {
		return nil, err
	}
	return view, nil
}
