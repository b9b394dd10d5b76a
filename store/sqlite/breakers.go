package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

const upsertBreakerSQL = `INSERT INTO breakers (` + sqlrow.BreakerCols + `)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
	ON CONFLICT (name) DO UPDATE SET
		state = excluded.state, failures = excluded.failures, opened_at = excluded.opened_at,
		open_until = excluded.open_until, trial_run_id = excluded.trial_run_id,
		trial_step_key = excluded.trial_step_key, trial_until = excluded.trial_until,
		updated_at = excluded.updated_at`

// wakeBreakerSQL makes the runs parked on a breaker due now.
const wakeBreakerSQL = `UPDATE runs SET available_at = MIN(available_at, ?2), updated_at = ?2
	WHERE status = 'waiting' AND wait_reason = ?1`

// breaker reads a breaker in the write transaction; a missing one is the
// zero Breaker (closed).
func (w *wtx) breaker(name string) (store.Breaker, error) {
	b, err := sqlrow.ScanBreaker(w.queryRow(`SELECT `+sqlrow.BreakerCols+` FROM breakers WHERE name = ?1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Breaker{Name: name}, nil
	}
	if err != nil {
		return b, fmt.Errorf("reading breaker %s: %w", name, err)
	}
	return b, nil
}

func (w *wtx) putBreaker(b store.Breaker) error {
	if _, err := w.exec(upsertBreakerSQL, b.Name, string(b.State), b.Failures, sqlrow.TimeArg(b.OpenedAt), sqlrow.TimeArg(b.OpenUntil),
		sqlrow.TextArg(b.TrialRunID), sqlrow.TextArg(b.TrialStepKey), sqlrow.TimeArg(b.TrialUntil), b.UpdatedAt.UnixMicro()); err != nil {
		return fmt.Errorf("writing breaker %s: %w", b.Name, err)
	}
	return nil
}

// breakerWrites applies a transition's breaker outcomes (the transaction
// is BEGIN IMMEDIATE, so the read-modify-write is not raced) and returns
// the events their state changes append to the run.
func (w *wtx) breakerWrites(t *store.Transition) ([]store.EventWrite, error) {
	var evs []store.EventWrite
	for _, bw := range t.Breakers {
		b, err := w.breaker(bw.Name)
		if err != nil {
			return nil, err
		}
		nb, event, woke := store.ApplyBreaker(b, bw, t.RunID, t.Now)
		if err := w.putBreaker(nb); err != nil {
			return nil, err
		}
		if event != "" {
			evs = append(evs, store.EventWrite{Kind: event, StepKey: bw.StepKey, Data: sqlrow.BreakerEventData(nb)})
		}
		if woke {
			if _, err := w.exec(wakeBreakerSQL, "breaker:"+bw.Name, t.Now.UnixMicro()); err != nil {
				return nil, fmt.Errorf("waking the runs parked on breaker %s: %w", bw.Name, err)
			}
		}
	}
	return evs, nil
}

// BreakerAcquire decides whether a step key may start an attempt under a
// breaker. A closed breaker is answered from the read pool without a
// write; a state change (taking the trial) is written with its event.
func (s *Store) BreakerAcquire(ctx context.Context, p store.BreakerAcquireParams) (store.Breaker, bool, error) {
	b, err := sqlrow.ScanBreaker(s.queryRow(ctx, `SELECT `+sqlrow.BreakerCols+` FROM breakers WHERE name = ?1`, p.Name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Breaker{Name: p.Name, State: store.BreakerClosed}, true, nil
	case err != nil:
		return b, false, s.fail("reading breaker "+p.Name, err)
	case b.State == store.BreakerClosed:
		return b, true, nil
	}
	var ok bool
	err = s.write(ctx, "acquiring breaker "+p.Name, func(w *wtx) error {
		cur, err := w.breaker(p.Name)
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
		if err := w.putBreaker(nb); err != nil {
			return err
		}
		if event != "" {
			_, err = w.insertEvents(p.RunID, p.Now.UnixMicro(), []store.EventWrite{{Kind: event, StepKey: p.StepKey, Data: sqlrow.BreakerEventData(nb)}})
		}
		return err
	})
	return b, ok, err
}

// trialHolderLive says whether the holder of b's half-open trial still
// holds its lease (store.AcquireBreaker): the trial's run is leased, or an
// open dead letter of its step key is claimed by a dlq retry.
func (w *wtx) trialHolderLive(b store.Breaker, now int64) (bool, error) {
	if b.State != store.BreakerHalfOpen || b.TrialRunID == "" {
		return false, nil
	}
	var live bool
	err := w.queryRow(`SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1 AND lease_owner IS NOT NULL AND lease_expires_at > ?3)
		OR EXISTS (SELECT 1 FROM dead_letters WHERE run_id = ?1 AND step_key = ?2 AND status = 'open'
			AND claim_owner IS NOT NULL AND claim_until > ?3)`, b.TrialRunID, b.TrialStepKey, now).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("reading the holder of breaker %s's trial: %w", b.Name, err)
	}
	return live, nil
}

// BreakerList returns every stored breaker by name.
func (s *Store) BreakerList(ctx context.Context) ([]store.Breaker, error) {
	bs, err := readAll(ctx, s, sqlrow.ScanBreaker, `SELECT `+sqlrow.BreakerCols+` FROM breakers ORDER BY name`)
	return bs, s.fail("listing breakers", err)
}
