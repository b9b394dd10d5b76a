package interp

// The JSON forms of lists: what `runs --json`, `dlq list --json`,
// `breakers --json` and `schedules --json` print and what the HTTP API
// answers (one encoder for both; RunView is the form of one run). The
// field names are part of the interface (spec/semantics.md §16,
// spec/api.md).

import (
	"context"
	"encoding/json"
	"time"

	"github.com/flowrun/flowrun/store"
)

// JSONTime renders a time as the JSON forms do: RFC 3339, UTC,
// milliseconds.
func JSONTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// jsonTimeOrNil is JSONTime, or nil for the zero time.
func jsonTimeOrNil(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := JSONTime(t)
	return &s
}

// RunSummaryJSON is one element of `runs --json` and of GET /v1/runs.
type RunSummaryJSON struct {
	RunID      string  `json:"run_id"`
	Workflow   string  `json:"workflow"`
	Version    string  `json:"version"`
	Key        string  `json:"key"`
	Status     string  `json:"status"`
	CreatedAt  string  `json:"created_at"`
	FinishedAt *string `json:"finished_at"` // null while the run is unfinished
	StepsTotal int     `json:"steps_total"`
	StepsDone  int     `json:"steps_done"`
	// Schedule is the fire that started the run, when a schedule did.
	Schedule *RunScheduleJSON `json:"schedule,omitempty"`
}

// RunScheduleJSON says which schedule and slot started a run.
type RunScheduleJSON struct {
	Name   string `json:"name"`
	Slot   string `json:"slot"`
	Manual bool   `json:"manual"`
}

// RunSummaries returns the JSON forms of run summaries, in order.
func RunSummaries(runs []store.RunSummary) []RunSummaryJSON {
	out := make([]RunSummaryJSON, 0, len(runs))
	for _, r := range runs {
		out = append(out, RunSummaryJSON{
			RunID: r.ID, Workflow: r.Workflow, Version: r.Version, Key: r.Key, Status: string(r.Status),
			CreatedAt: JSONTime(r.CreatedAt), FinishedAt: jsonTimeOrNil(r.FinishedAt),
			StepsTotal: r.StepsTotal, StepsDone: r.StepsDone,
		})
	}
	return out
}

// AddRunSchedules fills the schedule of the runs a schedule started.
func AddRunSchedules(ctx context.Context, st store.Store, runs []RunSummaryJSON) error {
	for i := range runs {
		fires, err := st.ScheduleFireList(ctx, store.ScheduleFireListParams{RunID: runs[i].RunID})
		if err != nil {
			return err
		}
		if len(fires) > 0 {
			f := fires[0]
			runs[i].Schedule = &RunScheduleJSON{Name: f.Schedule, Slot: JSONTime(f.Slot), Manual: f.Reason == "manual"}
		}
	}
	return nil
}

// DeadLetterJSON is one element of `dlq list --json` and of GET
// /v1/dead-letters.
type DeadLetterJSON struct {
	ID        int64           `json:"id"`
	RunID     string          `json:"run_id"`
	Step      string          `json:"step"`
	Index     int             `json:"index"`
	Item      json.RawMessage `json:"item"`
	Error     json.RawMessage `json:"error"`
	CreatedAt string          `json:"created_at"`
	// Status and ClosedAt are listed with all only.
	Status   string  `json:"status,omitempty"`
	ClosedAt *string `json:"closed_at,omitempty"`
}

// DeadLetters returns the JSON forms of dead letters; all adds their
// status and closing time.
func DeadLetters(ds []store.DeadLetter, all bool) []DeadLetterJSON {
	out := make([]DeadLetterJSON, 0, len(ds))
	for _, d := range ds {
		j := DeadLetterJSON{ID: d.ID, RunID: d.RunID, Step: d.Step, Index: d.Index, Item: orNull(d.Item),
			Error: orNull(d.Error), CreatedAt: JSONTime(d.CreatedAt)}
		if all {
			j.Status = string(d.Status)
			j.ClosedAt = jsonTimeOrNil(d.ClosedAt)
		}
		out = append(out, j)
	}
	return out
}

