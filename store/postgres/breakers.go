package postgres

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

const upsertBreakerSQL = `INSERT INTO breakers (` + sqlrow.BreakerCols + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
	ON CONFLICT (name) DO UPDATE SET
		state = excluded.state, failures = excluded.failures, opened_at = excluded.opened_at,
		open_until = excluded.open_until, trial_run_id = excluded.trial_run_id,
		trial_step_key = excluded.trial_step_key, trial_until = excluded.trial_until,
		updated_at = excluded.updated_at`

// wakeBreakerSQL makes the runs parked on a breaker due now.
const wakeBreakerSQL = `UPDATE runs SET available_at = LEAST(available_at, $2::bigint), updated_at = $2::bigint
	WHERE status = 'waiting' AND wait_reason = $1`

// lockBreaker returns a breaker's row locked to the end of the transaction
// (created closed when missing), so concurrent read-modify-writes of the
// count serialize. (SQLite: BEGIN IMMEDIATE serializes them already.)
func (w *wtx) lockBreaker(name string, now int64) (store.Breaker, error) {
	if _, err := w.tx.Exec(w.ctx, `INSERT INTO breakers (name, state, updated_at) VALUES ($1, 'closed', $2)
		ON CONFLICT (name) DO NOTHING`, name, now); err != nil {
		return store.Breaker{}, fmt.Errorf("creating breaker %s: %w", name, err)
	}
	b, err := sqlrow.ScanBreaker(w.tx.QueryRow(w.ctx, `SELECT `+sqlrow.BreakerCols+` FROM breakers WHERE name = $1 FOR UPDATE`, name))
	if err != nil {
		return b, fmt.Errorf("reading breaker %s: %w", name, err)
	}
	return b, nil
}

// trialHolderLive says whether the holder of b's half-open trial still
// holds its lease (store.AcquireBreaker): the trial's run is leased, or an
// open dead letter of its step key is claimed by a dlq retry; both
// measured on the database's clock, as every lease (leaseclock.go).
func (w *wtx) trialHolderLive(b store.Breaker, callerNow int64) (bool, error) {
	if b.State != store.BreakerHalfOpen || b.TrialRunID == "" {
		return false, nil
	}
	var live bool
	err := w.tx.QueryRow(w.ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1 AND lease_owner IS NOT NULL AND lease_expires_at > `+leaseNow(4, 3)+`)
		OR EXISTS (SELECT 1 FROM dead_letters WHERE run_id = $1 AND step_key = $2 AND status = 'open'
			AND claim_owner IS NOT NULL AND claim_until > `+leaseNow(4, 3)+`)`, b.TrialRunID, b.TrialStepKey, callerNow, w.callerClock).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("reading the holder of breaker %s's trial: %w", b.Name, err)
	}
	return live, nil
}

func (w *wtx) putBreaker(b store.Breaker) error {
	if _, err := w.tx.Exec(w.ctx, upsertBreakerSQL, b.Name, string(b.State), b.Failures, sqlrow.TimeArg(b.OpenedAt), sqlrow.TimeArg(b.OpenUntil),
		sqlrow.TextArg(b.TrialRunID), sqlrow.TextArg(b.TrialStepKey), sqlrow.TimeArg(b.TrialUntil), b.UpdatedAt.UnixMicro()); err != nil {
		return fmt.Errorf("writing breaker %s: %w", b.Name, err)
	}
	return nil
}

// breakerWrites applies a transition's breaker outcomes and queues the
// events of their state changes to the run.
func (w *wtx) breakerWrites(t *store.Transition) error {
	now := t.Now.UnixMicro()
	for _, bw := range t.Breakers {
		b, err := w.lockBreaker(bw.Name, now)
		if err != nil {
			return err
		}
		nb, event, woke := store.ApplyBreaker(b, bw, t.RunID, t.Now)
		if err := w.putBreaker(nb); err != nil {
			return err
		}
		if event != "" {
			w.appendEvents(t.RunID, now, []store.EventWrite{{Kind: event, StepKey: bw.StepKey, Data: sqlrow.BreakerEventData(nb)}}, nil)
		}
		if woke {
			if _, err := w.tx.Exec(w.ctx, wakeBreakerSQL, "breaker:"+bw.Name, now); err != nil {
				return fmt.Errorf("waking the runs parked on breaker %s: %w", bw.Name, err)
			}
			w.notify = true
		}
	}
	return nil
}

// BreakerAcquire decides whether a step key may start an attempt under a
// breaker. A closed breaker is answered with one read; a state change
// (taking the trial) is written, under the row lock, with its event.
func (s *Store) BreakerAcquire(ctx context.Context, p store.BreakerAcquireParams) (store.Breaker, bool, error) {
	b, err := one(ctx, s.pool, sqlrow.ScanBreaker, `SELECT `+sqlrow.BreakerCols+` FROM breakers WHERE name = $1`, p.Name)
	switch {
	case noRows(err):
		return store.Breaker{Name: p.Name, State: store.BreakerClosed}, true, nil
	case err != nil:
		return b, false, s.fail("reading breaker "+p.Name, err)
	case b.State == store.BreakerClosed:
		return b, true, nil
	}
	var ok bool
	err = s.write(ctx, "acquiring breaker "+p.Name, func(w *wtx) error {
		cur, err := w.lockBreaker(p.Name, p.Now.UnixMicro())
		if err != nil {
			return err
		}
		live, err := w.trialHolderLive(cur, p.Now.UnixMicro())
		if err != nil {
			return err
		}
		nb, granted, changed, event := store.AcquireBreaker(cur, p, live)
		b, ok = nb, granted
		if !changed {
			return nil
		}
		if event != "" {
			w.appendEvents(p.RunID, p.Now.UnixMicro(), []store.EventWrite{{Kind: event, StepKey: p.StepKey, Data: sqlrow.BreakerEventData(nb)}}, nil)
		}
		return w.putBreaker(nb)
	})
	return b, ok, err
}

// BreakerList returns every stored breaker by name.
func (s *Store) BreakerList(ctx context.Context) ([]store.Breaker, error) {
	bs, err := all(ctx, s.pool, sqlrow.ScanBreaker, `SELECT `+sqlrow.BreakerCols+` FROM breakers ORDER BY name`)
	return bs, s.fail("listing breakers", err)
}
