package interp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// flight is a launch in progress: the attempt of an exec or http action
// that a decision pass started (launch, its parameters), and what the
// supervisor runs it with: its context, the gate of a held exec, the
// writer of its live output.
type flight struct {
	*launch
	ctx    context.Context
	cancel context.CancelFunc
	// gate, when set, receives whether the commit of the attempt's start
	// succeeded: the action was launched while that commit was being made
	// and runs its program only once it is durable (runner.hold).
	gate chan bool
	// live stores an exec attempt's output while it runs (liveout.go).
	live *liveOutput
	// runID and workflow name the run, for Options.Mock (mock.go).
	runID, workflow string
	// alert names the alert an alert's flight sends (alert.go); "" for a
	// step's attempt.
	alert string
}

// flightResult is what an action produced: an output, or an error (whose
// Output, for http, is the response).
type flightResult struct {
	f   *flight
	out any
	err *stepError
	// output is the attempt's live output not yet stored, for the commit
	// of its end.
	output []store.OutputChunkWrite
}

var errTimedOut = errors.New("attempt timed out")

// prepare evaluates a unit's action parameters for its next attempt.
func (sc *scheduler) prepare(ctx context.Context, u unit) (*launch, *stepError) {
	n := sc.lastAtt[u.key] + 1
	f := &launch{u: u, started: sc.now, limit: sc.l.g.Limits.OutputBytes}
	if f.limit <= 0 {
		f.limit = graph.DefaultOutputBytes
	}
	ms := u.s.TimeoutMS
	if ms <= 0 {
		ms = graph.DefaultTimeoutMS
	}
	f.timeout = msDuration(ms)
	f.idem = sc.run.ID + "/" + u.key
	a := sc.dataAct(&u)
	if u.s.IdempotencyKey != nil {
		k, err := sc.evalString(ctx, u.s.IdempotencyKey, a)
		if err != nil {
			return nil, &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate idempotency_key: %v", err)}
		}
		f.idem = k
	}
	if se := sc.missingSecret(u.s); se != nil {
		return nil, se
	}
	var se *stepError
	switch u.s.Action.Kind {
	case graph.KindExec:
		f.exec, se = sc.prepareExec(ctx, u.s.Action.Exec, a)
		if f.exec != nil {
			f.exec.env = append(f.exec.env,
				"FLOWRUN_IDEMPOTENCY_KEY="+f.idem,
				"FLOWRUN_RUN_ID="+sc.run.ID,
				"FLOWRUN_STEP="+u.key,
				"FLOWRUN_ATTEMPT="+strconv.Itoa(n),
				// FLOWRUN_OWNER lets a later process that reclaims this
				// attempt find what is left of it (killOrphans) without
				// hitting another database's run of the same id.
				"FLOWRUN_OWNER="+sc.owner)
			if tp := sc.out.traceparent(sc.run, u.key, n); tp != "" {
				f.exec.env = append(f.exec.env, "TRACEPARENT="+tp)
			}
		}
	case graph.KindHTTP:
		f.http, se = sc.prepareHTTP(ctx, u.s.Action.HTTP, a)
		if f.http != nil {
			f.http.idem = f.idem
			f.http.traceparent = sc.out.traceparent(sc.run, u.key, n)
			if e := u.s.Action.HTTP.Emit; e != nil {
				se = sc.prepareEmit(ctx, f.http, e, a, f.idem, n)
			}
		}
	}
	if se != nil {
		return nil, se
	}
	return f, nil
}

// newFlight makes the flight of a launch of the run, with a context of
// its own that stopping it cancels.
func newFlight(l *launch, run store.Run) *flight {
	f := &flight{launch: l, runID: run.ID, workflow: run.Workflow}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f
}

