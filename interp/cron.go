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

// This file fires schedules (what spec/semantics.md §18 calls the
// scheduler; in this package "scheduler" is a run's decision pass,
// scheduler_pass.go): it activates a
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
// indexed query for a page of due schedules, their plans, then the page's
// slots fired in batches (ScheduleFireBatch: many fires, one commit),
// earliest schedule first and each schedule's slots in order. It returns
// how many runs it started. A slot another worker fired first is not an
// error.
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
		var slots []dueSlot
		for _, sc := range due {
			ss, err := e.planSchedule(ctx, sc, now)
			if err != nil {
				errs = append(errs, err)
			}
			slots = append(slots, ss...)
		}
		n, ferrs := e.fireSlots(ctx, slots, now, versions)
		started += n
		errs = append(errs, ferrs...)
		if len(due) < scheduleDueLimit || len(errs) > failed {
			break // the last page; or a schedule that fails would come again
		}
	}
	return started, errors.Join(errs...)
}

// scheduleFireBatch is how many slots one transaction fires: the runs of
// a batch become visible (and start) at its commit, while the next batch
// is built.
const scheduleFireBatch = 128

// dueSlot is a slot a pass fires.
type dueSlot struct {
	sc   store.Schedule
	spec *schedule.Spec
	slot time.Time
}

// planSchedule plans the due slots of one schedule at now: it records the
// slots skipped under catch_up, and returns those to fire, in order.
func (e *Engine) planSchedule(ctx context.Context, sc store.Schedule, now time.Time) ([]dueSlot, error) {
	spec, err := parseStored(sc)
	if err != nil {
		return nil, err
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
			return nil, err
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
			return nil, fmt.Errorf("schedule %s/%s: record skipped slots: %w", sc.Workflow, sc.Name, err)
		}
	}
	out := make([]dueSlot, 0, len(plan.Fire))
	for _, slot := range plan.Fire {
		out = append(out, dueSlot{sc: sc, spec: spec, slot: slot})
	}
	return out, nil
}

// fireSlots fires slots, grouped by schedule and in slot order within
// one, in batches. Once a slot of a schedule fails, or the schedule
// changed under the pass (ErrConflict), its later slots are left due for
// the next pass: no slot is fired past one still due. A slot whose run
// cannot be built from its inputs is recorded skipped with the reason, so
// that it is shown and not tried again every poll.
func (e *Engine) fireSlots(ctx context.Context, slots []dueSlot, now time.Time, versions map[string]store.Version) (int, []error) {
	started := 0
	var errs []error
	stopped := map[[2]string]bool{} // schedules whose remaining slots wait
	for len(slots) > 0 {
		chunk := slots[:min(len(slots), scheduleFireBatch)]
		slots = slots[len(chunk):]
		built := make([]int, len(chunk)) // index into ps, -1: not fired
		inputErrs := make([]error, len(chunk))
		var ps []store.ScheduleFireParams
		for i, ds := range chunk {
			built[i] = -1
			if stopped[[2]string{ds.sc.Workflow, ds.sc.Name}] {
				continue
			}
			p, err := e.slotFire(ctx, ds.sc, ds.spec, ds.slot, ds.spec.Next(ds.slot), false, versions)
			switch {
			case errors.As(err, new(*slotInputError)):
				inputErrs[i] = err
			case err != nil:
				errs = append(errs, err)
				stopped[[2]string{ds.sc.Workflow, ds.sc.Name}] = true
			default:
				built[i] = len(ps)
				ps = append(ps, p)
			}
		}
		var out []store.ScheduleFireOutcome
		if len(ps) > 0 {
			var err error
			if out, err = e.st.ScheduleFireBatch(ctx, ps); err != nil {
				return started, append(errs, fmt.Errorf("fire %d schedule slots: %w", len(ps), err))
			}
		}
		n := 0
		fired := e.clk.Now()
		for i, ds := range chunk {
			k := [2]string{ds.sc.Workflow, ds.sc.Name}
			switch {
			case inputErrs[i] != nil:
				if stopped[k] {
					continue
				}
				if _, err := e.st.ScheduleSkip(ctx, store.ScheduleSkipParams{Workflow: ds.sc.Workflow, Name: ds.sc.Name,
					Slots: []time.Time{ds.slot}, Reason: "inputs: " + inputErrs[i].Error(), NextAt: ds.spec.Next(ds.slot), Now: now}); err != nil {
					errs = append(errs, errors.Join(inputErrs[i], err))
					stopped[k] = true
					continue
				}
				e.opts.Observer.ScheduleSlotFailed(ds.sc.Workflow, ds.sc.Name, ds.slot, inputErrs[i])
			case built[i] >= 0:
				o := out[built[i]]
				switch {
				case o.Err == nil:
					if o.Result.Run.ID != "" {
						n++
						e.opts.Observer.ScheduleFired(ds.sc.Workflow, max(fired.Sub(ds.slot), 0))
					}
				case errors.Is(o.Err, store.ErrAlreadyFired):
					// another worker fired it
				case errors.Is(o.Err, store.ErrConflict), errors.Is(o.Err, store.ErrNotTried):
					stopped[k] = true // the schedule changed under us: the next pass reads it again
				default:
					errs = append(errs, o.Err)
					stopped[k] = true
				}
			}
		}
		if n > 0 { // the runs start while the next batch fires
			started += n
			e.wakePools()
		}
	}
	return started, errs
}

