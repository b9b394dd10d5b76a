package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Problem is an error answer, written as application/problem+json
// (RFC 9457): the HTTP status, its title, the message (the same words the
// CLI prints) and, for a workflow input, the input's name.
type Problem struct {
	Status int
	Detail string
	// Field is the workflow input (or the request body's field) at fault.
	Field string
	// RetryAfter, in whole seconds, is sent as Retry-After when > 0.
	RetryAfter int
	// Public is what a 5xx answer says of Err instead of Err's text
	// (serverFault); "" for the words of store's sentinel errors.
	Public string
	Err    error
}

func (p *Problem) Error() string { return p.Detail }

func (p *Problem) Unwrap() error { return p.Err }

// Problemf returns a Problem with status and a formatted message.
func Problemf(status int, format string, args ...any) *Problem {
	return &Problem{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// writeProblem writes p as problem+json, with requestID (a 5xx answer's
// name in the log) when not "".
func writeProblem(w http.ResponseWriter, p *Problem, requestID string) {
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="flowrun"`)
	}
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(p.RetryAfter))
	}
	if requestID != "" {
		w.Header().Set("X-Request-Id", requestID)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	pj := api.ProblemJSON{Type: "about:blank", Title: http.StatusText(p.Status), Status: p.Status, Detail: p.Detail, Field: p.Field, RequestID: requestID}
	if rf := (*api.Refusal)(nil); p.Status < 500 && errors.As(p.Err, &rf) {
		pj.Hint, pj.Continue = rf.Hint, rf.Continue
		if rf.Continue != "" {
			pj.Hint = fmt.Sprintf("A worker of this server goes on with the unfinished run by itself; follow it at GET /v1/runs/%s/events", rf.Continue)
		}
	}
	if de := (*interp.DecidedError)(nil); p.Status < 500 && errors.As(p.Err, &de) {
		pj.Decided = api.DecidedProblemOf(de)
	}
	if h := (*store.LetterHeldError)(nil); p.Status < 500 && errors.As(p.Err, &h) {
		pj.Held = api.HeldProblemOf(h)
	}
	if se := (*api.SignalDataError)(nil); p.Status < 500 && errors.As(p.Err, &se) {
		pj.Signal = &api.SignalProblemJSON{Type: se.Type, Example: se.Example}
	}
	if de := (*api.DeployError)(nil); p.Status < 500 && errors.As(p.Err, &de) {
		// The fix and the diagnostics of a refused deploy.
		pj.Deploy = &api.DeployProblemJSON{Hint: de.Hint, Diagnostics: de.Diagnostics}
		if diags, _ := de.Diags(); len(diags) > 0 {
			pj.Deploy.Diags = api.DiagnosticsJSON(diags)
		}
	}
	if re := (*interp.RunRefError)(nil); p.Status < 500 && errors.As(p.Err, &re) {
		// The parts the CLI prints of a reference that names no single
		// run (its candidates, the nearest workflows).
		pj.Ref = api.RefProblemOf(re)
	}
	b, _ := json.Marshal(pj)
	_, _ = w.Write(append(b, '\n'))
}

// writeError answers err as problem+json: a *Problem as it is, an engine
// error by its kind (problemOf). Every answer of the server goes through
// it. A server error (5xx) is the exception: the store's error text can
// name the database file or server, so its detail is logged under a new
// request id, and the answer says what kind of fault it was (serverFault)
// and gives the id.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p := problemOf(err)
	if p.Status < 500 {
		writeProblem(w, p, "")
		return
	}
	id := api.NewRequestID()
	detail := p.Detail
	if p.Err != nil && p.Err.Error() != detail {
		detail += ": " + p.Err.Error()
	}
	s.log.ErrorContext(r.Context(), "request failed", "request_id", id, "method", r.Method, "path", r.URL.Path,
		"status", p.Status, "error", detail)
	answer := *p
	answer.Detail = fmt.Sprintf("%s; the server logged the detail under request id %s", serverFault(p), id)
	writeProblem(w, &answer, id)
}

// streamFault logs why an event stream ends in error under a new request
// id, and returns what the stream's last frame says: the id, not the
// store's text.
func (s *Server) streamFault(r *http.Request, err error) string {
	id := api.NewRequestID()
	s.log.ErrorContext(r.Context(), "event stream failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "error", err.Error())
	return fmt.Sprintf("%s; the server logged the detail under request id %s", serverFault(&Problem{Err: err}), id)
}

// serverFault is what a 5xx answer may say of its cause: the server's own
// words when it wrote them (no Err), Public when set, else api.Fault's.
func serverFault(p *Problem) string {
	switch {
	case p.Err == nil:
		return p.Detail
	case p.Public != "":
		return p.Public
	}
	return api.Fault(p.Err)
}

// problemOf classifies an error into a status, keeping its message:
// unknown names are 404, a state the request does not fit is 409, bad
// input 400 (422 for workflow inputs), a busy store 503, the rest 500.
func problemOf(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var ie *interp.InputError
	var ce *interp.ConvertError
	var ke *interp.KeyError
	var kue *interp.KeyInUseError
	var sde *interp.SignalDataError
	var rf *api.Refusal
	var asd *api.SignalDataError
	var held *store.LetterHeldError
	switch {
	case errors.As(err, &held):
		return &Problem{Status: http.StatusConflict, Detail: held.Error(), Err: err}
	case errors.As(err, &rf):
		return &Problem{Status: rf.Status, Detail: rf.Message, Field: rf.Field, Err: err}
	case errors.As(err, &asd):
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: asd.Message, Err: err}
	case errors.As(err, &sde):
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: err.Error(), Err: err}
	case errors.As(err, &ie):
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: err.Error(), Field: ie.Input, Err: err}
	case errors.As(err, &ce):
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: err.Error(), Field: ce.Name, Err: err}
	case errors.As(err, &ke):
		return &Problem{Status: http.StatusUnprocessableEntity, Detail: err.Error(), Err: err}
	case errors.Is(err, interp.ErrInvalidRunRef):
		return &Problem{Status: http.StatusBadRequest, Detail: err.Error(), Err: err}
	case errors.As(err, &kue):
		return &Problem{Status: http.StatusConflict, Detail: err.Error(), Err: err}
	case errors.Is(err, store.ErrNotFound):
		return &Problem{Status: http.StatusNotFound, Detail: trimSentinel(err), Err: err}
	case errors.Is(err, store.ErrAmbiguous):
		return &Problem{Status: http.StatusBadRequest, Detail: err.Error(), Err: err}
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrVersionConflict):
		return &Problem{Status: http.StatusConflict, Detail: trimSentinel(err), Err: err}
	case errors.Is(err, store.ErrTimeout):
		// The database stopped a read at the query timeout: it is loaded,
		// or the read is heavy; asking again at once would add to it.
		return &Problem{Status: http.StatusServiceUnavailable, Detail: err.Error(), RetryAfter: timeoutRetryAfter, Err: err}
	case errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrFull), errors.Is(err, store.ErrSchemaTooNew):
		return &Problem{Status: http.StatusServiceUnavailable, Detail: err.Error(), RetryAfter: 1, Err: err}
	}
	return &Problem{Status: http.StatusInternalServerError, Detail: err.Error(), Err: err}
}

// timeoutRetryAfter is the Retry-After, in seconds, of a read the store
// stopped at its query timeout.
const timeoutRetryAfter = 5

// trimSentinel drops the store's sentinel words from the end of a message
// (": not found", ": conflict"): the status says it.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{store.ErrConflict, store.ErrNotFound} {
		msg = strings.TrimSuffix(msg, ": "+s.Error())
	}
	return msg
}
