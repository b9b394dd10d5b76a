package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

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
	Err        error
}

func (p *Problem) Error() string { return p.Detail }

func (p *Problem) Unwrap() error { return p.Err }

// Problemf returns a Problem with status and a formatted message.
func Problemf(status int, format string, args ...any) *Problem {
	return &Problem{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// problemJSON is the body of a problem answer.
type problemJSON struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Field  string `json:"field,omitempty"`
}

// WriteError answers err as problem+json: a *Problem as it is, an engine
// error by its kind (problemOf).
func WriteError(w http.ResponseWriter, err error) {
	p := problemOf(err)
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="flowrun"`)
	}
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(p.RetryAfter))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	b, _ := json.Marshal(problemJSON{Type: "about:blank", Title: http.StatusText(p.Status), Status: p.Status, Detail: p.Detail, Field: p.Field})
	_, _ = w.Write(append(b, '\n'))
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
	switch {
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
	case errors.Is(err, store.ErrBusy), errors.Is(err, store.ErrFull), errors.Is(err, store.ErrSchemaTooNew):
		return &Problem{Status: http.StatusServiceUnavailable, Detail: err.Error(), RetryAfter: 1, Err: err}
	}
	return &Problem{Status: http.StatusInternalServerError, Detail: err.Error(), Err: err}
}

// trimSentinel drops the store's sentinel words from the end of a message
// (": not found", ": conflict"): the status says it.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{store.ErrConflict, store.ErrNotFound} {
		msg = strings.TrimSuffix(msg, ": "+s.Error())
	}
	return msg
}
