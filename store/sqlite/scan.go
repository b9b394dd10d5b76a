package sqlite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/store"
)

// Column encodings. Times are unix microseconds, UTC, NULL for the zero
// time; JSON is TEXT, NULL when empty; optional text is NULL when empty.

// tv encodes a time for a parameter.
func tv(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// jv encodes JSON for a parameter.
func jv(j json.RawMessage) any {
	if len(j) == 0 {
		return nil
	}
	return string(j)
}

// sv encodes optional text for a parameter.
func sv(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// timeCol scans a time column.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.t = time.Time{}
	case int64:
		*c.t = time.UnixMicro(x).UTC()
	default:
		return fmt.Errorf("time column holds %T, want an integer of unix microseconds", v)
	}
	return nil
}

// blobCol scans a BLOB column into a slice without the copy that
// database/sql makes for a *[]byte destination: modernc.org/sqlite hands
// each value over in a slice it allocated for that value alone and never
// reuses (conn.columnBlob), so the slice is kept as it is. A stored graph
// is megabytes for a long workflow; the second copy was that much more
// garbage at every graph load (TestVersionGraphsKept checks that rows
// scanned one after another keep their own bytes).
type blobCol struct{ b *[]byte }

func (c blobCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.b = nil
	case []byte:
		*c.b = x
	case string:
		*c.b = []byte(x)
	default:
		return fmt.Errorf("blob column holds %T", v)
	}
	return nil
}

// textCol scans an optional text column.
type textCol struct{ s *string }

func (c textCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.s = ""
	case string:
		*c.s = x
	case []byte:
		*c.s = string(x)
	default:
		return fmt.Errorf("text column holds %T", v)
	}
	return nil
}

// jsonCol scans a JSON text column.
type jsonCol struct{ j *json.RawMessage }

func (c jsonCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.j = nil
	case string:
		*c.j = json.RawMessage(x)
	case []byte:
		*c.j = append(json.RawMessage(nil), x...)
	default:
		return fmt.Errorf("JSON column holds %T", v)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

// runCols are the columns scanRun reads, in order. The inputs are in
// run_inputs (migration 0005), out of the row every transition rewrites.
const runCols = `id, workflow, version, graph_hash, key, status,
	(SELECT ri.inputs FROM run_inputs ri WHERE ri.run_id = runs.id), outputs, error,
	created_at, started_at, finished_at, available_at, deadline_at,
	lease_owner, lease_epoch, lease_expires_at, parent_run_id, parent_step_key, root_run_id,
	attempts_used, cancel_requested, wait_reason, updated_at, attempt, work_dir`

func scanRun(sc scanner) (store.Run, error) {
	var r store.Run
	var status string
	err := sc.Scan(&r.ID, &r.Workflow, &r.Version, &r.GraphHash, textCol{&r.Key}, &status,
		jsonCol{&r.Inputs}, jsonCol{&r.Outputs}, jsonCol{&r.Error},
		timeCol{&r.CreatedAt}, timeCol{&r.StartedAt}, timeCol{&r.FinishedAt}, timeCol{&r.AvailableAt}, timeCol{&r.DeadlineAt},
		textCol{&r.Lease.Owner}, &r.Lease.Epoch, timeCol{&r.LeaseExpiresAt},
		textCol{&r.ParentRunID}, textCol{&r.ParentStepKey}, &r.RootRunID,
		&r.AttemptsUsed, &r.CancelRequested, textCol{&r.WaitReason}, timeCol{&r.UpdatedAt}, &r.Attempt, textCol{&r.WorkDir})
	r.Status = store.RunStatus(status)
	return r, err
}

const stepCols = `run_id, key, step, idx, iter, status, attempts, output, error,
	started_at, finished_at, wake_at, detail, state`

func scanStep(sc scanner) (store.Step, error) {
	var st store.Step
	var status string
	err := sc.Scan(&st.RunID, &st.Key, &st.Step, &st.Index, &st.Iteration, &status, &st.Attempts,
		jsonCol{&st.Output}, jsonCol{&st.Error},
		timeCol{&st.StartedAt}, timeCol{&st.FinishedAt}, timeCol{&st.WakeAt},
		textCol{&st.Detail}, jsonCol{&st.State})
	st.Status = store.StepStatus(status)
	return st, err
}

const attemptCols = `run_id, step_key, attempt, status, owner, started_at, finished_at,
	output, error, idempotency_key`

func scanAttempt(sc scanner) (store.Attempt, error) {
	var a store.Attempt
	var status string
	err := sc.Scan(&a.RunID, &a.StepKey, &a.Attempt, &status, textCol{&a.Owner},
		timeCol{&a.StartedAt}, timeCol{&a.FinishedAt}, jsonCol{&a.Output}, jsonCol{&a.Error},
		textCol{&a.IdempotencyKey})
	a.Status = store.AttemptStatus(status)
	return a, err
}

const eventCols = `id, run_id, at, kind, step_key, data`

func scanEvent(sc scanner) (store.Event, error) {
	var e store.Event
	err := sc.Scan(&e.ID, &e.RunID, timeCol{&e.At}, &e.Kind, textCol{&e.StepKey}, jsonCol{&e.Data})
	return e, err
}

const signalCols = `id, run_id, name, payload, created_at, consumed_by`

func scanSignal(sc scanner) (store.Signal, error) {
	var g store.Signal
	err := sc.Scan(&g.ID, &g.RunID, &g.Name, jsonCol{&g.Payload}, timeCol{&g.CreatedAt}, textCol{&g.ConsumedBy})
	return g, err
}

const versionCols = `workflow, version, major, minor, patch, hash, graph, created_at`

// versionHeadCols reads a version without its graph (scanned as nil).
const versionHeadCols = `workflow, version, major, minor, patch, hash, NULL, created_at`

func scanVersion(sc scanner) (store.Version, error) {
	var v store.Version
	err := sc.Scan(&v.Workflow, &v.Version, &v.Major, &v.Minor, &v.Patch, &v.Hash, blobCol{&v.Graph}, timeCol{&v.CreatedAt})
	return v, err
}
