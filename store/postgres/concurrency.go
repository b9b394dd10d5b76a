package postgres

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
)

// liveSlots is the holders and waiters of a key whose run is unfinished:
// the slot of a finished run counts for nothing, however it ended.
const liveSlots = `SELECT s.run_id, s.run_created_at, s.held FROM concurrency_slots s JOIN runs r ON r.id = s.run_id
	WHERE s.workflow = $1 AND s.key = $2 AND r.status NOT IN ('completed', 'failed', 'canceled')`

// slotLockSQL serializes the slot requests of one key, to the commit: the
// count of holders and the grant must not interleave with another
// process's. (SQLite: BEGIN IMMEDIATE does it.)
const slotLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended('flowrun.slot:' || current_schema() || ':' || $1 || ':' || $2, 0))`

// acquireSlotSQL queues the run's request and grants it, in one statement:
// granted when the run holds it already, or when fewer than $4 live runs
// hold the key and no live run queued before it (creation time, then id)
// still waits. RETURNING says what the run has now and whether the row is
// new (xmax = 0 on a fresh insert).
const acquireSlotSQL = `WITH live AS (` + liveSlots + `)
	INSERT INTO concurrency_slots (workflow, key, run_id, run_created_at, held, updated_at)
	SELECT $1, $2, $3, $5::bigint, (SELECT COUNT(*) FROM live WHERE held AND run_id <> $3) < $4::bigint
		AND NOT EXISTS (SELECT 1 FROM live WHERE NOT held AND run_id <> $3
			AND (run_created_at < $5::bigint OR (run_created_at = $5::bigint AND run_id < $3))), $6::bigint
	ON CONFLICT (workflow, key, run_id) DO UPDATE SET
		held = concurrency_slots.held OR excluded.held,
		updated_at = excluded.updated_at
	RETURNING held, xmax = 0, (SELECT COUNT(*) FROM live WHERE held AND run_id <> $3)`

// SlotAcquire queues and, when it can, grants a concurrency slot in one
// statement, under the key's lock.
func (s *Store) SlotAcquire(ctx context.Context, p store.SlotAcquireParams) (store.Slot, error) {
	var sl store.Slot
	err := s.write(ctx, "acquiring a concurrency slot", func(w *wtx) error {
		if _, err := w.tx.Exec(ctx, slotLockSQL, p.Workflow, p.Key); err != nil {
			return err
		}
		var fresh bool
		var others int
		if err := w.tx.QueryRow(ctx, acquireSlotSQL, p.Workflow, p.Key, p.RunID, p.Limit, p.RunCreatedAt.UnixMicro(),
			p.Now.UnixMicro()).Scan(&sl.Held, &fresh, &others); err != nil {
			return err
		}
		sl.Queued = fresh && !sl.Held
		sl.Holders = others
		if sl.Held {
			sl.Holders++
		}
		return nil
	})
	if err != nil {
		return sl, fmt.Errorf("run %s: concurrency key %q: %w", p.RunID, p.Key, err)
	}
	return sl, nil
}

// releaseSlotsSQL gives back the slots of a run that just ended and makes
// the first live run queued on each of its keys due now, in one statement.
const releaseSlotsSQL = `WITH gone AS (DELETE FROM concurrency_slots WHERE run_id = $1 RETURNING workflow, key)
	UPDATE runs SET available_at = LEAST(available_at, $2::bigint), updated_at = $2::bigint
	WHERE id IN (SELECT DISTINCT ON (s.workflow, s.key) s.run_id
		FROM concurrency_slots s JOIN gone g ON g.workflow = s.workflow AND g.key = s.key
		JOIN runs r ON r.id = s.run_id
		WHERE NOT s.held AND r.status = 'waiting' AND s.run_id <> $1
		ORDER BY s.workflow, s.key, s.run_created_at, s.run_id)`

// releaseSlots queues the release of a finished run's slots in b.
func (w *wtx) releaseSlots(b *batch, runID string, now int64) {
	b.execWrap(func(err error) error {
		return fmt.Errorf("releasing the concurrency slots of run %s: %w", runID, err)
	}, releaseSlotsSQL, runID, now)
}

// resilience applies the parts of a transition kept by this migration:
// breaker outcomes (their events queued to the run), dead letters, queued
// alerts, and the release of the run's slots when it ends.
func (w *wtx) resilience(t *store.Transition) error {
	if err := w.breakerWrites(t); err != nil {
		return err
	}
	var b batch
	w.deadLetterWrites(&b, t)
	w.alertWrites(&b, t)
	if t.Run != nil && t.Run.Status != nil && t.Run.Status.Terminal() {
		w.releaseSlots(&b, t.RunID, t.Now.UnixMicro())
		w.notify = true
	}
	return b.send(w)
}
