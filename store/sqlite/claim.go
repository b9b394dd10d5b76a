package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// claimSQL leases due runs in one statement. It runs in a BEGIN IMMEDIATE
// transaction, so no other process can claim between the SELECT and the
// UPDATE. (Postgres: the inner SELECT takes FOR UPDATE SKIP LOCKED instead.)
// The inner query walks the partial index runs_claim in (available_at, id)
// order; blocked and finished runs are not in it and are never claimed.
// The %s are the index choice, an optional widening of the lease test to
// the claimer's own leases (RunClaimParams.Own), and an optional
// restriction to one run or one root. INDEXED BY (SQLite only) pins runs_claim for the unrestricted claim:
// without statistics the planner would rather take runs_status_created and
// sort every pending run for each claim.
const claimSQL = `UPDATE runs SET
		lease_owner = ?1,
		lease_epoch = lease_epoch + 1,
		lease_expires_at = ?2,
		status = 'running',
		started_at = COALESCE(started_at, ?3),
		wait_reason = NULL,
		wake_pending = 0,
		updated_at = ?3
	WHERE id IN (
		SELECT id FROM runs %s
		WHERE status IN ('pending', 'running', 'waiting')
			AND available_at <= ?3
			AND (lease_expires_at IS NULL OR lease_expires_at <= ?3 %s) -- no lease, or expired (or the claimer's own)
			%s
		ORDER BY available_at, id
		LIMIT ?4)
	RETURNING ` + claimCols

// claimCols are runCols without the inputs (NULL in their place): claim
// reads them with selectInputsSQL, a plain read of the column. SQLite
// materializes RETURNING rows before it returns the first, so a large
// input returned there was copied by the subquery, into the row, into
// the materialized table and out of it: several transient copies of the
// run's largest value at every claim of it.
const claimCols = runColsHead + "NULL" + runColsTail

// selectInputsSQL reads the inputs of one run.
const selectInputsSQL = `SELECT inputs FROM run_inputs WHERE run_id = ?1`

var (
	claimAnySQL  = fmt.Sprintf(claimSQL, "INDEXED BY runs_claim", "", "")
	claimRunSQL  = fmt.Sprintf(claimSQL, "", "", "AND id = ?5")
	claimOwnSQL  = fmt.Sprintf(claimSQL, "", "OR lease_owner = ?1", "AND id = ?5")
	claimRootSQL = fmt.Sprintf(claimSQL, "", "", "AND root_run_id = ?5")
)