// BreakerJSON is one element of `breakers --json` and of GET /v1/breakers.
type BreakerJSON struct {
	Name      string            `json:"name"`
	State     string            `json:"state"`
	Failures  int               `json:"failures"`
	OpenedAt  *string           `json:"opened_at"`
	OpenUntil *string           `json:"open_until"`
	Trial     *BreakerTrialJSON `json:"trial"`
	UpdatedAt string            `json:"updated_at"`
}

// BreakerTrialJSON names the attempt that holds a half-open breaker's
// trial.
type BreakerTrialJSON struct {
	RunID string `json:"run_id"`
	Step  string `json:"step"`
}

// Breakers returns the JSON forms of breakers.
func Breakers(bs []store.Breaker) []BreakerJSON {
	out := make([]BreakerJSON, 0, len(bs))
	for _, b := range bs {
		j := BreakerJSON{Name: b.Name, State: string(b.State), Failures: b.Failures, UpdatedAt: JSONTime(b.UpdatedAt),
			OpenedAt: jsonTimeOrNil(b.OpenedAt)}
		if b.State == store.BreakerOpen {
			j.OpenUntil = jsonTimeOrNil(b.OpenUntil)
		}
		if b.TrialRunID != "" {
			j.Trial = &BreakerTrialJSON{RunID: b.TrialRunID, Step: b.TrialStepKey}
		}
		out = append(out, j)
	}
	return out
}

// ScheduleJSON is one element of `schedules --json` and of GET
// /v1/schedules.
type ScheduleJSON struct {
	Workflow string    `json:"workflow"`
	Name     string    `json:"name"`
	Version  string    `json:"version"`
	Kind     string    `json:"kind"`
	Spec     string    `json:"spec"`
	Timezone string    `json:"timezone"`
	Overlap  string    `json:"overlap"`
	CatchUp  string    `json:"catch_up"`
	Paused   bool      `json:"paused"`
	NextFire *string   `json:"next_fire"`
	LastFire *FireJSON `json:"last_fire"`
}

// FireJSON is a schedule's fire, in ScheduleJSON and in a run's
// `schedule` field.
type FireJSON struct {
	Schedule string  `json:"schedule,omitempty"`
	Slot     string  `json:"slot"`
	Status   string  `json:"status,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	RunID    *string `json:"run_id,omitempty"`
	FiredAt  string  `json:"fired_at,omitempty"`
}

// FireOf returns the JSON form of a fire; withName adds its schedule's
// name.
func FireOf(f store.ScheduleFire, withName bool) *FireJSON {
	j := &FireJSON{Slot: JSONTime(f.Slot), Status: string(f.Status), Reason: f.Reason, FiredAt: JSONTime(f.FiredAt)}
	if withName {
		j.Schedule = f.Schedule
	}
	if f.RunID != "" {
		id := f.RunID
		j.RunID = &id
	}
	return j
}

// Schedules returns the JSON forms of schedules, each with its last fire
// (read from st).
func Schedules(ctx context.Context, st store.Store, scs []store.Schedule) ([]ScheduleJSON, error) {
	out := make([]ScheduleJSON, 0, len(scs))
	for _, sc := range scs {
		j := ScheduleJSON{Workflow: sc.Workflow, Name: sc.Name, Version: sc.Version, Kind: sc.Kind, Spec: sc.Spec,
			Timezone: sc.Timezone, Overlap: sc.Overlap, CatchUp: sc.CatchUp, Paused: sc.Paused}
		if !sc.Paused {
			j.NextFire = jsonTimeOrNil(sc.NextAt)
		}
		fs, err := st.ScheduleFireList(ctx, store.ScheduleFireListParams{Workflow: sc.Workflow, Name: sc.Name, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(fs) > 0 {
			j.LastFire = FireOf(fs[0], false)
		}
		out = append(out, j)
	}
	return out, nil
}

// EventJSON is one event of a run, as GET /v1/runs/{id}/events sends it
// (the data of a Server-Sent Event whose id is ID).
type EventJSON struct {
	ID    int64           `json:"id"`
	RunID string          `json:"run_id"`
	At    string          `json:"at"`
	Kind  string          `json:"kind"`
	Step  *string         `json:"step"` // the step key; null for a run event
	Data  json.RawMessage `json:"data"`
}

// EventOf returns the JSON form of an event.
func EventOf(ev store.Event) EventJSON {
	j := EventJSON{ID: ev.ID, RunID: ev.RunID, At: JSONTime(ev.At), Kind: ev.Kind, Data: orNull(ev.Data)}
	if ev.StepKey != "" {
		k := ev.StepKey
		j.Step = &k
	}
	return j
}

// VersionJSON is one stored version of a workflow, as `versions --json`
// prints it and GET /v1/workflows/{workflow}/versions lists it.
type VersionJSON struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version"`
	// Revision is the version's current revision: 1, or more for a
	// development version replaced in place (spec/versioning.md §8).
	Revision int `json:"revision"`
	// Hash and GraphHash are both the hash of its current graph: hash is
	// the API's first name of it, graph_hash the CLI's.
	Hash      string `json:"hash"`
	GraphHash string `json:"graph_hash"`
	CreatedAt string `json:"created_at"`
	// Runs counts the runs bound to the version; RunsByStatus by status
	// (only the statuses that occur).
	Runs         int            `json:"runs"`
	RunsByStatus map[string]int `json:"runs_by_status"`
}

