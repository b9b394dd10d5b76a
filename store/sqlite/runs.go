package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
	sqlite3 "modernc.org/sqlite/lib"
)

const insertRunSQL = `INSERT INTO runs (id, workflow, version, graph_hash, key, status,
	created_at, available_at, deadline_at, parent_run_id, parent_step_key, root_run_id, updated_at, work_dir,
	trace_id, trace_span_id, trace_parent_span_id)
	VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, ?8, ?9, ?10,
		COALESCE(?11, (SELECT root_run_id FROM runs WHERE id = ?9), ?1), ?6, ?12, ?13, ?14, ?15)`

// insertInputsSQL stores a run's inputs apart from its row (0005).
const insertInputsSQL = `INSERT INTO run_inputs (run_id, inputs) VALUES (?1, ?2)`

// selectRunSQL reads one run. The inputs come from a join, not runCols'
// subquery: SQLite copies a scalar subquery's value into a register of its
// own, so a large input (a foreach's items) was held twice over while the
// row was read, at every read of the run.
const selectRunSQL = `SELECT ` + runColsHead + `ri.inputs` + runColsTail + `
	FROM runs LEFT JOIN run_inputs ri ON ri.run_id = runs.id WHERE runs.id = ?1`

const insertEventSQL = `INSERT INTO events (run_id, at, kind, step_key, data) VALUES (?1, ?2, ?3, ?4, ?5)`

// maxEventRows is the most events one statement of insertEventsSQL appends.
const maxEventRows = 16

// insertEventsSQL.get(n) appends n events of a run (?1) at one time (?2)
// in one statement, in row order: a transition of a run of instant steps
// has many events, and one statement costs less than n. The rows' ids are
// consecutive (one statement, AUTOINCREMENT, the one writer), so the last
// insert id gives them all; RETURNING would cost a temporary table.
var insertEventsSQL = &rowsSQL{max: maxEventRows, build: func(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO events (run_id, at, kind, step_key, data) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(?1, ?2, ?%d, ?%d, ?%d)", 3+3*i, 4+3*i, 5+3*i)
	}
	return b.String()
}}

