package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/schedule"
	"github.com/flowrun/flowrun/store"
)

// This file is the scheduler (spec/semantics.md §18): it activates a
// version's schedules, and fires the store's due slots. A worker owns it
// (Worker.loop calls FireDue once per poll); apply activates, and the
// schedules verbs trigger through the same fire path. Every time comes
// from the engine's clock. Exactly once is the store's: a slot's fire row
// and its run are one transaction, unique on the slot (ErrAlreadyFired
// here means another worker fired it).

// scheduleDueLimit is how many due schedules one pass reads.
const scheduleDueLimit = 256

// ParseSchedule parses a graph's schedule block (validated by the
// compiler, so an error means a damaged graph).
func ParseSchedule(s graph.Schedule) (*schedule.Spec, error) {
	return schedule.Parse(schedule.Params{Cron: s.Cron, Every: s.Every, Timezone: s.Timezone})
}

// parseStored parses a stored schedule's spec.
func parseStored(sc store.Schedule) (*schedule.Spec, error) {
	p := schedule.Params{Timezone: sc.Timezone}
	if sc.Kind == string(schedule.KindEvery) {
		p.Every = sc.Spec
	} else {
		p.Cron = sc.Spec
	}
	spec, err := schedule.Parse(p)
	if err != nil {
		return nil, fmt.Errorf("schedule %s/%s: %w", sc.Workflow, sc.Name, err)
	}
	return spec, nil
}