// VersionsJSON returns the JSON forms of stored versions (heads), with
// the counts of runs, by version, of runs (the workflow's runs).
func VersionsJSON(vs []store.Version, runs []store.RunSummary) []VersionJSON {
	counts := map[string]int{}
	byStatus := map[string]map[string]int{}
	for _, r := range runs {
		counts[r.Version]++
		if byStatus[r.Version] == nil {
			byStatus[r.Version] = map[string]int{}
		}
		byStatus[r.Version][string(r.Status)]++
	}
	out := make([]VersionJSON, 0, len(vs))
	for _, v := range vs {
		by := byStatus[v.Version]
		if by == nil {
			by = map[string]int{}
		}
		out = append(out, VersionJSON{Workflow: v.Workflow, Version: v.Version, Revision: v.Revision, Hash: v.Hash, GraphHash: v.Hash,
			CreatedAt: JSONTime(v.CreatedAt), Runs: counts[v.Version], RunsByStatus: by})
	}
	return out
}

// WorkflowJSON is one stored workflow, as GET /v1/workflows lists them:
// its newest version and how many are stored.
type WorkflowJSON struct {
	Workflow  string `json:"workflow"`
	Newest    string `json:"newest"`
	Versions  int    `json:"versions"`
	UpdatedAt string `json:"updated_at"` // when its newest version was stored
}

// Workflows returns the JSON forms of the workflows of stored versions
// (VersionHeads order: by workflow, oldest version first).
func Workflows(vs []store.Version) []WorkflowJSON {
	out := []WorkflowJSON{}
	for _, v := range vs {
		if n := len(out); n > 0 && out[n-1].Workflow == v.Workflow {
			out[n-1].Newest, out[n-1].UpdatedAt = v.Version, JSONTime(v.CreatedAt)
			out[n-1].Versions++
			continue
		}
		out = append(out, WorkflowJSON{Workflow: v.Workflow, Newest: v.Version, Versions: 1, UpdatedAt: JSONTime(v.CreatedAt)})
	}
	return out
}

// WorkerJSON is one element of `workers --json` and of GET /v1/workers.
type WorkerJSON struct {
	ID          string `json:"id"`
	Host        string `json:"host"`
	PID         int    `json:"pid"`
	Version     string `json:"version"`
	Concurrency int    `json:"concurrency"`
	Held        int    `json:"runs_held"`
	StartedAt   string `json:"started_at"`
	LastSeen    string `json:"last_seen"`
	Live        bool   `json:"live"`
}

// Workers returns the JSON forms of the registered workers.
func Workers(ws []store.WorkerInfo) []WorkerJSON {
	out := make([]WorkerJSON, 0, len(ws))
	for _, w := range ws {
		out = append(out, WorkerJSON{ID: w.ID, Host: w.Host, PID: w.PID, Version: w.Version, Concurrency: w.Concurrency,
			Held: w.Held, StartedAt: JSONTime(w.StartedAt), LastSeen: JSONTime(w.LastSeen), Live: w.Live})
	}
	return out
}