// insertRun creates a pending run and its first events. A zero AvailableAt
// means now; an empty RootRunID is the parent's root, or for a top-level
// run the run itself.
func (w *wtx) insertRun(p store.RunInsertParams) error {
	if p.ID == "" {
		return errors.New("a run needs an id")
	}
	avail := p.AvailableAt
	if avail.IsZero() {
		avail = p.Now
	}
	_, err := w.exec(insertRunSQL, p.ID, p.Workflow, p.Version, p.GraphHash, sqlrow.TextArg(p.Key),
		p.Now.UnixMicro(), avail.UnixMicro(), sqlrow.TimeArg(p.DeadlineAt), sqlrow.TextArg(p.ParentRunID), sqlrow.TextArg(p.ParentStepKey), sqlrow.TextArg(p.RootRunID), sqlrow.TextArg(p.WorkDir),
		sqlrow.TextArg(p.Trace.TraceID), sqlrow.TextArg(p.Trace.SpanID), sqlrow.TextArg(p.Trace.ParentSpanID))
	switch sqliteExtCode(err) {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("run %s already exists: %w", p.ID, store.ErrConflict)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("parent run %s of run %s: %w", p.ParentRunID, p.ID, store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	if len(p.Inputs) > 0 {
		if _, err := w.exec(insertInputsSQL, p.ID, string(p.Inputs)); err != nil {
			return fmt.Errorf("storing the inputs of run %s: %w", p.ID, err)
		}
	}
	if d := p.Delivery; d != nil {
		_, err := w.exec(insertDeliverySQL, p.Workflow, d.Webhook, d.ID, p.ID, p.Now.UnixMicro())
		if sqliteExtCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
			return fmt.Errorf("webhook %q of workflow %s delivery %q: %w", d.Webhook, p.Workflow, d.ID, store.ErrDuplicateDelivery)
		}
		if err != nil {
			return fmt.Errorf("recording the webhook delivery of run %s: %w", p.ID, err)
		}
	}
	_, err = w.insertEvents(p.ID, p.Now.UnixMicro(), p.Events)
	return err
}

// insertDeliverySQL records the webhook delivery that started a run (0011).
const insertDeliverySQL = `INSERT INTO webhook_deliveries (workflow, webhook, delivery_id, run_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)`

// RunInsertBatch creates runs in one write transaction: all or none.
func (s *Store) RunInsertBatch(ctx context.Context, ps []store.RunInsertParams) error {
	if len(ps) == 0 {
		return nil
	}
	return s.write(ctx, fmt.Sprintf("creating %d runs", len(ps)), func(w *wtx) error {
		for i, p := range ps {
			if err := w.insertRun(p); err != nil {
				return fmt.Errorf("run %d of the batch: %w", i, err)
			}
		}
		return nil
	})
}

// RunInsertBatchKeyed inserts the runs unless a key of seen got a newer
// run than the caller saw; the write transaction is the database's one
// writer, so the check and the insert are one step for every other start.
func (s *Store) RunInsertBatchKeyed(ctx context.Context, workflow string, ps []store.RunInsertParams, seen map[string]string) error {
	if len(ps) == 0 {
		return nil
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	keysJSON, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	return s.write(ctx, fmt.Sprintf("creating %d runs", len(ps)), func(w *wtx) error {
		if len(keys) > 0 {
			rows, err := w.query(`SELECT k.value, (SELECT r.id FROM runs r WHERE r.workflow = ?1 AND r.key = k.value
					ORDER BY r.created_at DESC, r.id DESC LIMIT 1)
				FROM json_each(?2) k`, workflow, string(keysJSON))
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var key string
				var id sql.NullString
				if err := rows.Scan(&key, &id); err != nil {
					return err
				}
				if id.String != seen[key] {
					return fmt.Errorf("run key %q: %w", key, store.ErrKeyRace)
				}
			}
			if err := rows.Err(); err != nil {
				return err
			}
			rows.Close()
		}
		for i, p := range ps {
			if err := w.insertRun(p); err != nil {
				return fmt.Errorf("run %d of the batch: %w", i, err)
			}
		}
		return nil
	})
}

// DeliveryRun returns the run a webhook delivery started.
func (s *Store) DeliveryRun(ctx context.Context, workflow, webhook, deliveryID string) (string, error) {
	var id string
	err := s.queryRow(ctx, `SELECT run_id FROM webhook_deliveries WHERE workflow = ?1 AND webhook = ?2 AND delivery_id = ?3`,
		workflow, webhook, deliveryID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("webhook %q of workflow %s delivery %q: %w", webhook, workflow, deliveryID, store.ErrNotFound)
	}
	return id, s.fail("reading a webhook delivery", err)
}

// insertEvents appends events to a run and returns their ids in order.
func (w *wtx) insertEvents(runID string, at int64, evs []store.EventWrite) ([]int64, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(evs))
	for len(evs) >= 2 {
		n := min(len(evs), maxEventRows)
		args := make([]any, 2, 2+3*n)
		args[0], args[1] = runID, at
		for _, e := range evs[:n] {
			args = append(args, e.Kind, sqlrow.TextArg(e.StepKey), sqlrow.JSONArg(e.Data))
		}
		res, err := w.exec(insertEventsSQL.get(n), args...)
		if err != nil {
			return nil, fmt.Errorf("appending %d events of run %s: %w", n, runID, err)
		}
		last, err := res.LastInsertId()
		if err != nil {
			return nil, fmt.Errorf("appending %d events of run %s: %w", n, runID, err)
		}
		if got, err := res.RowsAffected(); err != nil || got != int64(n) {
			return nil, fmt.Errorf("appending %d events of run %s: %d were inserted (%v)", n, runID, got, err)
		}
		for k := int64(n) - 1; k >= 0; k-- {
			ids = append(ids, last-k)
		}
		evs = evs[n:]
	}
	if len(evs) == 0 {
		return ids, nil
	}
	ids = append(ids, make([]int64, len(evs))...)
	base := len(ids) - len(evs)
	for j, e := range evs {
		i := base + j
		res, err := w.exec(insertEventSQL, runID, at, e.Kind, sqlrow.TextArg(e.StepKey), sqlrow.JSONArg(e.Data))
		if err != nil {
			return nil, fmt.Errorf("appending event %s of run %s: %w", e.Kind, runID, err)
		}
		if ids[i], err = res.LastInsertId(); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// RunInsert creates a pending run with its first events.
func (s *Store) RunInsert(ctx context.Context, p store.RunInsertParams) (store.Run, error) {
	var r store.Run
	err := s.write(ctx, "creating run "+p.ID, func(w *wtx) error {
		if err := w.insertRun(p); err != nil {
			return err
		}
		var err error
		r, err = sqlrow.ScanRun(w.queryRow(selectRunSQL, p.ID))
		return err
	})
	return r, err
}

// RunInsertKeyed creates the run unless keep answers with the newest run
// of its key; the write transaction is the database's one writer, so no
// other start of the key interleaves between the read and the insert.
func (s *Store) RunInsertKeyed(ctx context.Context, p store.RunInsertParams, keep func(store.Run) (bool, error)) (store.Run, bool, error) {
	var r store.Run
	created := false
	err := s.write(ctx, "creating run "+p.ID, func(w *wtx) error {
		if p.Key != "" {
			old, err := sqlrow.ScanRun(w.queryRow(`SELECT `+runCols+` FROM runs WHERE workflow = ?1 AND key = ?2
				ORDER BY created_at DESC, id DESC LIMIT 1`, p.Workflow, p.Key))
			switch {
			case err == nil:
				ok, err := keep(old)
				if err != nil {
					return err
				}
				if ok {
					r = old
					return nil
				}
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		if err := w.insertRun(p); err != nil {
			return err
		}
		created = true
		var err error
		r, err = sqlrow.ScanRun(w.queryRow(selectRunSQL, p.ID))
		return err
	})
	return r, created, err
}

// RunGet returns a run by full id, or store.ErrNotFound.
func (s *Store) RunGet(ctx context.Context, id string) (store.Run, error) {
	r, err := sqlrow.ScanRun(s.queryRow(ctx, selectRunSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	}
	return r, s.fail("reading run "+id, err)
}

// RunGetHead is RunGet without the inputs.
func (s *Store) RunGetHead(ctx context.Context, id string) (store.Run, error) {
	r, err := sqlrow.ScanRun(s.queryRow(ctx, selectRunHeadSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	}
	return r, s.fail("reading run "+id, err)
}

// selectRunHeadSQL reads one run without its inputs.
const selectRunHeadSQL = `SELECT ` + claimCols + ` FROM runs WHERE id = ?1`

// RunFind resolves a full id or a unique prefix of one.
func (s *Store) RunFind(ctx context.Context, idOrPrefix string) (store.Run, error) {
	if idOrPrefix == "" {
		return store.Run{}, fmt.Errorf("an empty run id matches every run: %w", store.ErrAmbiguous)
	}
	r, err := s.RunGet(ctx, idOrPrefix)
	if !errors.Is(err, store.ErrNotFound) {
		return r, err
	}
	// A range scan on the primary key: prefix <= id < prefix+1.
	lo, hi := idOrPrefix, prefixEnd(idOrPrefix)
	var rs []store.Run
	if hi == "" {
		rs, err = readAll(ctx, s, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE id >= ?1 ORDER BY id LIMIT 2`, lo)
	} else {
		rs, err = readAll(ctx, s, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 2`, lo, hi)
	}
	if err != nil {
		return store.Run{}, s.fail("finding run "+idOrPrefix, err)
	}
	switch len(rs) {
	case 0:
		return store.Run{}, fmt.Errorf("no run id starts with %s: %w", idOrPrefix, store.ErrNotFound)
	case 1:
		return rs[0], nil
	}
	return store.Run{}, fmt.Errorf("%s is the start of several run ids (%s, %s, ...); give more of the id: %w",
		idOrPrefix, rs[0].ID, rs[1].ID, store.ErrAmbiguous)
}

// prefixEnd returns the smallest string greater than every string with the
// prefix, or "" when there is none (the prefix is all 0xff bytes).
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// RunGetByKey returns the newest run of a workflow with the key. An empty
// key matches no run.
func (s *Store) RunGetByKey(ctx context.Context, workflow, key string) (store.Run, error) {
	if key == "" {
		return store.Run{}, fmt.Errorf("workflow %s run with an empty key: %w", workflow, store.ErrNotFound)
	}
	r, err := sqlrow.ScanRun(s.queryRow(ctx, `SELECT `+runCols+` FROM runs WHERE workflow = ?1 AND key = ?2
		ORDER BY created_at DESC, id DESC LIMIT 1`, workflow, key))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("workflow %s run with key %q: %w", workflow, key, store.ErrNotFound)
	}
	return r, s.fail("reading a run by key", err)
}

// RunsByKeys returns the newest run of the workflow for each key that has
// one; the keys are bound as one JSON array.
func (s *Store) RunsByKeys(ctx context.Context, workflow string, keys []string) (map[string]store.Run, error) {
	out := map[string]store.Run{}
	if len(keys) == 0 {
		return out, nil
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rs, err := readAll(ctx, s, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs
		WHERE workflow = ?1 AND key IN (SELECT value FROM json_each(?2)) AND key <> ''
		ORDER BY key, created_at DESC, id DESC`, workflow, string(list))
	if err != nil {
		return nil, s.fail("reading runs by key", err)
	}
	for _, r := range rs {
		if _, seen := out[r.Key]; !seen {
			out[r.Key] = r
		}
	}
	return out, nil
}

// RunChildren lists the runs whose parent is the run, oldest first.
func (s *Store) RunChildren(ctx context.Context, runID string) ([]store.Run, error) {
	rs, err := readAll(ctx, s, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE parent_run_id = ?1 ORDER BY created_at, id`, runID)
	return rs, s.fail("listing the children of run "+runID, err)
}

// RunList lists runs newest first (created_at, then id, descending), with
// the number of top-level steps of their graph (the version's step count)
// and of those settled (foreach items and until iterations are not
// counted). Counts are computed for the returned page only.
func (s *Store) RunList(ctx context.Context, p store.RunListParams) ([]store.RunSummary, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("?%d", len(args))
	}
	if statuses := listStatuses(p); len(statuses) == 1 {
		where = append(where, "status = "+arg(statuses[0]))
	} else if len(statuses) > 1 {
		in := make([]string, len(statuses))
		for i, st := range statuses {
			in[i] = arg(st)
		}
		where = append(where, "status IN ("+strings.Join(in, ", ")+")")
	}
	if p.Key != "" {
		where = append(where, "key = "+arg(p.Key))
	}
	if p.Text != "" {
		// The error's message, folded in Go when it was written
		// (sqlrow.ErrorText); the key as typed, or with its ASCII letters
		// lowered (SQLite's lower() folds no other letter).
		t, raw := arg(sqlrow.Fold(p.Text)), arg(p.Text)
		where = append(where, "(instr(lower(id), "+t+") > 0 OR instr(lower(coalesce(key, '')), "+t+") > 0 OR instr(coalesce(key, ''), "+raw+") > 0 OR instr(coalesce(error_text, ''), "+t+") > 0)")
	}
	if !p.Since.IsZero() {
		where = append(where, "created_at >= "+arg(p.Since.UnixMicro()))
	}
	if !p.Until.IsZero() {
		where = append(where, "created_at < "+arg(p.Until.UnixMicro()))
	}
	if p.TopLevel {
		where = append(where, "parent_run_id IS NULL")
	}
	if p.Workflow != "" {
		where = append(where, "workflow = "+arg(p.Workflow))
	}
	if p.IDPrefix != "" {
		// A range scan on the primary key, as RunFind's.
		where = append(where, "id >= "+arg(p.IDPrefix))
		if hi := prefixEnd(p.IDPrefix); hi != "" {
			where = append(where, "id < "+arg(hi))
		}
	}
	if p.BeforeID != "" {
		var created int64
		err := s.queryRow(ctx, `SELECT created_at FROM runs WHERE id = ?1`, p.BeforeID).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("listing runs before run %s: %w", p.BeforeID, store.ErrNotFound)
		}
		if err != nil {
			return nil, s.fail("listing runs", err)
		}
		where = append(where, "(created_at, id) < ("+arg(created)+", "+arg(p.BeforeID)+")")
	}
	limit := int64(-1) // SQLite: a negative LIMIT is no limit
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	cond := ""
	if len(where) > 0 {
		cond = "WHERE " + strings.Join(where, " AND ")
	}
	// A page's step counts are read from steps_top, and the engine's own
	// rows among them (store.GraphStep) subtracted, read from steps_saga,
	// which holds only those: a string test on every step row would slow a
	// page with a long run down (migration 0019). The rows of steps a
	// migration dropped (Transition.DropSteps) are subtracted likewise,
	// from steps_dropped (migration 0021).
	q := `WITH page AS (
		SELECT id, workflow, version, key, status, created_at, finished_at FROM runs ` + cond + `
		ORDER BY created_at DESC, id DESC LIMIT ` + arg(limit) + `
	), counts AS (
		SELECT run_id, count(*) AS total,
			sum(status IN ('completed', 'failed', 'skipped', 'canceled')) AS done
		FROM steps WHERE run_id IN (SELECT id FROM page) AND idx = -1 AND iter = -1
		GROUP BY run_id
	), saga AS (
		SELECT run_id, count(*) AS total,
			sum(status IN ('completed', 'failed', 'skipped', 'canceled')) AS done
		FROM steps INDEXED BY steps_saga
		WHERE run_id IN (SELECT id FROM page) AND idx = -1 AND iter = -1 AND instr(step, '~') > 0
		GROUP BY run_id
	), dropped AS (
		SELECT run_id, count(*) AS total,
			sum(status IN ('completed', 'failed', 'skipped', 'canceled')) AS done
		FROM steps INDEXED BY steps_dropped
		WHERE run_id IN (SELECT id FROM page) AND idx = -1 AND iter = -1 AND dropped = 1
		GROUP BY run_id
	)
	SELECT page.id, page.workflow, page.version, page.key, page.status, page.created_at, page.finished_at,
		COALESCE((SELECT v.steps FROM workflow_versions v INDEXED BY workflow_versions_steps
				WHERE v.workflow = page.workflow AND v.version = page.version),
			counts.total - COALESCE(saga.total, 0) - COALESCE(dropped.total, 0), 0),
		COALESCE(counts.done - COALESCE(saga.done, 0) - COALESCE(dropped.done, 0), 0)
	FROM page LEFT JOIN counts ON counts.run_id = page.id LEFT JOIN saga ON saga.run_id = page.id
		LEFT JOIN dropped ON dropped.run_id = page.id
	ORDER BY page.created_at DESC, page.id DESC`
	out, err := readAll(ctx, s, func(sc sqlrow.Scanner) (store.RunSummary, error) {
		var r store.RunSummary
		var status string
		err := sc.Scan(&r.ID, &r.Workflow, &r.Version, sqlrow.Text(&r.Key), &status,
			sqlrow.Time(&r.CreatedAt), sqlrow.Time(&r.FinishedAt), &r.StepsTotal, &r.StepsDone)
		r.Status = store.RunStatus(status)
		return r, err
	}, q, args...)
	return out, s.fail("listing runs", err)
}

// sqliteExtCode returns the extended SQLite result code of err, or 0.
func sqliteExtCode(err error) int {
	if err == nil {
		return 0
	}
	var e interface{ Code() int }
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// listStatuses is the set of statuses a listing keeps: Status and
// Statuses together, without repeats, in the order given.
func listStatuses(p store.RunListParams) []string {
	var out []string
	seen := map[store.RunStatus]bool{}
	for _, st := range append([]store.RunStatus{p.Status}, p.Statuses...) {
		if st != "" && !seen[st] {
			seen[st] = true
			out = append(out, string(st))
		}
	}
	return out
}
