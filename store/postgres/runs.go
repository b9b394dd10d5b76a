package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// insertRunSQL creates a pending run. The root is the given one, else the
// parent's, else the run itself. (SQLite: ?N parameters; the same query.)
const insertRunSQL = `INSERT INTO runs (id, workflow, version, graph_hash, key, status, inputs,
	created_at, available_at, deadline_at, parent_run_id, parent_step_key, root_run_id, updated_at, work_dir,
	trace_id, trace_span_id, trace_parent_span_id)
	VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11,
		COALESCE($12::text, (SELECT r.root_run_id FROM runs r WHERE r.id = $10::text), $1), $7, $13::text,
		$14::text, $15::text, $16::text)`

// insertRun queues the insert of a pending run into b and its first events
// into w. A zero AvailableAt means now; an empty RootRunID is the parent's
// root, or for a top-level run the run itself. It asks for a notification:
// a new run is work.
func (w *wtx) insertRun(b *batch, p store.RunInsertParams) error {
	if p.ID == "" {
		return errors.New("a run needs an id")
	}
	avail := p.AvailableAt
	if avail.IsZero() {
		avail = p.Now
	}
	b.execWrap(func(err error) error {
		switch pgCode(err) {
		case codeUniqueViolation:
			return fmt.Errorf("run %s already exists: %w", p.ID, store.ErrConflict)
		case codeForeignKeyViolation:
			return fmt.Errorf("parent run %s of run %s: %w", p.ParentRunID, p.ID, store.ErrNotFound)
		}
		return fmt.Errorf("creating run %s: %w", p.ID, err)
	}, insertRunSQL, p.ID, p.Workflow, p.Version, p.GraphHash, sqlrow.TextArg(p.Key), sqlrow.JSONArg(p.Inputs),
		p.Now.UnixMicro(), avail.UnixMicro(), sqlrow.TimeArg(p.DeadlineAt), sqlrow.TextArg(p.ParentRunID), sqlrow.TextArg(p.ParentStepKey), sqlrow.TextArg(p.RootRunID), sqlrow.TextArg(p.WorkDir),
		sqlrow.TextArg(p.Trace.TraceID), sqlrow.TextArg(p.Trace.SpanID), sqlrow.TextArg(p.Trace.ParentSpanID))
	if d := p.Delivery; d != nil {
		b.execWrap(func(err error) error {
			if pgCode(err) == codeUniqueViolation {
				return fmt.Errorf("webhook %q of workflow %s delivery %q: %w", d.Webhook, p.Workflow, d.ID, store.ErrDuplicateDelivery)
			}
			return fmt.Errorf("recording the webhook delivery of run %s: %w", p.ID, err)
		}, insertDeliverySQL, p.Workflow, d.Webhook, d.ID, p.ID, p.Now.UnixMicro())
	}
	w.appendEvents(p.ID, p.Now.UnixMicro(), p.Events, nil)
	w.notify = true
	return nil
}

// insertDeliverySQL records the webhook delivery that started a run (0008).
const insertDeliverySQL = `INSERT INTO webhook_deliveries (workflow, webhook, delivery_id, run_id, created_at) VALUES ($1, $2, $3, $4, $5)`

// RunInsertBatch creates runs in one transaction, their statements sent
// in one round trip: all or none.
func (s *Store) RunInsertBatch(ctx context.Context, ps []store.RunInsertParams) error {
	if len(ps) == 0 {
		return nil
	}
	return s.write(ctx, fmt.Sprintf("creating %d runs", len(ps)), func(w *wtx) error {
		var b batch
		for i, p := range ps {
			if err := w.insertRun(&b, p); err != nil {
				return fmt.Errorf("run %d of the batch: %w", i, err)
			}
		}
		return b.send(w)
	})
}

