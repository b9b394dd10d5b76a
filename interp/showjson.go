package interp

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// runViewJSON is the JSON form of a RunView (semantics.md §16) as
// UnmarshalJSON reads it. Stored values stay json.RawMessage: their text
// is kept exactly (a 64-bit id keeps every digit).
type runViewJSON struct {
	RunID      string          `json:"run_id"`
	Workflow   string          `json:"workflow"`
	Version    string          `json:"version"`
	Key        string          `json:"key"`
	Status     store.RunStatus `json:"status"`
	WaitReason *string         `json:"wait_reason"`
	Inputs     json.RawMessage `json:"inputs"`
	Outputs    json.RawMessage `json:"outputs"`
	Error      json.RawMessage `json:"error"`
	Parent     *struct {
		RunID string `json:"run_id"`
		Step  string `json:"step"`
	} `json:"parent"`
	TraceID  *string `json:"trace_id"`
	Schedule *struct {
		Name   string    `json:"name"`
		Slot   time.Time `json:"slot"`
		Manual bool      `json:"manual"`
	} `json:"schedule"`
	Attempt int `json:"attempt"`
	runTimesJSON
	Revision *struct {
		Bound   int `json:"bound"`
		Current int `json:"current"`
	} `json:"revision"`
	StepOrder []string                 `json:"step_order"`
	Steps     map[string]*stepViewJSON `json:"steps"`
}

// runTimesJSON are the instants of a runViewJSON.
type runTimesJSON struct {
	CreatedAt   *time.Time `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	FinishedAt  *time.Time `json:"finished_at"`
	DeadlineAt  *time.Time `json:"deadline_at"`
	AvailableAt *time.Time `json:"available_at"`
}

type stepViewJSON struct {
	Status     store.StepStatus  `json:"status"`
	Attempts   int               `json:"attempts"`
	Output     json.RawMessage   `json:"output"`
	Error      json.RawMessage   `json:"error"`
	StartedAt  *time.Time        `json:"started_at"`
	FinishedAt *time.Time        `json:"finished_at"`
	WakeAt     *time.Time        `json:"wake_at"`
	Detail     *string           `json:"detail"`
	Iterations *int              `json:"iterations"`
	ChildRunID string            `json:"child_run_id"`
	OpenAPI    *graph.OpenAPIRef `json:"openapi"`
	Items      *[]itemViewJSON   `json:"items"`
}

type itemViewJSON struct {
	Index    int              `json:"index"`
	Item     json.RawMessage  `json:"item"`
	Status   store.StepStatus `json:"status"`
	Attempts int              `json:"attempts"`
	Output   json.RawMessage  `json:"output"`
	Error    json.RawMessage  `json:"error"`
}

// UnmarshalJSON reads the JSON form MarshalJSON writes, so that a view an
// API client receives is the view the server assembled: marshaled again,
// it is the same text.
func (v *RunView) UnmarshalJSON(b []byte) error {
	var j runViewJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("reading a run view: %w", err)
	}
	if j.RunID == "" || j.Steps == nil {
		return fmt.Errorf("reading a run view: no run_id or steps")
	}
	*v = RunView{RunID: j.RunID, Workflow: j.Workflow, Version: j.Version, Key: j.Key, Status: j.Status,
		Inputs: orNull(j.Inputs), Outputs: orNull(j.Outputs), Error: orNull(j.Error),
		Attempt: j.Attempt, Order: j.StepOrder, Steps: make(map[string]*StepView, len(j.Steps)),
		RunTimes: RunTimes{CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt,
			DeadlineAt: j.DeadlineAt, AvailableAt: j.AvailableAt}}
	if j.WaitReason != nil {
		v.WaitReason = *j.WaitReason
	}
	if j.Parent != nil {
		v.ParentRunID, v.ParentStep = j.Parent.RunID, j.Parent.Step
	}
	if j.TraceID != nil {
		v.TraceID = *j.TraceID
	}
	if f := j.Schedule; f != nil {
		v.Schedule = &store.ScheduleFire{Workflow: j.Workflow, Schedule: f.Name, Slot: f.Slot.UTC(), RunID: j.RunID, Status: store.FireFired}
		if f.Manual {
			v.Schedule.Reason = "manual"
		}
	}
	if r := j.Revision; r != nil {
		v.Revision, v.Current = r.Bound, r.Current
	}
	for name, s := range j.Steps {
		if s == nil {
			return fmt.Errorf("reading a run view: step %q is null", name)
		}
		sv := &StepView{Status: s.Status, Attempts: s.Attempts, Output: orNull(s.Output), Error: nullToNil(s.Error),
			StartedAt: s.StartedAt, FinishedAt: s.FinishedAt, WakeAt: s.WakeAt, ChildRunID: s.ChildRunID,
			OpenAPI: s.OpenAPI, until: s.Iterations != nil, foreach: s.Items != nil}
		if s.Detail != nil {
			sv.Detail = *s.Detail
		}
		if s.Iterations != nil {
			sv.Iterations = *s.Iterations
		}
		if s.Items != nil {
			for _, it := range *s.Items {
				sv.Items = append(sv.Items, ItemView{Index: it.Index, Item: nullToNil(it.Item), Status: it.Status,
					Attempts: it.Attempts, Output: orNull(it.Output), Error: nullToNil(it.Error)})
			}
		}
		v.Steps[name] = sv
	}
	return nil
}
