package interp

import (
	"context"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/store"
)

// acquireSlot takes the run's slot of its workflow's concurrency key
// (semantics.md §10) when it is claimed, through the store, so the limit
// holds across processes. A run keeps its slot until it ends; the store
// frees it in the run's final commit (or RunCancel), and slots of finished
// runs never count, so a holder whose process died holds its slot only
// while its run lives on (another worker resumes it after the dead owner's
// lease is reclaimed). Keys are per workflow †.
//
// When no slot is free: queue parks the run (waiting, wait reason queue)
// until a holder ends and the store makes it due (the first queued, in
// creation order), or a lease period passes and it asks again; skip ends it
// canceled and fail ends it failed, both with kind concurrency. stop is
// true when the run was parked or ended here (and committed).
func (r *runner) acquireSlot(ctx context.Context) (stop bool, err error) {
	c := r.l.g.Concurrency
	if c == nil || c.Key == nil {
		return false, nil
	}
	r.now = r.e.clk.Now()
	key, ok := r.sched.concurrencyKey(ctx)
	if !ok {
		return true, r.flush(ctx)
	}
	sl, err := r.e.st.SlotAcquire(ctx, store.SlotAcquireParams{Workflow: r.run.Workflow, Key: key, Limit: c.Limit,
		RunID: r.run.ID, RunCreatedAt: r.run.CreatedAt, Now: r.now})
	if err != nil {
		return true, fmt.Errorf("run %s: %w", r.run.ID, err)
	}
	if sl.Held {
		return false, nil
	}
	r.sched.slotRefused(key, sl)
	return true, r.flush(ctx)
}

// concurrencyKey evaluates the run's concurrency key; when it cannot, it
// fails the run (kind concurrency) and reports false.
func (sc *scheduler) concurrencyKey(ctx context.Context) (string, bool) {
	v, err := sc.l.prog.Eval(ctx, sc.l.g.Concurrency.Key, &expr.Activation{Input: sc.inputs, InputFunc: sc.input, Run: sc.info, Cache: sc.conv})
	if err != nil {
		sc.failRun(&stepError{Kind: "concurrency", Message: fmt.Sprintf("the concurrency key could not be evaluated: %v", err)}, "")
		return "", false
	}
	return keyString(v), true
}

// slotRefused decides, at the pass's instant, what a run whose
// concurrency key's slots were all held (sl) does under on_conflict: skip
// ends it canceled, fail ends it failed, queue parks it until a lease
// period passes (the store makes it due sooner when a holder ends).
func (sc *scheduler) slotRefused(key string, sl store.Slot) {
	c := sc.l.g.Concurrency
	msg := fmt.Sprintf("concurrency key %q is held by %d of %d runs", key, sl.Holders, c.Limit)
	switch c.OnConflict {
	case "skip":
		sc.endSkipped(&stepError{Kind: "concurrency", Message: msg + "; on_conflict = \"skip\" skipped this run"})
		// A slot of a schedule that started this run is recorded skipped
		// too (the reason names no key: a key may hold a secret's value).
		sc.tx.t.FireSkipped = fmt.Sprintf("concurrency: the key was held by %d of %d runs", sl.Holders, c.Limit)
	case "fail":
		sc.failRun(&stepError{Kind: "concurrency", Message: msg + "; on_conflict = \"fail\" failed this run"}, "")
	default:
		u := sc.tx.runUpdate()
		u.Status = ptr(store.RunWaiting)
		u.AvailableAt = ptr(sc.now.Add(max(sc.out.leaseFor(), time.Second)))
		u.WaitReason = ptr("queue")
		u.Release = true
		if sl.Queued {
			sc.tx.event("run_queued", "", map[string]any{"key": key, "holders": sl.Holders, "limit": c.Limit})
		}
		sc.ended = true
	}
}

// endSkipped ends a run canceled without running it further (on_conflict
// = "skip").
func (sc *scheduler) endSkipped(se *stepError) {
	sc.stopAll(store.AttemptCanceled, store.StepCanceled)
	re := runError{Kind: se.Kind, Message: se.Message, Type: problemType(se.Kind)}
	u := sc.tx.runUpdate()
	u.Status = ptr(store.RunCanceled)
	u.Error = mustJSON(re)
	sc.endRun(u)
	sc.tx.event("run_canceled", "", re)
}

// claimBatch is how many slots of a busy worker must be free before it
// claims again (a quarter of them, at least one): claims are write commits,
// and taking several runs per claim is what lets a worker's throughput grow
// with its concurrency.
func claimBatch(slots int) int { return max(slots/2, 1) }
