package interp

import (
	"encoding/json"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry"
)

// What the engine tells its Observer (Options.Observer), and where:
//
//   - RunStarted: pool.start, for a run claimed for the first time (its
//     lease epoch is 1).
//   - Claimed: pool.start, for every claim, the claim loop's or a group
//     commit's.
//   - Reclaimed: rebuild, when a claimed run has an attempt of a gone
//     worker still running.
//   - AttemptEnded and RunEnded: runner.flush, once the transition that
//     ends them is committed (observe); RunEnded also from Cancel, for a
//     run nobody held, which the store ends at once.
//   - Committed: committer.run, around each store commit.
//   - ScheduleFired: the scheduler, for each slot fired.
//
// Nothing here reads the clock: the instants are those of the rows.

// storeTrace and runTrace convert a run's trace between the store's
// type and telemetry's.
func storeTrace(t telemetry.Trace) store.Trace {
	return store.Trace{TraceID: t.TraceID, SpanID: t.SpanID, ParentSpanID: t.ParentSpanID}
}

func runTrace(r store.Run) telemetry.Trace {
	return telemetry.Trace{TraceID: r.Trace.TraceID, SpanID: r.Trace.SpanID, ParentSpanID: r.Trace.ParentSpanID}
}

// telRun is a run as telemetry sees it.
func telRun(r store.Run) telemetry.Run {
	return telemetry.Run{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Status: string(r.Status),
		Created: r.CreatedAt, Started: r.StartedAt, Finished: r.FinishedAt, Parent: r.ParentRunID, Trace: runTrace(r)}
}

// observe tells the Observer what the committed transition t ended: its
// attempts that finished and the run, if it ended.
func (r *runner) observe(t *store.Transition) {
	obs := r.e.opts.Observer
	if _, nop := obs.(telemetry.Nop); nop {
		return
	}
	run := telRun(r.run)
	for i := range t.Attempts {
		a := &t.Attempts[i]
		if a.Status == store.AttemptRunning {
			continue
		}
		ta := telemetry.Attempt{Run: run, StepKey: a.StepKey, Attempt: a.Attempt, Status: string(a.Status),
			Started: a.StartedAt, Finished: a.FinishedAt}
		if row := r.rows[a.StepKey]; row != nil {
			ta.Step = row.Step
		} else {
			ta.Step = baseStep(a.StepKey)
		}
		if s := r.l.step(ta.Step); s != nil {
			ta.Kind = s.Action.Kind
		}
		if a.Status != store.AttemptCompleted {
			ta.ErrKind = storedErrKind(a.Error)
		}
		obs.AttemptEnded(ta)
	}
	if t.Run != nil && t.Run.Status != nil && t.Run.Status.Terminal() {
		if r.run.Status == store.RunFailed {
			var e struct {
				Kind   string `json:"kind"`
				Type   string `json:"type"`
				Status int    `json:"status"`
			}
			_ = json.Unmarshal(r.run.Error, &e)
			run.ErrorKind, run.ErrorType, run.ErrorStatus = e.Kind, e.Type, e.Status
		}
		obs.RunEnded(run)
	}
}

// baseStep is the step name of a step key (NAME, NAME[i], NAME#n, and
// their nestings).
func baseStep(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == '[' || key[i] == '#' {
			return key[:i]
		}
	}
	return key
}

// storedErrKind is the kind of a stored error ({"kind", ...}), or "".
func storedErrKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var e struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Kind
}

// traceparent is the W3C trace context of attempt n of a step key of
// run: the attempt's span in the run's trace, or "" when the engine
// passes none (Options.Traceparent off, or a run stored without a trace).
func (e *Engine) traceparent(run store.Run, key string, n int) string {
	if !e.opts.Traceparent || run.Trace.TraceID == "" {
		return ""
	}
	sampled := e.opts.TraceSampled == nil || e.opts.TraceSampled(run.Trace.TraceID)
	return telemetry.TraceparentFlags(run.Trace.TraceID, telemetry.AttemptSpanID(run.ID, key, n), sampled)
}