// do runs the attempt under its timeout, measured on the action clock
// (Options.ActionClock: the engine clock unless a test set the real one)
// from the moment its program runs or its request is sent: an exec held
// while its start commits (gate) does not count that commit.
func (f *flight) do(e *Engine) flightResult {
	if e.opts.Mock != nil {
		if f.gate != nil && !<-f.gate {
			return flightResult{f: f, err: &stepError{Kind: "canceled", Message: "the attempt was stopped"}}
		}
		f.gate = nil
		if res, ok := f.mockFlight(e); ok {
			return res
		}
	}
	ctx, cancel := context.WithCancelCause(f.ctx)
	defer cancel(nil)
	var timedOut atomic.Bool
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	arm := func() {
		if f.timeout > 0 {
			timer = e.actionClock().AfterFunc(f.timeout, func() {
				timedOut.Store(true)
				cancel(errTimedOut)
			})
		}
	}
	var out any
	var se *stepError
	if f.exec != nil {
		out, se = runExec(ctx, e.actionClock(), f.exec, f.limit, f.gate, arm, f.live)
	} else {
		arm()
		out, se = runHTTP(ctx, e.opts.HTTPClient, f.http, f.limit)
	}
	switch {
	case se == nil:
	case timedOut.Load():
		se = &stepError{Kind: "timeout", Message: fmt.Sprintf("the attempt did not finish within its timeout of %s; raise the step's timeout if it needs longer", f.timeout), Output: se.Output}
	case f.ctx.Err() != nil:
		se = &stepError{Kind: "canceled", Message: "the attempt was stopped", Output: se.Output}
	}
	res := flightResult{f: f, out: out, err: se}
	if f.ctx.Err() != nil {
		// Abandoned: the runner writes no end of this attempt, so its
		// output is stored here.
		f.live.flush()
	} else {
		res.output = f.live.rest()
	}
	return res
}

// missingSecret returns the error of kind "secret" when the step's action
// uses a secret whose environment variable is unset (or empty) in this
// worker: the attempt fails without running and is not retried
// (language.md §4, semantics.md §6).
func (sc *scheduler) missingSecret(s *graph.Step) *stepError {
	mocked, testing := sc.out.mocked(sc.run.Workflow, s.Name)
	if mocked {
		return nil // a test's mock replaces the action: it needs no secret
	}
	var vals []*graph.Value
	switch a := s.Action; {
	case a.Kind == graph.KindExec && a.Exec != nil:
		vals = []*graph.Value{a.Exec.Command, a.Exec.Dir, a.Exec.Env, a.Exec.Stdin}
	case a.Kind == graph.KindHTTP && a.HTTP != nil:
		vals = []*graph.Value{a.HTTP.URL, a.HTTP.Headers, a.HTTP.Body, a.HTTP.Query}
	}
	for _, sec := range sc.l.g.Secrets {
		if sc.secrets[sec.Name] != "" {
			continue
		}
		for _, v := range vals {
			if usesSecret(v, sec.Name) {
				if n := len(sc.out.getenv(sec.Env)); n > 0 {
					return &stepError{Kind: "secret", Message: fmt.Sprintf("secret %q is refused: %s holds %d characters, and a secret shorter than %d would hide every occurrence of those characters in the run's outputs, logs and errors; set the real secret and run `flowrun retry` on the run", sec.Name, sec.Env, n, MinSecretLen)}
				}
				fix := "set it and run `flowrun retry` on the run"
				if testing {
					// Under flowrun test (which mocks): retry means nothing.
					fix = fmt.Sprintf("mock step %q in the test, or set %s in the environment of flowrun test", s.Name, sec.Env)
				}
				return &stepError{Kind: "secret", Message: fmt.Sprintf("secret %q is not available: the environment variable %s is not set for the flowrun process; %s", sec.Name, sec.Env, fix)}
			}
		}
	}
	return nil
}

// usesSecret reports whether an expression of the value refers to
// secrets.NAME (or secrets['NAME']).
func usesSecret(v *graph.Value, name string) bool {
	if v == nil {
		return false
	}
	if v.Template != nil {
		for _, p := range v.Template.Parts {
			if p.Expr != nil && secretRef(p.Expr.CEL, name) {
				return true
			}
		}
	}
	for _, x := range v.List {
		if usesSecret(x, name) {
			return true
		}
	}
	for _, x := range v.Object {
		if usesSecret(x, name) {
			return true
		}
	}
	return false
}

// secretRef finds secrets.NAME, secrets["NAME"] or secrets['NAME'] in CEL
// source, with NAME not followed by more identifier characters.
func secretRef(cel, name string) bool {
	for _, form := range []string{"secrets." + name, `secrets["` + name + `"]`, "secrets['" + name + "']"} {
		for rest := cel; ; {
			i := strings.Index(rest, form)
			if i < 0 {
				break
			}
			if i > 0 && isIdent(rest[i-1]) {
				rest = rest[i+1:]
				continue
			}
			end := i + len(form)
			if end == len(rest) || !isIdent(rest[end]) || form[len(form)-1] == ']' {
				return true
			}
			rest = rest[end:]
		}
	}
	return false
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// actionClock is what times a running attempt (Options.ActionClock, the
// engine clock when unset).
func (e *Engine) actionClock() clock.Clock {
	if c := e.opts.ActionClock; c != nil {
		return c
	}
	return e.clk
}