// RunClaim leases due runs to the owner. A claimed run becomes running, its
// lease epoch increases and its wait reason is cleared. A Limit of 0 or less
// claims one run. The runs come back in (available_at, id) order.
func (s *Store) RunClaim(ctx context.Context, p store.RunClaimParams) ([]store.Run, error) {
	if p.Owner == "" {
		return nil, fmt.Errorf("claiming runs: the claim has no owner")
	}
	var rs []store.Run
	err := s.write(ctx, "claiming runs", func(w *wtx) error {
		var err error
		rs, err = w.claim(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// TransitionCommitClaim claims runs like RunClaim and applies transitions
// like TransitionCommit, in one database transaction (one commit, one
// fsync): a worker's group commit takes its next runs with the transitions
// of the runs it is working on. The claim comes first, so it never takes a
// run that a transition of the batch releases. A Limit below 1 claims
// nothing. If the batch fails, neither the claim nor the transitions apply.
func (s *Store) TransitionCommitClaim(ctx context.Context, ts []store.Transition, p store.RunClaimParams) ([]store.TransitionResult, []store.Run, error) {
	if p.Limit > 0 && p.Owner == "" {
		return nil, nil, fmt.Errorf("committing run transitions: the claim has no owner")
	}
	results := make([]store.TransitionResult, len(ts))
	var rs []store.Run
	err := s.write(ctx, "committing run transitions and claiming runs", func(w *wtx) error {
		if p.Limit > 0 {
			var err error
			if rs, err = w.claim(p); err != nil {
				return err
			}
		}
		for i := range ts {
			res, err := w.transition(&ts[i])
			if err != nil {
				return fmt.Errorf("run %s: %w", ts[i].RunID, err)
			}
			results[i] = res
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return results, rs, nil
}

// claim runs the claim statement of p in w and sorts the claimed runs.
func (w *wtx) claim(p store.RunClaimParams) ([]store.Run, error) {
	limit := max(p.Limit, 1)
	now := p.Now.UnixMicro()
	exp := p.Now.Add(p.LeaseFor).UnixMicro()
	var rs []store.Run
	var err error
	switch {
	case p.RunID != "" && p.Own:
		rs, err = writeAll(w, sqlrow.ScanRun, claimOwnSQL, p.Owner, exp, now, limit, p.RunID)
	case p.RunID != "":
		rs, err = writeAll(w, sqlrow.ScanRun, claimRunSQL, p.Owner, exp, now, limit, p.RunID)
	case p.RootRunID != "":
		rs, err = writeAll(w, sqlrow.ScanRun, claimRootSQL, p.Owner, exp, now, limit, p.RootRunID)
	default:
		rs, err = writeAll(w, sqlrow.ScanRun, claimAnySQL, p.Owner, exp, now, limit)
	}
	if err != nil {
		return nil, err
	}
	for i := range rs {
		err := w.queryRow(selectInputsSQL, rs[i].ID).Scan(sqlrow.JSON(&rs[i].Inputs))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("reading the inputs of run %s: %w", rs[i].ID, err)
		}
	}
	// RETURNING gives rows in no promised order.
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].AvailableAt.Equal(rs[j].AvailableAt) {
			return rs[i].AvailableAt.Before(rs[j].AvailableAt)
		}
		return rs[i].ID < rs[j].ID
	})
	return rs, nil
}

// heartbeatSQL extends all leases of a heartbeat in one statement: the
// (id, epoch) pairs come in as a JSON object. (Postgres: unnest two arrays.)
const heartbeatSQL = `UPDATE runs SET lease_expires_at = ?1
	WHERE lease_owner = ?2
		AND (id, lease_epoch) IN (SELECT key, value FROM json_each(?3))
	RETURNING id, cancel_requested`

// RunHeartbeat extends the leases the owner still holds (same owner and
// epoch, expired or not, as long as nobody claimed the run since) and
// reports the others as lost. Results are sorted by run id.
func (s *Store) RunHeartbeat(ctx context.Context, p store.RunHeartbeatParams) ([]store.Heartbeat, error) {
	if len(p.Leases) == 0 {
		return nil, nil
	}
	leases, err := json.Marshal(p.Leases)
	if err != nil {
		return nil, fmt.Errorf("heartbeat: encoding leases: %w", err)
	}
	held := map[string]bool{}
	err = s.write(ctx, "extending leases", func(w *wtx) error {
		rows, err := w.query(heartbeatSQL, p.Now.Add(p.LeaseFor).UnixMicro(), p.Owner, string(leases))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var cancel bool
			if err := rows.Scan(&id, &cancel); err != nil {
				return err
			}
			held[id] = cancel
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.Heartbeat, 0, len(p.Leases))
	for id := range p.Leases {
		cancel, ok := held[id]
		out = append(out, store.Heartbeat{RunID: id, Lost: !ok, CancelRequested: cancel})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}

// RunLeaseOwners lists the distinct owners of unexpired leases, sorted.
func (s *Store) RunLeaseOwners(ctx context.Context, now time.Time) ([]string, error) {
	owners, err := readAll(ctx, s, func(sc sqlrow.Scanner) (string, error) {
		var o string
		return o, sc.Scan(&o)
	}, `SELECT DISTINCT lease_owner FROM runs
		WHERE lease_owner IS NOT NULL AND lease_expires_at > ?1 ORDER BY lease_owner`, now.UnixMicro())
	return owners, s.fail("listing lease owners", err)
}

// LeaseExpire frees every lease of the given (dead) owners, so their runs
// can be claimed at once. The epoch is kept: the next claim increases it.
func (s *Store) LeaseExpire(ctx context.Context, p store.LeaseExpireParams) (int, error) {
	if len(p.Owners) == 0 {
		return 0, nil
	}
	owners, err := json.Marshal(p.Owners)
	if err != nil {
		return 0, fmt.Errorf("expiring leases: encoding owners: %w", err)
	}
	var n int64
	err = s.write(ctx, "expiring leases", func(w *wtx) error {
		var err error
		n, err = w.execN(`UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, updated_at = ?2
			WHERE lease_owner IN (SELECT value FROM json_each(?1))`, string(owners), p.Now.UnixMicro())
		return err
	})
	return int(n), err
}

// RunNextAvailable returns the earliest time a claim could succeed on a run
// that is not finished or blocked (within a root when rootRunID is set): its
// available_at, or, while another worker's lease runs past it, the lease's
// expiry, so an idle worker does not wake up for runs that are taken.
func (s *Store) RunNextAvailable(ctx context.Context, rootRunID string) (time.Time, bool, error) {
	const next = `SELECT MIN(CASE WHEN lease_owner IS NOT NULL AND lease_expires_at > available_at
			THEN lease_expires_at ELSE available_at END)
		FROM runs WHERE status IN ('pending', 'running', 'waiting')`
	var at time.Time
	var err error
	if rootRunID == "" {
		err = s.queryRow(ctx, next).Scan(sqlrow.Time(&at))
	} else {
		err = s.queryRow(ctx, next+` AND root_run_id = ?1`, rootRunID).Scan(sqlrow.Time(&at))
	}
	if err != nil {
		return time.Time{}, false, s.fail("finding the next due run", err)
	}
	return at, !at.IsZero(), nil
}

// runQueueSQL counts the runs a claim at ?1 could take, on the claim
// index (the claim's own conditions), and when the first of them became
// claimable: its available_at, or the expiry of the lease a gone worker
// left on it when that is later. (Postgres: $1; the same query.)
const runQueueSQL = `SELECT COUNT(*), MIN(MAX(available_at, COALESCE(lease_expires_at, 0))) FROM runs INDEXED BY runs_claim
	WHERE status IN ('pending', 'running', 'waiting')
		AND available_at <= ?1
		AND (lease_expires_at IS NULL OR lease_expires_at <= ?1)`

// RunQueue counts the runs due and not leased at now.
func (s *Store) RunQueue(ctx context.Context, now time.Time) (store.QueueStats, error) {
	var q store.QueueStats
	if err := s.queryRow(ctx, runQueueSQL, now.UnixMicro()).Scan(&q.Due, sqlrow.Time(&q.Oldest)); err != nil {
		return store.QueueStats{}, s.fail("counting the due runs", err)
	}
	return q, nil
}
