package interp

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/lang/graph"
)

// Mocks (flowrun test, spec/testing.md) replace the action of a step
// where the engine dispatches it, and nowhere else: the engine records,
// retries, times and schedules a mocked step exactly as a real one, so a
// test runs the same engine code as production.
//
//   - exec and http: Options.Mock is consulted in the action's goroutine
//     (flight.do), after the attempt's running write committed (for a
//     held exec, once its gate opened) and instead of the program or the
//     request. Its result is absorbed like the action's: an error is
//     retried under the step's retry policy.
//   - wait: consulted when the step starts, before a pending signal is
//     consumed; its output completes the step in that transition.
//   - workflow: consulted when the step would start its child run; no
//     child is started, and the result completes or fails the step in
//     that transition (a failed mock is not retried, as a failed child).
//   - an alert's exec or http action: consulted as for a step's, with
//     MockCall.Alert naming the alert.

// MockCall says which action the engine is about to dispatch.
type MockCall struct {
	// Probe asks only whether the step's exec or http action is mocked
	// in every attempt (an action a test mocks needs none of its secrets):
	// the answer's ok says so, its result is not used, and no call of the
	// test's sequence is taken.
	Probe    bool
	RunID    string
	Workflow string // the workflow of the run
	Step     string // the step's name
	StepKey  string // the step key (foreach index, until iteration)
	Kind     string // graph.KindExec, KindHTTP, KindWait or KindWorkflow
	Attempt  int    // the attempt number (1 for wait)
	// Alert names the alert being sent when the call is an alert's exec
	// or http action (Step and StepKey are empty then); its result
	// decides whether the alert was sent, as the action's would.
	Alert string
	// Context, for an exec or http attempt, is done when the engine stops
	// the attempt (its run ended or was canceled, the lease was lost): a
	// Mock that makes calls wait for their turn (flowrun test orders them)
	// answers a stopped one at once. Nil for the other kinds.
	Context context.Context
	// Sent, for an http attempt, holds the parts of its output known
	// before the request is made, as a real attempt's output would give
	// them: request (method, URL and headers, redacted) and, for an emit
	// step, event. A mock's output that leaves a part out takes it from
	// here. Nil for the other kinds, and when the request cannot be built.
	Sent map[string]any
}

// MockResult is what a mocked action gives: an output, or an error with,
// optionally, the output the failed attempt produced.
type MockResult struct {
	Output any
	Error  *MockError
}

// MockError is a mocked step error (the fields of steps.NAME.error).
type MockError struct {
	Kind     string
	Message  string
	ExitCode *int
	Status   *int
}

// mock asks Options.Mock about a call; ok is false when the action is not
// mocked (or no Mock is set) and runs for real.
func (e *Engine) mock(c MockCall) (out any, se *stepError, ok bool) {
	if e.opts.Mock == nil {
		return nil, nil, false
	}
	res, ok := e.opts.Mock(c)
	if !ok {
		return nil, nil, false
	}
	if res.Error == nil {
		return res.Output, nil, true
	}
	kind := res.Error.Kind
	if kind == "" {
		kind = "mock"
	}
	msg := res.Error.Message
	if msg == "" {
		msg = fmt.Sprintf("mocked %s error", kind)
	}
	return nil, &stepError{Kind: kind, Message: msg, ExitCode: res.Error.ExitCode, Status: res.Error.Status, Output: res.Output}, true
}

// mockUnit consults Options.Mock for a wait or workflow unit starting now.
func (sc *scheduler) mockUnit(u unit, attempt int) (any, *stepError, bool) {
	return sc.out.mock(MockCall{RunID: sc.run.ID, Workflow: sc.run.Workflow, Step: u.s.Name, StepKey: u.key, Kind: u.s.Action.Kind, Attempt: attempt})
}

// mockFlight consults Options.Mock for an exec or http attempt whose
// running write committed.
func (f *flight) mockFlight(e *Engine) (flightResult, bool) {
	kind := graph.KindHTTP
	if f.exec != nil {
		kind = graph.KindExec
	}
	if e.opts.Mock == nil {
		return flightResult{}, false
	}
	c := MockCall{RunID: f.runID, Workflow: f.workflow, StepKey: f.u.key, Kind: kind, Attempt: f.attempt, Alert: f.alert, Context: f.ctx}
	if f.u.s != nil {
		c.Step = f.u.s.Name
	}
	if f.http != nil {
		c.Sent = f.http.sentParts()
	}
	out, se, ok := e.mock(c)
	if !ok {
		return flightResult{}, false
	}
	return flightResult{f: f, out: out, err: se}, true
}