// ActivateSchedules makes the schedules of a stored version of g the
// workflow's active ones (a schedule the version drops stops); workDir is
// where the runs they start execute their commands. A workflow with no
// schedule stored and none declared is left alone.
func (e *Engine) ActivateSchedules(ctx context.Context, g *graph.Graph, workDir string) ([]store.Schedule, error) {
	if len(g.Schedules) == 0 {
		stored, err := e.st.ScheduleList(ctx, store.ScheduleListParams{Workflow: g.Workflow})
		if err != nil || len(stored) == 0 {
			return nil, err
		}
	}
	now := e.clk.Now()
	defs := make([]store.ScheduleDef, 0, len(g.Schedules))
	for _, s := range g.Schedules {
		spec, err := ParseSchedule(s)
		if err != nil {
			return nil, fmt.Errorf("workflow %q schedule %q: %w", g.Workflow, s.Name, err)
		}
		d := store.ScheduleDef{Name: s.Name, Kind: string(spec.Kind()), Spec: spec.Text(), Timezone: spec.Location().String(),
			Overlap: s.Overlap, CatchUp: s.CatchUp, MaxCatchUp: s.MaxCatchUp,
			Jitter: time.Duration(s.JitterMS) * time.Millisecond, NextAt: spec.Next(now)}
		if s.Inputs != nil {
			d.Inputs = mustJSON(s.Inputs)
		}
		defs = append(defs, d)
	}
	out, err := e.st.SchedulesActivate(ctx, store.SchedulesActivateParams{
		Workflow: g.Workflow, Version: g.Version, WorkDir: workDir, Schedules: defs, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("activate the schedules of workflow %q version %s: %w", g.Workflow, g.Version, err)
	}
	return out, nil
}

// NextFires returns the next n slots of a stored schedule after now.
func NextFires(sc store.Schedule, after time.Time, n int) ([]time.Time, error) {
	spec, err := parseStored(sc)
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, 0, n)
	for t := after; len(out) < n; {
		t = spec.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out, nil
}

// scheduleGrace is how late a slot may be found and still fire under
// catch_up = "none": a few polls.
func (e *Engine) scheduleGrace() time.Duration { return 5 * e.opts.Poll }

// FireDue fires or skips the due slots of every due schedule, once: one
// indexed query for the due schedules, then per schedule its plan. It
// returns how many runs it started. A slot another worker fired first is
// not an error.
func (e *Engine) FireDue(ctx context.Context) (int, error) {
	now := e.clk.Now()
	started := 0
	var errs []error
	versions := map[string]store.Version{} // the pass's reads of versions, by workflow and version
	// A full page is read again: the schedules dealt with have moved
	// their next_at past now, so the next page holds the others.
	for page := 0; page < 64; page++ {
		due, err := e.st.ScheduleDue(ctx, store.ScheduleDueParams{Now: now, Limit: scheduleDueLimit})
		if err != nil {
			return started, fmt.Errorf("read the due schedules: %w", err)
		}
		failed := len(errs)
		for _, sc := range due {
			n, err := e.fireSchedule(ctx, sc, now, versions)
			started += n
			if err != nil {
				errs = append(errs, err)
			}
		}
		if started > 0 { // the runs start while the next page fires
			e.wakePools()
		}
		if len(due) < scheduleDueLimit || len(errs) > failed {
			break // the last page; or a schedule that fails would come again
		}
	}
	return started, errors.Join(errs...)
}

// fireSchedule deals with the due slots of one schedule at now.
func (e *Engine) fireSchedule(ctx context.Context, sc store.Schedule, now time.Time, versions map[string]store.Version) (int, error) {
	spec, err := parseStored(sc)
	if err != nil {
		return 0, err
	}
	after := sc.Since
	if sc.LastSlot.After(after) {
		after = sc.LastSlot
	}
	if sc.Overlap == string(schedule.OverlapQueue) {
		busy, err := e.scheduleBusy(ctx, sc)
		if err != nil || busy {
			// The due slots wait, still due, until the schedule's runs
			// have finished; the next pass looks again.
			return 0, err
		}
	}
	plan := spec.Plan(after, now, schedule.Policy{
		CatchUp: schedule.CatchUp(sc.CatchUp), Max: sc.MaxCatchUp, Grace: e.scheduleGrace(),
	})
	if len(plan.Skip) > 0 || len(plan.Fire) == 0 {
		next := plan.Next
		if len(plan.Fire) > 0 {
			next = plan.Fire[0]
		}
		if _, err := e.st.ScheduleSkip(ctx, store.ScheduleSkipParams{Workflow: sc.Workflow, Name: sc.Name,
			Slots: plan.Skip, Reason: "catch_up", NextAt: next, Now: now}); err != nil {
			return 0, fmt.Errorf("schedule %s/%s: record skipped slots: %w", sc.Workflow, sc.Name, err)
		}
	}
	started := 0
	for _, slot := range plan.Fire {
		res, err := e.fireSlot(ctx, sc, spec, slot, spec.Next(slot), false, versions)
		switch {
		case errors.Is(err, store.ErrAlreadyFired):
			continue // another worker fired it
		case errors.Is(err, store.ErrConflict):
			return started, nil // the schedule changed under us: the next pass reads it again
		case errors.As(err, new(*slotInputError)):
			// The run cannot start (its inputs or key fail for this slot):
			// the slot is recorded skipped with the reason, so that it is
			// shown and not tried again every poll.
			if _, serr := e.st.ScheduleSkip(ctx, store.ScheduleSkipParams{Workflow: sc.Workflow, Name: sc.Name,
				Slots: []time.Time{slot}, Reason: "inputs: " + err.Error(), NextAt: spec.Next(slot), Now: now}); serr != nil {
				return started, errors.Join(err, serr)
			}
			continue
		case err != nil:
			return started, err
		}
		if res.Run.ID != "" {
			started++
		}
	}
	return started, nil
}

// fireSlot builds the slot's run (its inputs evaluated with schedule.*,
// the workflow's key or schedule.RunKey) and fires it through the store.
// versions caches the versions read (nil: none).
func (e *Engine) fireSlot(ctx context.Context, sc store.Schedule, spec *schedule.Spec, slot, next time.Time, manual bool, versions map[string]store.Version) (store.ScheduleFireResult, error) {
	vk := sc.Workflow + "\x00" + sc.Version
	v, ok := versions[vk]
	if !ok {
		var err error
		if v, err = e.st.VersionGet(ctx, sc.Workflow, sc.Version); err != nil {
			return store.ScheduleFireResult{}, fmt.Errorf("schedule %s/%s: %w", sc.Workflow, sc.Name, err)
		}
		v.Graph = nil // load reads it by hash, from its cache
		if versions != nil {
			versions[vk] = v
		}
	}
	l, err := e.load(ctx, v.Workflow, v.Hash)
	if err != nil {
		return store.ScheduleFireResult{}, fmt.Errorf("schedule %s/%s: %w", sc.Workflow, sc.Name, err)
	}
	inputs, key, err := e.scheduleRunInputs(ctx, l, sc.Name, spec, slot)
	if err != nil {
		return store.ScheduleFireResult{}, &slotInputError{fmt.Errorf("schedule %s/%s slot %s: %w", sc.Workflow, sc.Name, slot.UTC().Format(time.RFC3339), err)}
	}
	now := e.clk.Now()
	ins := e.insertParams(l, v, inputs, key)
	ins.WorkDir = sc.WorkDir
	jitter := schedule.Jitter(sc.Workflow+"/"+sc.Name, slot, sc.Jitter)
	if manual {
		jitter = 0
	}
	if at := slot.Add(jitter); at.After(now) {
		ins.AvailableAt = at
	}
	ins.Events[0].Data = mustJSON(map[string]any{"version": v.Version, "key": key,
		"schedule": sc.Name, "slot": slot.UTC().Format(time.RFC3339Nano)})
	p := store.ScheduleFireParams{Workflow: sc.Workflow, Name: sc.Name, Slot: slot, Version: sc.Version,
		Overlap: sc.Overlap, Jitter: jitter, Run: ins, NextAt: next, Manual: manual, Now: now}
	return e.st.ScheduleFire(ctx, p)
}

// queueLookback is how many of a schedule's latest fires overlap =
// "queue" looks at for an unfinished run: queued runs finish in turn, so
// only the latest ones can be unfinished.
const queueLookback = 8

// scheduleBusy reports whether a run one of the schedule's latest fires
// started is unfinished.
func (e *Engine) scheduleBusy(ctx context.Context, sc store.Schedule) (bool, error) {
	fs, err := e.st.ScheduleFireList(ctx, store.ScheduleFireListParams{Workflow: sc.Workflow, Name: sc.Name, Limit: queueLookback})
	if err != nil {
		return false, fmt.Errorf("schedule %s/%s: %w", sc.Workflow, sc.Name, err)
	}
	for _, f := range fs {
		if f.RunID == "" {
			continue
		}
		run, err := e.st.RunGet(ctx, f.RunID)
		if errors.Is(err, store.ErrNotFound) {
			continue // pruned
		}
		if err != nil {
			return false, fmt.Errorf("schedule %s/%s: %w", sc.Workflow, sc.Name, err)
		}
		if !run.Status.Terminal() {
			return true, nil
		}
	}
	return false, nil
}

// slotInputError: a slot's run could not be built from its schedule's
// inputs.
type slotInputError struct{ err error }

func (e *slotInputError) Error() string { return e.err.Error() }
func (e *slotInputError) Unwrap() error { return e.err }

// scheduleRunInputs evaluates a schedule's inputs for a slot and checks
// them against the workflow's inputs; the key is the workflow's, or
// schedule.RunKey when it declares none.
func (e *Engine) scheduleRunInputs(ctx context.Context, l *loaded, name string, spec *schedule.Spec, slot time.Time) (map[string]any, string, error) {
	var def *graph.Schedule
	for i := range l.g.Schedules {
		if l.g.Schedules[i].Name == name {
			def = &l.g.Schedules[i]
		}
	}
	if def == nil {
		return nil, "", fmt.Errorf("version %s declares no schedule %q", l.g.Version, name)
	}
	given := map[string]any{}
	if def.Inputs != nil {
		vars := spec.Vars(name, slot)
		v, err := l.prog.EvalValue(ctx, def.Inputs, &expr.Activation{
			Schedule: map[string]any{"time": vars.Time, "date": vars.Date, "name": vars.Name},
		})
		if err != nil {
			return nil, "", fmt.Errorf("evaluate its inputs: %w", err)
		}
		// As JSON, the form inputs given on the command line take.
		b, err := json.Marshal(v)
		if err != nil {
			return nil, "", fmt.Errorf("its inputs: %w", err)
		}
		if err := json.Unmarshal(b, &given); err != nil {
			return nil, "", fmt.Errorf("its inputs are not an object: %w", err)
		}
	}
	inputs, err := checkInputs(l.g, given)
	if err != nil {
		return nil, "", err
	}
	if l.g.Key == nil {
		return inputs, schedule.RunKey(name, slot), nil
	}
	key, err := runKey(ctx, l.g, l.prog, inputs)
	return inputs, key, err
}

// TriggerSchedule fires a schedule now, by hand, through the same path as
// its slots: its overlap policy applies; the slot is now (to the
// microsecond) and moves no cursor. It works while paused.
func (e *Engine) TriggerSchedule(ctx context.Context, workflow, name string) (store.ScheduleFireResult, error) {
	sc, err := e.st.ScheduleGet(ctx, workflow, name)
	if err != nil {
		return store.ScheduleFireResult{}, err
	}
	spec, err := parseStored(sc)
	if err != nil {
		return store.ScheduleFireResult{}, err
	}
	now := e.clk.Now().Truncate(time.Microsecond)
	res, err := e.fireSlot(ctx, sc, spec, now, time.Time{}, true, nil)
	if err == nil && res.Run.ID != "" {
		e.wakePools()
	}
	return res, err
}

// PauseSchedule pauses or resumes a schedule; a resume makes the slots up
// to now not due.
func (e *Engine) PauseSchedule(ctx context.Context, workflow, name string, paused bool) (store.Schedule, error) {
	sc, err := e.st.ScheduleGet(ctx, workflow, name)
	if err != nil {
		return store.Schedule{}, err
	}
	spec, err := parseStored(sc)
	if err != nil {
		return store.Schedule{}, err
	}
	now := e.clk.Now()
	return e.st.SchedulePause(ctx, store.SchedulePauseParams{Workflow: workflow, Name: name, Paused: paused,
		NextAt: spec.Next(now), Now: now})
}
