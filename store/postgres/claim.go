package postgres

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// claimSQL leases due runs in one statement. The inner SELECT walks the
// partial index runs_claim in (available_at, id) order and locks the rows it
// picks FOR UPDATE SKIP LOCKED: a row another worker's claim is locking is
// skipped rather than waited for, so concurrent claimers take disjoint runs
// without blocking each other. At READ COMMITTED Postgres rechecks the
// WHERE of a locked row against its newest version, so a run another claim
// has just leased is not taken again. (SQLite: the same UPDATE with a
// plain sub-select, made atomic by BEGIN IMMEDIATE.) UPDATE ... FROM needs
// qualified names in SET and RETURNING (the sub-select has an id too).
// %[1]s is the instant the lease test measures from (leaseNow); %[2]s an
// optional widening of the lease test to the claimer's own leases
// (RunClaimParams.Own) and %[3]s an optional restriction to one run or one
// root.
const claimSQL = `UPDATE runs SET
		lease_owner = $1,
		lease_epoch = runs.lease_epoch + 1,
		lease_expires_at = %[1]s + $2,
		status = 'running',
		started_at = COALESCE(runs.started_at, $3),
		wait_reason = NULL,
		wake_pending = false,
		updated_at = $3
	FROM (
		SELECT id FROM runs
		WHERE status IN ('pending', 'running', 'waiting')
			AND available_at <= $3
			AND (lease_owner IS NULL OR lease_expires_at <= %[1]s %[2]s)
			%[3]s
		ORDER BY available_at, id
		LIMIT $4
		FOR UPDATE SKIP LOCKED) due
	WHERE runs.id = due.id
	RETURNING `

// claimStmts are claimSQL's four forms, built on the first claim rather
// than when any flowrun process starts.
type claimStmts struct{ any, run, own, root string }

var (
	claimOnce sync.Once
	claims    claimStmts
)

func claimStatements() *claimStmts {
	claimOnce.Do(func() {
		// The instant a claim measures leases from: $5 says whether it is
		// the caller's now ($3) or the database's clock.
		now := leaseNow(5, 3)
		cols := qualified("runs", runCols)
		claims = claimStmts{
			any:  fmt.Sprintf(claimSQL, now, "", "") + cols,
			run:  fmt.Sprintf(claimSQL, now, "", "AND id = $6") + cols,
			own:  fmt.Sprintf(claimSQL, now, "OR lease_owner = $1", "AND id = $6") + cols,
			root: fmt.Sprintf(claimSQL, now, "", "AND root_run_id = $6") + cols,
		}
	})
	return &claims
}

// RunClaim leases due runs to the owner. A claimed run becomes running, its
// lease epoch increases and its wait reason is cleared. A Limit of 0 or less
// claims one run. The runs come back in (available_at, id) order.
func (s *Store) RunClaim(ctx context.Context, p store.RunClaimParams) ([]store.Run, error) {
	if p.Owner == "" {
		return nil, fmt.Errorf("claiming runs: the claim has no owner")
	}
	// One statement is its own transaction: no BEGIN/COMMIT round trips.
	rs, err := claim(ctx, s.pool, s.opts.CallerClock, p)
	if err != nil {
		return nil, s.fail("claiming runs", err)
	}
	return rs, nil
}