// fireSlot builds the slot's run and fires it through the store.
func (e *Engine) fireSlot(ctx context.Context, sc store.Schedule, spec *schedule.Spec, slot, next time.Time, manual bool, versions map[string]store.Version) (store.ScheduleFireResult, error) {
	p, err := e.slotFire(ctx, sc, spec, slot, next, manual, versions)
	if err != nil {
		return store.ScheduleFireResult{}, err
	}
	return e.st.ScheduleFire(ctx, p)
}

// slotFire builds the fire of a slot: its run (its inputs evaluated with
// schedule.*, the workflow's key or schedule.RunKey). versions caches the
// versions read (nil: none).
func (e *Engine) slotFire(ctx context.Context, sc store.Schedule, spec *schedule.Spec, slot, next time.Time, manual bool, versions map[string]store.Version) (store.ScheduleFireParams, error) {
	vk := sc.Workflow + "\x00" + sc.Version
	v, ok := versions[vk]
	if !ok {
		var err error
		if v, err = e.st.VersionGet(ctx, sc.Workflow, sc.Version); err != nil {
			return store.ScheduleFireParams{}, fmt.Errorf("schedule %s/%s: %w", sc.Workflow, sc.Name, err)
		}
		v.Graph = nil // load reads it by hash, from its cache
		if versions != nil {
			versions[vk] = v
		}
	}
	l, err := e.load(ctx, v.Workflow, v.Hash)
	if err != nil {
		return store.ScheduleFireParams{}, fmt.Errorf("schedule %s/%s: %w", sc.Workflow, sc.Name, err)
	}
	inputs, key, err := e.scheduleRunInputs(ctx, l, sc.Name, spec, slot)
	if err != nil {
		return store.ScheduleFireParams{}, &slotInputError{fmt.Errorf("schedule %s/%s slot %s: %w", sc.Workflow, sc.Name, slot.UTC().Format(time.RFC3339), err)}
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
	// A key the workflow declares may be held by a run started another
	// way (or by another slot's): the slot starts no second run of it
	// (language.md §2); the store decides in the fire's transaction.
	keyHeld := func(old store.Run) (bool, error) { return continues(old, v), nil }
	return store.ScheduleFireParams{Workflow: sc.Workflow, Name: sc.Name, Slot: slot, Version: sc.Version,
		Overlap: sc.Overlap, Jitter: jitter, Run: ins, NextAt: next, Manual: manual, KeyHeld: keyHeld, Now: now}, nil
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

// Is makes a slotInputError ErrSlotInputs.
func (e *slotInputError) Is(target error) bool { return target == ErrSlotInputs }

// ErrSlotInputs is what the error of a slot whose run could not be built
// is (errors.Is): its schedule's inputs or the run key failed to evaluate,
// or the inputs are not what the workflow declares. TriggerSchedule
// returns it having written nothing.
var ErrSlotInputs = errors.New("the schedule's inputs failed")

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
