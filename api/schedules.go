package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/store"
)

// ScheduleWorker lists, pauses, unpauses and triggers schedules.
type ScheduleWorker interface {
	// Schedules lists the active schedules of every workflow.
	Schedules(ctx context.Context) ([]interp.ScheduleJSON, error)
	// PauseSchedule pauses (or, with pause false, resumes from now) an
	// active schedule; an unknown one is a *Refusal with the nearest.
	PauseSchedule(ctx context.Context, workflow, name string, pause bool) (interp.ScheduleJSON, error)
	// TriggerSchedule fires a schedule now through the path of a slot,
	// honouring its overlap and its run key.
	TriggerSchedule(ctx context.Context, workflow, name string) (*Triggered, error)
}

// Triggered is what a trigger did: the answer of POST
// /v1/schedules/{workflow}/{name}/trigger.
type Triggered struct {
	// Fire is the slot's record: fired (with its run) or skipped and why.
	Fire interp.FireJSON `json:"fire"`
	// Unfinished are the schedule's runs that were unfinished (what an
	// overlap skip waited on); Overlap the schedule's policy.
	Unfinished []string `json:"unfinished"`
	Overlap    string   `json:"overlap"`
}

// activeSchedule reads an active schedule, or refuses an unknown one with
// the nearest active name.
func (l *Local) activeSchedule(ctx context.Context, workflow, name string) (store.Schedule, error) {
	sc, err := l.st.ScheduleGet(ctx, workflow, name)
	if err == nil && !sc.Active {
		err = store.ErrNotFound
	}
	if !errors.Is(err, store.ErrNotFound) {
		return sc, err
	}
	scs, lerr := l.st.ScheduleList(ctx, store.ScheduleListParams{})
	if lerr != nil {
		return sc, lerr
	}
	names := make([]string, 0, len(scs))
	for _, s := range scs {
		names = append(names, s.Workflow+"/"+s.Name)
	}
	ref := workflow + "/" + name
	r := &Refusal{Status: http.StatusNotFound, Message: fmt.Sprintf("there is no active schedule %q", ref),
		Hint: "List the schedules with: flowrun schedules"}
	if near := naming.NearestName(ref, names); near != "" {
		r.Hint = fmt.Sprintf("Did you mean %q? List the schedules with: flowrun schedules", near)
	}
	return sc, r
}

// Schedules implements ScheduleWorker.
func (l *Local) Schedules(ctx context.Context) ([]interp.ScheduleJSON, error) {
	scs, err := l.st.ScheduleList(ctx, store.ScheduleListParams{})
	if err != nil {
		return nil, err
	}
	return interp.Schedules(ctx, l.st, scs)
}

// PauseSchedule implements ScheduleWorker.
func (l *Local) PauseSchedule(ctx context.Context, workflow, name string, pause bool) (interp.ScheduleJSON, error) {
	if _, err := l.activeSchedule(ctx, workflow, name); err != nil {
		return interp.ScheduleJSON{}, err
	}
	sc, err := l.eng.PauseSchedule(ctx, workflow, name, pause)
	if err != nil {
		return interp.ScheduleJSON{}, err
	}
	out, err := interp.Schedules(ctx, l.st, []store.Schedule{sc})
	if err != nil {
		return interp.ScheduleJSON{}, err
	}
	return out[0], nil
}

// TriggerSchedule implements ScheduleWorker.
func (l *Local) TriggerSchedule(ctx context.Context, workflow, name string) (*Triggered, error) {
	sc, err := l.activeSchedule(ctx, workflow, name)
	if err != nil {
		return nil, err
	}
	res, err := l.eng.TriggerSchedule(ctx, workflow, name)
	if errors.Is(err, store.ErrAlreadyFired) {
		return nil, &Refusal{Status: http.StatusConflict, Message: fmt.Sprintf("schedule %s/%s was triggered or fired at this very instant already", workflow, name),
			Hint: "Trigger it again."}
	}
	if errors.Is(err, interp.ErrSlotInputs) {
		// The workflow's schedule block is at fault, not the store: nothing
		// was written, and the fix is in the file.
		return nil, &Refusal{Status: http.StatusUnprocessableEntity, Message: err.Error() + "; the trigger started no run",
			Hint: "Fix the schedule's inputs = { ... } in the workflow file and apply it again."}
	}
	if err != nil {
		return nil, err
	}
	u := res.Unfinished
	if u == nil {
		u = []string{}
	}
	return &Triggered{Fire: *interp.FireOf(res.Fire, true), Unfinished: u, Overlap: sc.Overlap}, nil
}

func schedulePath(workflow, name, rest string) string {
	return "/v1/schedules/" + url.PathEscape(workflow) + "/" + url.PathEscape(name) + rest
}

// Schedules implements ScheduleWorker.
func (c *Client) Schedules(ctx context.Context) ([]interp.ScheduleJSON, error) {
	var out []interp.ScheduleJSON
	return out, c.call(ctx, http.MethodGet, "/v1/schedules", nil, nil, &out)
}

// PauseSchedule implements ScheduleWorker.
func (c *Client) PauseSchedule(ctx context.Context, workflow, name string, pause bool) (interp.ScheduleJSON, error) {
	var out interp.ScheduleJSON
	action := "/unpause"
	if pause {
		action = "/pause"
	}
	return out, c.call(ctx, http.MethodPost, schedulePath(workflow, name, action), nil, struct{}{}, &out)
}

// TriggerSchedule implements ScheduleWorker.
func (c *Client) TriggerSchedule(ctx context.Context, workflow, name string) (*Triggered, error) {
	out := &Triggered{}
	return out, c.call(ctx, http.MethodPost, schedulePath(workflow, name, "/trigger"), nil, struct{}{}, out)
}
