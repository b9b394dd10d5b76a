package sqlite

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// liveSlots is the holders and waiters of a key whose run is unfinished:
// the slot of a finished run counts for nothing, however it ended.
const liveSlots = `SELECT s.run_id, s.run_created_at, s.held FROM concurrency_slots s JOIN runs r ON r.id = s.run_id
	WHERE s.workflow = ?1 AND s.key = ?2 AND r.status NOT IN ('completed', 'failed', 'canceled')`

// acquireSlotSQL queues the run's request and grants it, in one statement:
// granted when the run holds it already, or when fewer than ?4 live runs
// hold the key and no live run queued before it (creation time, then id)
// still waits.
const acquireSlotSQL = `WITH live AS (` + liveSlots + `)
	INSERT INTO concurrency_slots (workflow, key, run_id, run_created_at, held, updated_at)
	SELECT ?1, ?2, ?3, ?5, (SELECT COUNT(*) FROM live WHERE held = 1 AND run_id <> ?3) < ?4
		AND NOT EXISTS (SELECT 1 FROM live WHERE held = 0 AND run_id <> ?3
			AND (run_created_at < ?5 OR (run_created_at = ?5 AND run_id < ?3))), ?6
	WHERE true
	ON CONFLICT (workflow, key, run_id) DO UPDATE SET
		held = concurrency_slots.held = 1 OR excluded.held = 1,
		updated_at = excluded.updated_at
	RETURNING held`

// SlotAcquire queues and, when it can, grants a concurrency slot in one
// statement (the write transaction is BEGIN IMMEDIATE: no other process
// counts the holders at the same time).
func (s *Store) SlotAcquire(ctx context.Context, p store.SlotAcquireParams) (store.Slot, error) {
	var sl store.Slot
	err := s.write(ctx, "acquiring a concurrency slot", func(w *wtx) error {
		var existed int
		if err := w.queryRow(`SELECT COUNT(*) FROM concurrency_slots WHERE workflow = ?1 AND key = ?2 AND run_id = ?3`,
			p.Workflow, p.Key, p.RunID).Scan(&existed); err != nil {
			return err
		}
		if err := w.queryRow(acquireSlotSQL, p.Workflow, p.Key, p.RunID, p.Limit, p.RunCreatedAt.UnixMicro(),
			p.Now.UnixMicro()).Scan(&sl.Held); err != nil {
			return err
		}
		sl.Queued = existed == 0 && !sl.Held
		return w.queryRow(`WITH live AS (`+liveSlots+`) SELECT COUNT(*) FROM live WHERE held = 1`, p.Workflow, p.Key).Scan(&sl.Holders)
	})
	if err != nil {
		return sl, fmt.Errorf("run %s: concurrency key %q: %w", p.RunID, p.Key, err)
	}
	return sl, nil
}

// releaseSlotsSQL deletes the slots a run holds or waits for; every
// transition that ends a run runs it, so it is prepared once (a hot
// statement).
const releaseSlotsSQL = `DELETE FROM concurrency_slots WHERE run_id = ?1 RETURNING workflow, key`

// releaseSlots gives back the slots of a run that just ended and makes the
// first live run queued on each of its keys due now.
func (w *wtx) releaseSlots(runID string, now int64) error {
	rows, err := writeAll(w, func(sc sqlrow.Scanner) ([2]string, error) {
		var k [2]string
		return k, sc.Scan(&k[0], &k[1])
	}, releaseSlotsSQL, runID)
	if err != nil {
		return fmt.Errorf("releasing the concurrency slots of run %s: %w", runID, err)
	}
	for _, k := range rows {
		if _, err := w.exec(`UPDATE runs SET available_at = MIN(available_at, ?3), updated_at = ?3
			WHERE id = (SELECT s.run_id FROM concurrency_slots s JOIN runs r ON r.id = s.run_id
				WHERE s.workflow = ?1 AND s.key = ?2 AND s.held = 0 AND r.status = 'waiting'
				ORDER BY s.run_created_at, s.run_id LIMIT 1)`, k[0], k[1], now); err != nil {
			return fmt.Errorf("waking the next run queued on %q: %w", k[1], err)
		}
	}
	return nil
}

// resilience applies the parts of a transition kept by this migration:
// breaker outcomes (their events appended to the run), dead letters,
// queued alerts, and the release of the run's slots when it ends.
func (w *wtx) resilience(t *store.Transition) error {
	evs, err := w.breakerWrites(t)
	if err != nil {
		return err
	}
	if _, err := w.insertEvents(t.RunID, t.Now.UnixMicro(), evs); err != nil {
		return err
	}
	if err := w.deadLetterWrites(t); err != nil {
		return err
	}
	if err := w.alertWrites(t); err != nil {
		return err
	}
	if t.Run != nil && t.Run.Status != nil && t.Run.Status.Terminal() {
		return w.releaseSlots(t.RunID, t.Now.UnixMicro())
	}
	return nil
}
