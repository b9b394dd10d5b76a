package sqlrow

import "github.com/flowrun/flowrun/store"

// Scanner is a row: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Scanner interface{ Scan(dest ...any) error }

// ScanRun reads a run row. The run columns differ by backend (SQLite
// keeps the inputs in a table of their own), so each backend writes its own
// list, in this order:
//
//	id, workflow, version, graph_hash, key, status, inputs, outputs, error,
//	created_at, started_at, finished_at, available_at, deadline_at,
//	lease_owner, lease_epoch, lease_expires_at, parent_run_id,
//	parent_step_key, root_run_id, attempts_used, cancel_requested,
//	wait_reason, updated_at, attempt, work_dir, trace_id, trace_span_id,
//	trace_parent_span_id
func ScanRun(sc Scanner) (store.Run, error) {
	var r store.Run
	var status string
	err := sc.Scan(&r.ID, &r.Workflow, &r.Version, &r.GraphHash, Text(&r.Key), &status,
		JSON(&r.Inputs), JSON(&r.Outputs), JSON(&r.Error),
		Time(&r.CreatedAt), Time(&r.StartedAt), Time(&r.FinishedAt), Time(&r.AvailableAt), Time(&r.DeadlineAt),
		Text(&r.Lease.Owner), &r.Lease.Epoch, Time(&r.LeaseExpiresAt),
		Text(&r.ParentRunID), Text(&r.ParentStepKey), &r.RootRunID,
		&r.AttemptsUsed, &r.CancelRequested, Text(&r.WaitReason), Time(&r.UpdatedAt), &r.Attempt, Text(&r.WorkDir),
		Text(&r.Trace.TraceID), Text(&r.Trace.SpanID), Text(&r.Trace.ParentSpanID))
	r.Status = store.RunStatus(status)
	return r, err
}

// StepCols are the columns ScanStep reads, in order, from a table named
// steps. The output of a row written with store.ItemOutputs is the list of
// its item keys' outputs, assembled here (string_agg with ORDER BY: SQLite
// 3.44 and Postgres alike), so every read of a step returns what the step's
// expressions would have seen.
const StepCols = `run_id, key, step, idx, iter, status, attempts, ` + stepOutputCol + `, error,
	started_at, finished_at, wake_at, detail, state`

// stepOutputCol is the output column of StepCols: an item's output as
// stored, null for an item that did not complete (the runner's fold, which
// builds the list when an expression reads it).
const stepOutputCol = `CASE WHEN steps.output = '` + store.ItemOutputsText + `' THEN
	(SELECT '[' || COALESCE(string_agg(CASE WHEN it.status = 'completed' AND it.output IS NOT NULL AND it.output <> ''
			THEN it.output ELSE 'null' END, ',' ORDER BY it.idx), '') || ']'
		FROM steps it WHERE it.run_id = steps.run_id AND it.step = steps.step AND it.idx >= 0 AND it.iter = -1)
	ELSE steps.output END`

// StepTopCols are StepCols for a view that folds a step's items
// (store.Store.StepTops): the output of a row written with
// store.ItemOutputs is NULL, not the list assembled from every item row.
const StepTopCols = `run_id, key, step, idx, iter, status, attempts,
	CASE WHEN steps.output = '` + store.ItemOutputsText + `' THEN NULL ELSE steps.output END, error,
	started_at, finished_at, wake_at, detail, state`

// ScanItemTotal reads a step, a status, a count and a sum of attempts.
func ScanItemTotal(sc Scanner) (store.ItemTotal, error) {
	var t store.ItemTotal
	var status string
	err := sc.Scan(&t.Step, &status, &t.Items, &t.Attempts)
	t.Status = store.StepStatus(status)
	return t, err
}

// ScanStep reads a step row of StepCols (or StepTopCols).
func ScanStep(sc Scanner) (store.Step, error) {
	var st store.Step
	var status string
	err := sc.Scan(&st.RunID, &st.Key, &st.Step, &st.Index, &st.Iteration, &status, &st.Attempts,
		JSON(&st.Output), JSON(&st.Error),
		Time(&st.StartedAt), Time(&st.FinishedAt), Time(&st.WakeAt),
		Text(&st.Detail), JSON(&st.State))
	st.Status = store.StepStatus(status)
	return st, err
}

// AttemptCols are the columns ScanAttempt reads, in order.
const AttemptCols = `run_id, step_key, attempt, status, owner, started_at, finished_at,
	output, error, idempotency_key`

// ScanAttempt reads an attempt row of AttemptCols.
func ScanAttempt(sc Scanner) (store.Attempt, error) {
	var a store.Attempt
	var status string
	err := sc.Scan(&a.RunID, &a.StepKey, &a.Attempt, &status, Text(&a.Owner),
		Time(&a.StartedAt), Time(&a.FinishedAt), JSON(&a.Output), JSON(&a.Error),
		Text(&a.IdempotencyKey))
	a.Status = store.AttemptStatus(status)
	return a, err
}

// EventCols are the columns ScanEvent reads, in order.
const EventCols = `id, run_id, at, kind, step_key, data`

// ScanEvent reads an event row of EventCols.
func ScanEvent(sc Scanner) (store.Event, error) {
	var e store.Event
	err := sc.Scan(&e.ID, &e.RunID, Time(&e.At), &e.Kind, Text(&e.StepKey), JSON(&e.Data))
	return e, err
}

// SignalCols are the columns ScanSignal reads, in order.
const SignalCols = `id, run_id, name, payload, created_at, consumed_by`

// ScanSignal reads a signal row of SignalCols.
func ScanSignal(sc Scanner) (store.Signal, error) {
	var g store.Signal
	err := sc.Scan(&g.ID, &g.RunID, &g.Name, JSON(&g.Payload), Time(&g.CreatedAt), Text(&g.ConsumedBy))
	return g, err
}

// VersionCols are the columns of a version row, in the order the backends'
// version scanners read them (the graph's destination differs: SQLite
// keeps the driver's slice without a copy).
const VersionCols = `workflow, version, major, minor, patch, hash, graph, created_at, revision`

// VersionInsertCols are the columns a new version (its first revision)
// is inserted with; revision takes its default, 1.
const VersionInsertCols = `workflow, version, major, minor, patch, hash, graph, created_at`

// VersionHeadCols reads a version without its graph (scanned as nil).
const VersionHeadCols = `workflow, version, major, minor, patch, hash, NULL, created_at, revision`