// RunInsertBatchKeyed inserts the runs unless a key of seen got a newer
// run than the caller saw. It first takes the transaction lock of every
// key (in key order, so two batches never wait on each other in a cycle),
// which keeps every other start of them out until the commit.
func (s *Store) RunInsertBatchKeyed(ctx context.Context, workflow string, ps []store.RunInsertParams, seen map[string]string) error {
	if len(ps) == 0 {
		return nil
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return s.write(ctx, fmt.Sprintf("creating %d runs", len(ps)), func(w *wtx) error {
		if len(keys) > 0 {
			if _, err := w.tx.Exec(w.ctx, `SELECT pg_advisory_xact_lock(hashtextextended('flowrun.key:' || current_schema() || ':' || $1 || ':' || k, 0))
				FROM unnest($2::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n`, workflow, keys); err != nil {
				return err
			}
			rows, err := w.tx.Query(w.ctx, `SELECT DISTINCT ON (key) key, id FROM runs
				WHERE workflow = $1 AND key = ANY($2::text[]) ORDER BY key, created_at DESC, id DESC`, workflow, keys)
			if err != nil {
				return err
			}
			now := map[string]string{}
			for rows.Next() {
				var k, id string
				if err := rows.Scan(&k, &id); err != nil {
					rows.Close()
					return err
				}
				now[k] = id
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, k := range keys {
				if now[k] != seen[k] {
					return fmt.Errorf("run key %q: %w", k, store.ErrKeyRace)
				}
			}
		}
		var b batch
		for i, p := range ps {
			if err := w.insertRun(&b, p); err != nil {
				return fmt.Errorf("run %d of the batch: %w", i, err)
			}
		}
		return b.send(w)
	})
}

// DeliveryRun returns the run a webhook delivery started.
func (s *Store) DeliveryRun(ctx context.Context, workflow, webhook, deliveryID string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT run_id FROM webhook_deliveries WHERE workflow = $1 AND webhook = $2 AND delivery_id = $3`,
		workflow, webhook, deliveryID).Scan(&id)
	if noRows(err) {
		return "", fmt.Errorf("webhook %q of workflow %s delivery %q: %w", webhook, workflow, deliveryID, store.ErrNotFound)
	}
	return id, s.fail("reading a webhook delivery", err)
}

// RunInsert creates a pending run with its first events.
func (s *Store) RunInsert(ctx context.Context, p store.RunInsertParams) (store.Run, error) {
	var r store.Run
	err := s.write(ctx, "creating run "+p.ID, func(w *wtx) error {
		var b batch
		if err := w.insertRun(&b, p); err != nil {
			return err
		}
		if err := b.send(w); err != nil {
			return err
		}
		var err error
		r, err = w.runGet(p.ID)
		return err
	})
	return r, err
}

// keyLockSQL serializes the starts of one workflow and key across
// processes and hosts: a transaction-scoped advisory lock, released by the
// commit (as migrateLockSQL and slotLockSQL).
const keyLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('flowrun.key:' || current_schema() || ':' || $1 || ':' || $2, 0))`

// RunInsertKeyed creates the run unless keep answers with the newest run
// of its key; the key's transaction lock keeps every other start of it
// out between the read and the insert.
func (s *Store) RunInsertKeyed(ctx context.Context, p store.RunInsertParams, keep func(store.Run) (bool, error)) (store.Run, bool, error) {
	var r store.Run
	created := false
	err := s.write(ctx, "creating run "+p.ID, func(w *wtx) error {
		created = false
		if p.Key != "" {
			if _, err := w.tx.Exec(w.ctx, keyLockSQL, p.Workflow, p.Key); err != nil {
				return err
			}
			old, err := one(w.ctx, w.tx, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE workflow = $1 AND key = $2
				ORDER BY created_at DESC, id DESC LIMIT 1`, p.Workflow, p.Key)
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
			case !noRows(err):
				return err
			}
		}
		var b batch
		if err := w.insertRun(&b, p); err != nil {
			return err
		}
		if err := b.send(w); err != nil {
			return err
		}
		created = true
		var err error
		r, err = w.runGet(p.ID)
		return err
	})
	return r, created, err
}

// RunGet returns a run by full id, or store.ErrNotFound.
func (s *Store) RunGet(ctx context.Context, id string) (store.Run, error) {
	r, err := one(ctx, s.pool, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE id = $1`, id)
	if noRows(err) {
		return r, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	}
	return r, s.fail("reading run "+id, err)
}

// RunGetHead is RunGet without the inputs.
func (s *Store) RunGetHead(ctx context.Context, id string) (store.Run, error) {
	r, err := one(ctx, s.pool, sqlrow.ScanRun, `SELECT `+runHeadCols()+` FROM runs WHERE id = $1`, id)
	if noRows(err) {
		return r, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	}
	return r, s.fail("reading run "+id, err)
}

// runHeadCols are runCols with NULL for the inputs, made on first use
// rather than when any flowrun process starts.
func runHeadCols() string {
	runHeadOnce.Do(func() { runHeadText = strings.Replace(runCols, " inputs,", " NULL,", 1) })
	return runHeadText
}

var (
	runHeadOnce sync.Once
	runHeadText string
)

// RunFind resolves a full id or a unique prefix of one.
func (s *Store) RunFind(ctx context.Context, idOrPrefix string) (store.Run, error) {
	if idOrPrefix == "" {
		return store.Run{}, fmt.Errorf("an empty run id matches every run: %w", store.ErrAmbiguous)
	}
	r, err := s.RunGet(ctx, idOrPrefix)
	if !errors.Is(err, store.ErrNotFound) {
		return r, err
	}
	// A prefix match on the primary key. (SQLite: a range scan prefix <= id
	// < prefix+1; here the upper bound could be invalid UTF-8, which text
	// refuses, so LIKE with the prefix escaped. The id column is COLLATE
	// "C", so Postgres may use the primary key's index for it.)
	rs, err := all(ctx, s.pool, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE id LIKE $1 ORDER BY id LIMIT 2`,
		likePrefix(idOrPrefix))
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

// likePrefix is a LIKE pattern matching the strings that start with prefix
// (LIKE's default escape character is the backslash).
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(prefix) + "%"
}

// RunGetByKey returns the newest run of a workflow with the key. An empty
// key matches no run.
func (s *Store) RunGetByKey(ctx context.Context, workflow, key string) (store.Run, error) {
	if key == "" {
		return store.Run{}, fmt.Errorf("workflow %s run with an empty key: %w", workflow, store.ErrNotFound)
	}
	r, err := one(ctx, s.pool, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE workflow = $1 AND key = $2
		ORDER BY created_at DESC, id DESC LIMIT 1`, workflow, key)
	if noRows(err) {
		return r, fmt.Errorf("workflow %s run with key %q: %w", workflow, key, store.ErrNotFound)
	}
	return r, s.fail("reading a run by key", err)
}

// RunsByKeys returns the newest run of the workflow for each key that has
// one.
func (s *Store) RunsByKeys(ctx context.Context, workflow string, keys []string) (map[string]store.Run, error) {
	out := map[string]store.Run{}
	if len(keys) == 0 {
		return out, nil
	}
	rs, err := all(ctx, s.pool, sqlrow.ScanRun, `SELECT DISTINCT ON (key) `+runCols+` FROM runs
		WHERE workflow = $1 AND key = ANY($2::text[]) AND key <> ''
		ORDER BY key, created_at DESC, id DESC`, workflow, keys)
	if err != nil {
		return nil, s.fail("reading runs by key", err)
	}
	for _, r := range rs {
		out[r.Key] = r
	}
	return out, nil
}

// RunChildren lists the runs whose parent is the run, oldest first.
func (s *Store) RunChildren(ctx context.Context, runID string) ([]store.Run, error) {
	rs, err := all(ctx, s.pool, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE parent_run_id = $1 ORDER BY created_at, id`, runID)
	return rs, s.fail("listing the children of run "+runID, err)
}

// RunList lists runs newest first (created_at, then id, descending), with
// the number of top-level steps of their graph (the version's step count)
// and of those settled (foreach items and until iterations are not
// counted). Counts are computed for the returned page only.
func (s *Store) RunList(ctx context.Context, p store.RunListParams) ([]store.RunSummary, error) {
	var beforeCreated int64
	if p.BeforeID != "" {
		err := s.pool.QueryRow(ctx, `SELECT created_at FROM runs WHERE id = $1`, p.BeforeID).Scan(&beforeCreated)
		if noRows(err) {
			return nil, fmt.Errorf("listing runs before run %s: %w", p.BeforeID, store.ErrNotFound)
		}
		if err != nil {
			return nil, s.fail("listing runs", err)
		}
	}
	q, args := runListSQL(p, beforeCreated)
	out, err := all(ctx, s.pool, func(sc sqlrow.Scanner) (store.RunSummary, error) {
		var r store.RunSummary
		var status string
		err := sc.Scan(&r.ID, &r.Workflow, &r.Version, sqlrow.Text(&r.Key), &status,
			sqlrow.Time(&r.CreatedAt), sqlrow.Time(&r.FinishedAt), &r.StepsTotal, &r.StepsDone)
		r.Status = store.RunStatus(status)
		return r, err
	}, q, args...)
	return out, s.fail("listing runs", err)
}

// runListSQL is the listing query of p and its arguments; beforeCreated is
// the creation time of p.BeforeID.
func runListSQL(p store.RunListParams, beforeCreated int64) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
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
		// (sqlrow.ErrorText); the key as typed, or lowered by lower(),
		// which folds what the database's locale folds.
		t, raw := arg(sqlrow.Fold(p.Text)), arg(p.Text)
		where = append(where, "(strpos(lower(id), "+t+") > 0 OR strpos(lower(coalesce(key, '')), "+t+") > 0 OR strpos(coalesce(key, ''), "+raw+") > 0 OR strpos(coalesce(error_text, ''), "+t+") > 0)")
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
		where = append(where, "id LIKE "+arg(likePrefix(p.IDPrefix)))
	}
	if p.BeforeID != "" {
		where = append(where, "(created_at, id) < ("+arg(beforeCreated)+"::bigint, "+arg(p.BeforeID)+"::text)")
	}
	var limit any // Postgres: LIMIT NULL is no limit (SQLite: a negative LIMIT)
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	cond := ""
	if len(where) > 0 {
		cond = "WHERE " + strings.Join(where, " AND ")
	}
	// The page is read first (a subquery with the LIMIT), then each of its
	// runs' steps are counted by a LATERAL aggregate, which Postgres can
	// only answer by looking the run up in steps, once a run of the page:
	// the plan's cost is the page's, whatever the statistics say (right
	// after a bulk load there are none, and statistics taken while the
	// runs were pending say few are completed). A CTE with the step counts
	// joined to the page let the planner count steps for the whole table,
	// or scan the page once for every step (TestRunListPlanWithoutStatistics).
	// runs_workflow_status_created (0014) answers a filter by both workflow
	// and status in the listing's order.
	// The engine's own rows (store.GraphStep) are counted apart, from the
	// partial index steps_saga that holds only those (migration 0017), and
	// subtracted: a string test on every step row would read each row.
	// The rows of steps a migration dropped (Transition.DropSteps) are
	// subtracted likewise, from steps_dropped (migration 0019).
	// (SQLite: sum(status IN (...)) counts the finished steps; Postgres
	// has no boolean sum and counts with FILTER.)
	q := `SELECT page.id, page.workflow, page.version, page.key, page.status, page.created_at, page.finished_at,
		COALESCE((SELECT v.steps FROM workflow_versions v WHERE v.workflow = page.workflow AND v.version = page.version),
			counts.total),
		counts.done
	FROM (
		SELECT id, workflow, version, key, status, created_at, finished_at FROM runs ` + cond + `
		ORDER BY created_at DESC, id DESC LIMIT ` + arg(limit) + `::bigint
	) page CROSS JOIN LATERAL (
		SELECT count(*) - (SELECT count(*) FROM steps g
				WHERE g.run_id = page.id AND g.idx = -1 AND g.iter = -1 AND strpos(g.step, '~') > 0)
				- (SELECT count(*) FROM steps d
				WHERE d.run_id = page.id AND d.idx = -1 AND d.iter = -1 AND d.dropped) AS total,
			count(*) FILTER (WHERE s.status IN ('completed', 'failed', 'skipped', 'canceled')) - (SELECT count(*) FROM steps g
				WHERE g.run_id = page.id AND g.idx = -1 AND g.iter = -1 AND strpos(g.step, '~') > 0
					AND g.status IN ('completed', 'failed', 'skipped', 'canceled'))
				- (SELECT count(*) FROM steps d
				WHERE d.run_id = page.id AND d.idx = -1 AND d.iter = -1 AND d.dropped
					AND d.status IN ('completed', 'failed', 'skipped', 'canceled')) AS done
		FROM steps s WHERE s.run_id = page.id AND s.idx = -1 AND s.iter = -1
	) counts
	ORDER BY page.created_at DESC, page.id DESC`
	return q, args
}

// runGet reads a run inside a transaction.
func (w *wtx) runGet(id string) (store.Run, error) {
	return one(w.ctx, w.tx, sqlrow.ScanRun, `SELECT `+runCols+` FROM runs WHERE id = $1`, id)
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
