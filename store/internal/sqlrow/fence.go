package sqlrow

import (
	"fmt"

	"github.com/flowrun/flowrun/store"
)

// FenceError says why the fence of a transition matched no row of an
// existing run: its Expect does not hold (ErrConflict), or its lease is
// lost (ErrLeaseLost).
func FenceError(t *store.Transition, status, version, hash string) error {
	if x := t.Expect; x != nil && (string(x.Status) != status || x.Version != version || x.GraphHash != hash) {
		return fmt.Errorf("run %s is %s on version %s, not %s on version %s as expected: %w",
			t.RunID, status, version, x.Status, x.Version, store.ErrConflict)
	}
	return fmt.Errorf("run %s is held by another lease than %s@%d: %w", t.RunID, t.Lease.Owner, t.Lease.Epoch, store.ErrLeaseLost)
}

// FenceArgs are the parameters of each backend's fence statement (the
// UPDATE that applies a transition's run update only while its lease and
// expectation hold), in the order both backends number them.
func FenceArgs(t *store.Transition, now int64) []any {
	args := []any{t.RunID, t.Lease.Owner, t.Lease.Epoch, now,
		nil, nil, nil, nil, nil, nil, false, nil, false, nil, nil, false, false, nil, false, nil, nil, nil, nil, nil}
	if x := t.Expect; x != nil {
		args[20], args[21], args[22] = string(x.Status), x.Version, x.GraphHash
	}
	u := t.Run
	if u == nil {
		return args
	}
	if u.Status != nil {
		args[4] = string(*u.Status)
	}
	if u.Version != nil {
		args[5] = *u.Version
	}
	if u.GraphHash != nil {
		args[6] = *u.GraphHash
	}
	args[7] = JSONArg(u.Outputs)
	args[8] = JSONArg(u.Error)
	if u.Error != nil {
		args[23] = ErrorText(u.Error)
	}
	if u.AvailableAt != nil {
		at := *u.AvailableAt
		if at.IsZero() {
			at = t.Now
		}
		args[9] = at.UnixMicro()
	}
	if u.FinishedAt != nil {
		args[10], args[11] = true, TimeArg(*u.FinishedAt)
	}
	if u.DeadlineAt != nil {
		args[12], args[13] = true, TimeArg(*u.DeadlineAt)
	}
	if u.AttemptsUsed != nil {
		args[14] = *u.AttemptsUsed
	}
	if u.Attempt != nil {
		args[19] = *u.Attempt
	}
	if u.WaitReason != nil {
		args[15], args[17] = true, TextArg(*u.WaitReason)
	}
	args[16] = u.ClearCancel
	args[18] = u.Release
	return args
}
