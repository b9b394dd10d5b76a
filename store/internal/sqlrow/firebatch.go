package sqlrow

import (
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
)

// FireTx is what FireBatch needs of a backend's write transaction: its
// savepoint statements (whose SQL differs by dialect), one fire's writes,
// and the backend's reading of errors.
type FireTx interface {
	// Savepoint starts a savepoint for one fire.
	Savepoint() error
	// RollbackTo undoes what the fire wrote since Savepoint, and drops
	// whatever the backend queued for the commit (events, notifications)
	// in that time.
	RollbackTo() error
	// Release ends the savepoint.
	Release() error
	// Fire does one fire's writes; store.ErrAlreadyFired when the slot is
	// recorded already.
	Fire(p store.ScheduleFireParams) (store.ScheduleFireResult, error)
	// Aborts reports whether err ended the whole transaction (a deadlock
	// or serialization failure), so that FireBatch returns it for the
	// transaction to be run again rather than blaming the fire.
	Aborts(err error) bool
	// Fail wraps a fire's error with op as the backend words its errors.
	Fail(op string, err error) error
}

// FireBatch fires ps in one transaction, in store.FireOrder, each fire in
// a savepoint of its own: a fire that fails is rolled back alone and
// reported in its outcome, and the later slots of its schedule are not
// tried (store.ErrNotTried), except after store.ErrAlreadyFired. The
// returned error is the transaction's, and nothing of the batch is then
// kept. It is called inside the backend's write transaction, again from
// the start when the backend runs the transaction again.
func FireBatch(tx FireTx, ps []store.ScheduleFireParams) ([]store.ScheduleFireOutcome, error) {
	out := make([]store.ScheduleFireOutcome, len(ps))
	failed := map[[2]string]bool{} // schedules with a failed fire
	for _, i := range store.FireOrder(ps) {
		p := ps[i]
		sk := [2]string{p.Workflow, p.Name}
		if failed[sk] {
			out[i].Err = fmt.Errorf("firing schedule %s/%s: %w", p.Workflow, p.Name, store.ErrNotTried)
			continue
		}
		if err := p.Check(); err != nil {
			out[i].Err = fmt.Errorf("firing schedule %s/%s: %w", p.Workflow, p.Name, err)
			failed[sk] = true
			continue
		}
		if err := tx.Savepoint(); err != nil {
			return nil, fmt.Errorf("savepoint: %w", err)
		}
		res, err := tx.Fire(p)
		if err != nil {
			if tx.Aborts(err) {
				return nil, err
			}
			if rerr := tx.RollbackTo(); rerr != nil {
				return nil, fmt.Errorf("rolling back a failed fire (%v): %w", err, rerr)
			}
			out[i].Err = tx.Fail(FireOp(p), err)
			if !errors.Is(err, store.ErrAlreadyFired) {
				failed[sk] = true
			}
		} else {
			out[i].Result = res
		}
		if err := tx.Release(); err != nil {
			return nil, fmt.Errorf("releasing a savepoint: %w", err)
		}
	}
	return out, nil
}

// FireOp names a fire in errors.
func FireOp(p store.ScheduleFireParams) string {
	return fmt.Sprintf("firing schedule %s/%s at %s", p.Workflow, p.Name, p.Slot.UTC().Format("2006-01-02T15:04:05.999999Z"))
}