// TransitionCommitClaim claims runs like RunClaim and applies transitions
// like TransitionCommit, in one database transaction: a worker's group
// commit takes its next runs with the transitions of the runs it is working
// on. The claim comes first, so it never takes a run that a transition of
// the batch releases. A Limit below 1 claims nothing. If the batch fails,
// neither the claim nor the transitions apply. (SQLite: the same, in one
// BEGIN IMMEDIATE transaction.)
func (s *Store) TransitionCommitClaim(ctx context.Context, ts []store.Transition, p store.RunClaimParams) ([]store.TransitionResult, []store.Run, error) {
	if p.Limit > 0 && p.Owner == "" {
		return nil, nil, fmt.Errorf("committing run transitions: the claim has no owner")
	}
	var results []store.TransitionResult
	var rs []store.Run
	err := s.write(ctx, "committing run transitions and claiming runs", func(w *wtx) error {
		if p.Limit > 0 {
			var err error
			if rs, err = claim(w.ctx, w.tx, w.callerClock, p); err != nil {
				return err
			}
		}
		results = make([]store.TransitionResult, len(ts))
		for i := range ts {
			if err := w.transition(&ts[i], &results[i]); err != nil {
				return fmt.Errorf("run %s: %w", ts[i].RunID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return results, rs, nil
}

// claim runs the claim statement of p on q and sorts the claimed runs.
func claim(ctx context.Context, q querier, callerClock bool, p store.RunClaimParams) ([]store.Run, error) {
	limit := int64(max(p.Limit, 1))
	now := p.Now.UnixMicro()
	lease := p.LeaseFor.Microseconds()
	var rs []store.Run
	var err error
	switch {
	case p.RunID != "" && p.Own:
		rs, err = all(ctx, q, sqlrow.ScanRun, claimStatements().own, p.Owner, lease, now, limit, callerClock, p.RunID)
	case p.RunID != "":
		rs, err = all(ctx, q, sqlrow.ScanRun, claimStatements().run, p.Owner, lease, now, limit, callerClock, p.RunID)
	case p.RootRunID != "":
		rs, err = all(ctx, q, sqlrow.ScanRun, claimStatements().root, p.Owner, lease, now, limit, callerClock, p.RootRunID)
	default:
		rs, err = all(ctx, q, sqlrow.ScanRun, claimStatements().any, p.Owner, lease, now, limit, callerClock)
	}
	if err != nil {
		return nil, err
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

// heartbeatSQL extends every lease of the owner in one statement: the
// (id, epoch) pairs come in as two arrays, unnested side by side. (SQLite:
// one JSON object read with json_each.)
const heartbeatSQL = `UPDATE runs SET lease_expires_at = ` + leaseNow56 + ` + $1
	FROM unnest($3::text[], $4::bigint[]) AS held (id, epoch)
	WHERE runs.id = held.id AND runs.lease_epoch = held.epoch AND runs.lease_owner = $2
	RETURNING runs.id, runs.cancel_requested`

// RunHeartbeat extends the leases the owner still holds (same owner and
// epoch, expired or not, as long as nobody claimed the run since) and
// reports the others as lost. Results are sorted by run id.
func (s *Store) RunHeartbeat(ctx context.Context, p store.RunHeartbeatParams) ([]store.Heartbeat, error) {
	if len(p.Leases) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(p.Leases))
	for id := range p.Leases {
		ids = append(ids, id)
	}
	// Sorted, so two heartbeats of one owner lock rows in the same order.
	sort.Strings(ids)
	epochs := make([]int64, len(ids))
	for i, id := range ids {
		epochs[i] = p.Leases[id]
	}
	type held struct {
		id     string
		cancel bool
	}
	var got []held
	// The UPDATE waits for the row locks of transitions of the same runs;
	// a deadlock with one of them is retried.
	err := s.retry(ctx, "extending leases", func() error {
		var err error
		got, err = all(ctx, s.pool, func(sc sqlrow.Scanner) (held, error) {
			var h held
			return h, sc.Scan(&h.id, &h.cancel)
		}, heartbeatSQL, p.LeaseFor.Microseconds(), p.Owner, ids, epochs, s.opts.CallerClock, p.Now.UnixMicro())
		return err
	})
	if err != nil {
		return nil, err
	}
	cancel := map[string]bool{}
	for _, h := range got {
		cancel[h.id] = h.cancel
	}
	out := make([]store.Heartbeat, 0, len(ids))
	for _, id := range ids {
		c, ok := cancel[id]
		out = append(out, store.Heartbeat{RunID: id, Lost: !ok, CancelRequested: c})
	}
	return out, nil
}

// RunLeaseOwners lists the distinct owners of unexpired leases, sorted.
func (s *Store) RunLeaseOwners(ctx context.Context, now time.Time) ([]string, error) {
	owners, err := all(ctx, s.pool, func(sc sqlrow.Scanner) (string, error) {
		var o string
		return o, sc.Scan(&o)
	}, `SELECT DISTINCT lease_owner FROM runs
		WHERE lease_owner IS NOT NULL AND lease_expires_at > `+leaseNow(2, 1)+` ORDER BY lease_owner`, now.UnixMicro(), s.opts.CallerClock)
	return owners, s.fail("listing lease owners", err)
}

// LeaseExpire frees every lease of the given (dead) owners, so their runs
// can be claimed at once, and wakes idle workers when it freed any. The
// epoch is kept: the next claim increases it.
func (s *Store) LeaseExpire(ctx context.Context, p store.LeaseExpireParams) (int, error) {
	if len(p.Owners) == 0 {
		return 0, nil
	}
	var n int64
	err := s.write(ctx, "expiring leases", func(w *wtx) error {
		// (SQLite: IN (SELECT value FROM json_each(?1)); here an array.)
		tag, err := w.tx.Exec(w.ctx, `UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, updated_at = $2
			WHERE lease_owner = ANY($1::text[])`, p.Owners, p.Now.UnixMicro())
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		w.notify = n > 0
		return nil
	})
	return int(n), err
}

// RunNextAvailable returns the earliest time a claim could succeed on a run
// that is not finished or blocked (within a root when rootRunID is set): its
// available_at, or, while another worker's lease runs past it, the lease's
// expiry, so an idle worker does not wake up for runs that are taken.
// The expiry is the database's time (leaseclock.go): a caller whose clock
// disagrees wakes at the wrong moment for a run another worker holds, which
// costs nothing but a wake, since a worker also claims every poll interval
// whatever this says.
func (s *Store) RunNextAvailable(ctx context.Context, rootRunID string) (time.Time, bool, error) {
	const next = `SELECT MIN(CASE WHEN lease_owner IS NOT NULL AND lease_expires_at > available_at
			THEN lease_expires_at ELSE available_at END)
		FROM runs WHERE status IN ('pending', 'running', 'waiting')`
	var at time.Time
	var err error
	if rootRunID == "" {
		err = s.pool.QueryRow(ctx, next).Scan(sqlrow.Time(&at))
	} else {
		err = s.pool.QueryRow(ctx, next+` AND root_run_id = $1`, rootRunID).Scan(sqlrow.Time(&at))
	}
	if err != nil {
		return time.Time{}, false, s.fail("finding the next due run", err)
	}
	return at, !at.IsZero(), nil
}

// runQueueSQL counts the runs a claim at $1 could take, with the claim's
// own conditions (the partial index runs_claim). (SQLite: INDEXED BY
// pins that index.)
const runQueueSQL = `SELECT COUNT(*), MIN(GREATEST(available_at, lease_expires_at)) FROM runs
	WHERE status IN ('pending', 'running', 'waiting')
		AND available_at <= $1
		AND (lease_owner IS NULL OR lease_expires_at <= ` + leaseNow21 + `)`

// RunQueue counts the runs due and not leased at now.
func (s *Store) RunQueue(ctx context.Context, now time.Time) (store.QueueStats, error) {
	var q store.QueueStats
	if err := s.pool.QueryRow(ctx, runQueueSQL, now.UnixMicro(), s.opts.CallerClock).Scan(&q.Due, sqlrow.Time(&q.Oldest)); err != nil {
		return store.QueueStats{}, s.fail("counting the due runs", err)
	}
	return q, nil
}
