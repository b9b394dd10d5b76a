package sqlrow

import (
	"time"

	"github.com/flowrun/flowrun/store"
)

// ScheduleCols are the columns ScanSchedule reads, in order.
const ScheduleCols = `workflow, name, version, kind, spec, timezone, overlap, catch_up, max_catch_up, jitter,
	inputs, work_dir, paused, active, since, next_at, last_slot, last_run_id, last_fired_at, created_at, updated_at`

// ScanSchedule reads a schedule row of ScheduleCols.
func ScanSchedule(sc Scanner) (store.Schedule, error) {
	var s store.Schedule
	var jitter int64
	err := sc.Scan(&s.Workflow, &s.Name, &s.Version, &s.Kind, &s.Spec, &s.Timezone, &s.Overlap, &s.CatchUp,
		&s.MaxCatchUp, &jitter, JSON(&s.Inputs), Text(&s.WorkDir), &s.Paused, &s.Active,
		Time(&s.Since), Time(&s.NextAt), Time(&s.LastSlot), Text(&s.LastRunID), Time(&s.LastFiredAt),
		Time(&s.CreatedAt), Time(&s.UpdatedAt))
	s.Jitter = time.Duration(jitter) * time.Microsecond
	return s, err
}

// ScheduleFireCols are the columns ScanScheduleFire reads, in order.
const ScheduleFireCols = `workflow, schedule, slot, status, reason, run_id, fired_at, jitter`

// ScanScheduleFire reads a fire row of ScheduleFireCols.
func ScanScheduleFire(sc Scanner) (store.ScheduleFire, error) {
	var f store.ScheduleFire
	var status string
	var jitter int64
	err := sc.Scan(&f.Workflow, &f.Schedule, Time(&f.Slot), &status, Text(&f.Reason), Text(&f.RunID),
		Time(&f.FiredAt), &jitter)
	f.Status = store.FireStatus(status)
	f.Jitter = time.Duration(jitter) * time.Microsecond
	return f, err
}

// ScheduleDefArgs are a schedule definition's parameters for each
// backend's activation upsert, in the order both number them:
// workflow, name, version, kind, spec, timezone, overlap, catch_up,
// max_catch_up, jitter, inputs, work_dir, now, next_at.
func ScheduleDefArgs(p *store.SchedulesActivateParams, d store.ScheduleDef) []any {
	return []any{p.Workflow, d.Name, p.Version, d.Kind, d.Spec, d.Timezone, d.Overlap, d.CatchUp,
		d.MaxCatchUp, d.Jitter.Microseconds(), JSONArg(d.Inputs), TextArg(p.WorkDir), p.Now.UnixMicro(), TimeArg(d.NextAt)}
}

// ScheduleNames are the names of an activation's schedules.
func ScheduleNames(p *store.SchedulesActivateParams) []string {
	names := make([]string, 0, len(p.Schedules))
	for _, d := range p.Schedules {
		names = append(names, d.Name)
	}
	return names
}
