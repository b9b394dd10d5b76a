package interp

import (
	"encoding/json"
	"time"

	"github.com/flowrun/flowrun/store"
)

// txb accumulates one transition of a run. Step and attempt writes are
// merged by key, so a transition carries exactly one write per step key and
// per attempt: the last state decided for it (invariant 4).
type txb struct {
	t       store.Transition
	stepIdx map[string]int
	attIdx  map[attKey]int
}

type attKey struct {
	step string
	n    int
}

func newTxb(runID string, lease store.Lease) *txb {
	return &txb{t: store.Transition{RunID: runID, Lease: lease}, stepIdx: map[string]int{}, attIdx: map[attKey]int{}}
}

func (x *txb) step(w store.StepWrite) {
	if i, ok := x.stepIdx[w.Key]; ok {
		x.t.Steps[i] = w
		return
	}
	x.stepIdx[w.Key] = len(x.t.Steps)
	x.t.Steps = append(x.t.Steps, w)
}

func (x *txb) attempt(w store.AttemptWrite) {
	k := attKey{w.StepKey, w.Attempt}
	if i, ok := x.attIdx[k]; ok {
		x.t.Attempts[i] = w
		return
	}
	x.attIdx[k] = len(x.t.Attempts)
	x.t.Attempts = append(x.t.Attempts, w)
}

func (x *txb) event(kind, stepKey string, data any) {
	var raw json.RawMessage
	if data != nil {
		raw = mustJSON(data)
	}
	x.t.Events = append(x.t.Events, store.EventWrite{Kind: kind, StepKey: stepKey, Data: raw})
}

// runUpdate returns the run update of the transition, creating it.
func (x *txb) runUpdate() *store.RunUpdate {
	if x.t.Run == nil {
		x.t.Run = &store.RunUpdate{}
	}
	return x.t.Run
}

func (x *txb) empty() bool {
	t := &x.t
	return t.Run == nil && len(t.Steps) == 0 && len(t.Attempts) == 0 && len(t.Events) == 0 &&
		len(t.Children) == 0 && len(t.ConsumeSignals) == 0 && len(t.Wake) == 0 && len(t.Output) == 0
}

// take returns the transition stamped with now and resets the builder.
func (x *txb) take(now time.Time) store.Transition {
	t := x.t
	t.Now = now
	*x = *newTxb(t.RunID, t.Lease)
	return t
}

func ptr[T any](v T) *T { return &v }

// stepWrite turns a step row into its write.
func stepWrite(s *store.Step) store.StepWrite {
	return store.StepWrite{
		Key: s.Key, Step: s.Step, Index: s.Index, Iteration: s.Iteration, Status: s.Status,
		Attempts: s.Attempts, Output: s.Output, Error: s.Error, StartedAt: s.StartedAt,
		FinishedAt: s.FinishedAt, WakeAt: s.WakeAt, Detail: s.Detail, State: s.State,
	}
}
