package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// ProblemJSON is the body of an error answer of the API,
// application/problem+json (RFC 9457), as the server writes it and Client
// reads it.
type ProblemJSON struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Field  string `json:"field,omitempty"`
	// RequestID names a 5xx answer in the server's log, which has the
	// detail the answer leaves out.
	RequestID string `json:"request_id,omitempty"`
	// Ref is set when a run reference named no single run: the parts
	// the CLI prints (the candidates, the nearest workflows).
	Ref *RefProblemJSON `json:"ref,omitempty"`
	// Deploy is set when a deploy was refused (DeployError): the fix and
	// the diagnostics.
	Deploy *DeployProblemJSON `json:"deploy,omitempty"`
	// Hint says how to go on from a refusal (Refusal), as the CLI says it.
	Hint string `json:"hint,omitempty"`
	// Continue names the unfinished run a refusal leaves as it is
	// (Refusal.Continue); the hint then says how it goes on.
	Continue string `json:"continue,omitempty"`
	// Signal is set for signal data of the wrong type (SignalDataError).
	Signal *SignalProblemJSON `json:"signal,omitempty"`
	// Decided is set when a version decision came too late: the run was
	// decided already (interp.DecidedError).
	Decided *DecidedProblemJSON `json:"decided,omitempty"`
	// Held is set when a dead letter is refused because another process
	// is retrying it (store.LetterHeldError).
	Held *HeldProblemJSON `json:"held,omitempty"`
}

// HeldProblemJSON is the wire form of a store.LetterHeldError: the letter,
// the process retrying it and when its claim lapses unless renewed.
type HeldProblemJSON struct {
	ID    int64  `json:"id"`
	Owner string `json:"owner"`
	Until string `json:"until"`
}

// HeldProblemOf is the wire form of h.
func HeldProblemOf(h *store.LetterHeldError) *HeldProblemJSON {
	return &HeldProblemJSON{ID: h.ID, Owner: h.Owner, Until: interp.JSONTime(h.Until)}
}

// RefProblemJSON is what an answer says of a run reference that names no
// single run (interp.RunRefError).
type RefProblemJSON struct {
	Ref        string                  `json:"ref"`
	Problem    string                  `json:"problem"` // invalid, no_match or ambiguous
	Message    string                  `json:"message"`
	Candidates []interp.RunSummaryJSON `json:"candidates"`
	More       bool                    `json:"more"`
	Workflows  []string                `json:"workflows"`
}

// refProblems are the wire words of the run reference problems (a table,
// not a map: data in the binary rather than work at start-up).
var refProblems = [...]struct {
	problem interp.RunRefProblem
	word    string
}{{interp.RefInvalid, "invalid"}, {interp.RefNoMatch, "no_match"}, {interp.RefAmbiguous, "ambiguous"}}

// refProblemWord is the wire word of p ("" for a problem without one).
func refProblemWord(p interp.RunRefProblem) string {
	for _, r := range refProblems {
		if r.problem == p {
			return r.word
		}
	}
	return ""
}

// RefProblemOf is the wire form of e.
func RefProblemOf(e *interp.RunRefError) *RefProblemJSON {
	ws := e.Workflows
	if ws == nil {
		ws = []string{}
	}
	return &RefProblemJSON{Ref: e.Ref, Problem: refProblemWord(e.Problem), Message: e.Message,
		Candidates: interp.RunSummaries(e.Candidates), More: e.More, Workflows: ws}
}

// runRefError is the error r stands for, as the engine returned it.
func (r *RefProblemJSON) runRefError() (*interp.RunRefError, error) {
	e := &interp.RunRefError{Ref: r.Ref, Message: r.Message, More: r.More, Workflows: r.Workflows}
	for _, p := range refProblems {
		if p.word == r.Problem {
			e.Problem = p.problem
		}
	}
	if e.Problem == 0 {
		return nil, fmt.Errorf("unknown run reference problem %q", r.Problem)
	}
	for _, c := range r.Candidates {
		created, err := time.Parse(time.RFC3339Nano, c.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: created_at %q: %w", c.RunID, c.CreatedAt, err)
		}
		e.Candidates = append(e.Candidates, store.RunSummary{ID: c.RunID, Workflow: c.Workflow,
			Version: c.Version, Key: c.Key, Status: store.RunStatus(c.Status), CreatedAt: created,
			StepsTotal: c.StepsTotal, StepsDone: c.StepsDone})
	}
	return e, nil
}

// Fault is what an answer of the server (an API's problem, a dashboard's
// page) may say of a failure of the store or of the server: the store's
// sentinel when err is one (they name no file), else "internal error".
// The error's own text can name the database file or server, so it goes
// to the server's log only, under a request id (security.md §11).
func Fault(err error) string {
	for _, sentinel := range []error{store.ErrBusy, store.ErrTimeout, store.ErrFull, store.ErrSchemaTooNew} {
		if errors.Is(err, sentinel) {
			return sentinel.Error()
		}
	}
	return "internal error"
}

// NewRequestID returns 64 random bits in hex: a name for one failed
// request in the server's log, which its answer gives.
func NewRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// Errors a Problem wraps by its status, for the statuses the store's
// sentinels do not name.
var (
	// ErrInvalid: the request was refused as bad input (400, 422).
	ErrInvalid = errors.New("invalid request")
	// ErrUnauthorized: no token, or one the server does not know (401).
	ErrUnauthorized = errors.New("not signed in")
	// ErrForbidden: the token's scope does not allow the request (403).
	ErrForbidden = errors.New("not allowed")
	// ErrRateLimited: the token made too many requests (429).
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: the server failed (5xx other than 503).
	ErrServer = errors.New("server error")
)

// Problem is an error answer of the server: the request reached flowrun
// serve, which refused it or failed. Error is the server's words (the
// engine's, as the CLI prints them locally).
type Problem struct {
	// Server is the base URL of the server that answered.
	Server string
	ProblemJSON
	// RetryAfter is the answer's Retry-After (0 when none).
	RetryAfter time.Duration
}

func (p *Problem) Error() string {
	if p.Detail != "" {
		return p.Detail
	}
	return fmt.Sprintf("%s answered %d %s", p.Server, p.Status, http.StatusText(p.Status))
}

// Unwrap is the sentinel of the answer's status: the store's for what the
// store says (not found, conflict, busy), this package's otherwise.
func (p *Problem) Unwrap() error {
	switch {
	case p.Status == http.StatusNotFound:
		return store.ErrNotFound
	case p.Status == http.StatusConflict:
		return store.ErrConflict
	case p.Status == http.StatusServiceUnavailable:
		return store.ErrBusy
	case p.Status == http.StatusUnauthorized:
		return ErrUnauthorized
	case p.Status == http.StatusForbidden:
		return ErrForbidden
	case p.Status == http.StatusTooManyRequests:
		return ErrRateLimited
	case p.Status >= 500:
		return ErrServer
	}
	return ErrInvalid
}

// ServerError is a failure to get an answer from the server that Client
// can read: the server is down or refuses connections, the TLS handshake
// failed, the answer is not the API's (HTML from a proxy, a body over the
// limit, JSON of another shape), or the call timed out.
type ServerError struct {
	Server string
	// Op is the request, such as "GET /v1/runs".
	Op  string
	Err error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Server, e.Err)
}

func (e *ServerError) Unwrap() error { return e.Err }
