package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/flowrun/flowrun/store"
)

// RunView is the `show --json` object of a run (see the CLI brief): the
// fields up to Steps are the documented interface; the timing and waiting
// fields after them are extra and omitted when empty.
type RunView struct {
	RunID    string               `json:"run_id"`
	Workflow string               `json:"workflow"`
	Version  string               `json:"version"`
	Key      string               `json:"key"`
	Status   store.RunStatus      `json:"status"`
	Inputs   json.RawMessage      `json:"inputs"`
	Outputs  json.RawMessage      `json:"outputs"`
	Error    json.RawMessage      `json:"error"`
	Steps    map[string]*StepView `json:"steps"`

	CreatedAt   *time.Time `json:"created_at,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	AvailableAt *time.Time `json:"available_at,omitempty"` // of a waiting run
	DeadlineAt  *time.Time `json:"deadline_at,omitempty"`
	WaitReason  string     `json:"wait_reason,omitempty"`
	ParentRunID string     `json:"parent_run_id,omitempty"`
	ParentStep  string     `json:"parent_step,omitempty"`
	// Order lists the step names in the graph's (topological) order, for
	// printing; JSON objects have no order.
	Order []string `json:"-"`
}

// StepView is one step of a RunView.
type StepView struct {
	Status   store.StepStatus `json:"status"`
	Attempts int              `json:"attempts"`
	Output   json.RawMessage  `json:"output"`
	Error    json.RawMessage  `json:"error,omitempty"`
	// Items are the foreach items, by index.
	Items []ItemView `json:"items,omitempty"`
	// Iterations is how many until iterations ran.
	Iterations int        `json:"iterations,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	WakeAt     *time.Time `json:"wake_at,omitempty"`
	// Detail says what a waiting step waits for, or why it was skipped.
	Detail string `json:"detail,omitempty"`
}

// ItemView is one foreach item of a StepView.
type ItemView struct {
	Index    int              `json:"index"`
	Status   store.StepStatus `json:"status"`
	Attempts int              `json:"attempts"`
	Output   json.RawMessage  `json:"output"`
	Error    json.RawMessage  `json:"error,omitempty"`
}

// Show assembles the view of a run: every step of its graph (pending when
// it has not begun), with items and iterations folded into their step.
// runID may be a unique prefix.
func (e *Engine) Show(ctx context.Context, runID string) (*RunView, error) {
	run, err := e.st.RunFind(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", runID, err)
	}
	l, err := e.load(ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", run.ID, err)
	}
	steps, err := e.st.StepList(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("show run %s: %w", run.ID, err)
	}
	v := &RunView{RunID: run.ID, Workflow: run.Workflow, Version: run.Version, Key: run.Key, Status: run.Status,
		Inputs: orNull(run.Inputs), Outputs: orNull(run.Outputs), Error: orNull(run.Error),
		Steps: map[string]*StepView{}, WaitReason: run.WaitReason, ParentRunID: run.ParentRunID, ParentStep: run.ParentStepKey,
		CreatedAt: timePtr(run.CreatedAt), StartedAt: timePtr(run.StartedAt), FinishedAt: timePtr(run.FinishedAt),
		DeadlineAt: timePtr(run.DeadlineAt)}
	if run.Status == store.RunWaiting {
		v.AvailableAt = timePtr(run.AvailableAt)
	}
	for _, s := range l.g.Steps {
		v.Order = append(v.Order, s.Name)
		v.Steps[s.Name] = &StepView{Status: store.StepPending, Output: json.RawMessage("null")}
	}
	items := map[string]map[int]*ItemView{}
	for _, s := range steps {
		sv := v.Steps[s.Step]
		if sv == nil {
			continue // a step of another graph version
		}
		switch {
		case s.Key == s.Step:
			sv.Status, sv.Attempts, sv.Output, sv.Error = s.Status, s.Attempts, orNull(s.Output), nullToNil(s.Error)
			sv.StartedAt, sv.FinishedAt, sv.WakeAt, sv.Detail = timePtr(s.StartedAt), timePtr(s.FinishedAt), timePtr(s.WakeAt), s.Detail
		case s.Index >= 0 && s.Iteration < 0:
			if items[s.Step] == nil {
				items[s.Step] = map[int]*ItemView{}
			}
			items[s.Step][s.Index] = &ItemView{Index: s.Index, Status: s.Status, Attempts: s.Attempts, Output: orNull(s.Output), Error: nullToNil(s.Error)}
		case s.Iteration >= 0:
			if s.Index < 0 && s.Iteration+1 > sv.Iterations {
				sv.Iterations = s.Iteration + 1
			}
		}
	}
	for name, m := range items {
		sv := v.Steps[name]
		sum := 0
		for _, it := range m {
			sv.Items = append(sv.Items, *it)
			sum += it.Attempts
		}
		sort.Slice(sv.Items, func(i, j int) bool { return sv.Items[i].Index < sv.Items[j].Index })
		sv.Attempts = sum
	}
	return v, nil
}

// StatusOf maps a run status to the CLI exit code: completed 0, failed or
// canceled 1, parked (waiting, pending, running elsewhere) 3, blocked on a
// version decision 4.
func StatusOf(s store.RunStatus) int {
	switch s {
	case store.RunCompleted:
		return 0
	case store.RunFailed, store.RunCanceled:
		return 1
	case store.RunBlocked:
		return 4
	}
	return 3
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

func nullToNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
