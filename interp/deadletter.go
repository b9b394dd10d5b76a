package interp

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
)

// deadLetter sets a failed foreach item aside (semantics.md §5): the item,
// its index and error are stored as a dead letter, the dead_lettered event
// and alert are recorded, all in the transition that settles the item.
func (r *runner) deadLetter(step, key string, index int, item any, errJSON []byte) {
	r.tx.t.DeadLetters = append(r.tx.t.DeadLetters, store.DeadLetterWrite{Step: step, StepKey: key, Index: index,
		Item: mustJSON(item), Error: errJSON})
	r.tx.event("dead_lettered", key, map[string]any{"index": index, "item": item, "error": decodeJSON(errJSON)})
	msg, _ := decodeMap(errJSON)["message"].(string)
	r.alert("dead_lettered", key, fmt.Sprintf("item %d of step %s was dead-lettered: %s", index, step, msg))
}

// DeadLetterList lists the open dead letters (all, with closed ones, when
// all is set), oldest first.
func (e *Engine) DeadLetterList(ctx context.Context, all bool) ([]store.DeadLetter, error) {
	ds, err := e.st.DeadLetterList(ctx, store.DeadLetterListParams{All: all})
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	return ds, nil
}

// DeadLetterDrop closes an open dead letter without executing it, and
// records dead_letter_dropped in its run. An unknown id wraps
// store.ErrNotFound, a closed letter store.ErrConflict.
func (e *Engine) DeadLetterDrop(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := e.openLetter(ctx, id)
	if err != nil {
		return d, err
	}
	d, err = e.st.DeadLetterUpdate(ctx, store.DeadLetterUpdateParams{ID: id, Status: store.DeadLetterDropped, Now: e.clk.Now(),
		Events: []store.EventWrite{{Kind: "dead_letter_dropped", StepKey: d.StepKey, Data: mustJSON(map[string]any{"dead_letter": id})}}})
	if err != nil {
		return d, fmt.Errorf("drop dead letter %d: %w", id, err)
	}
	return d, nil
}

// ErrRetryFailed is wrapped by DeadLetterRetry when the item failed again;
// the letter stays open with the new error.
var ErrRetryFailed = errors.New("the letter stays open")

// DeadLetterRetry executes a dead-lettered item once more, on its run's
// bound graph, with the recorded item, the run's inputs and upstream
// outputs, and the same idempotency key (semantics.md §16). On success the
// letter is closed and dead_letter_retried, with the output, is recorded
// in its run; the run's status and outputs do not change. On failure the
// letter stays open with the new error, dead_letter_retry_failed is
// recorded, and the error wraps ErrRetryFailed. Only exec and http items
// can be retried (the other actions have no side effect to repeat).
func (e *Engine) DeadLetterRetry(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := e.openLetter(ctx, id)
	if err != nil {
		return d, err
	}
	run, err := e.st.RunGet(ctx, d.RunID)
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: load run %s: %w", id, d.RunID, err)
	}
	r, err := e.viewRunner(ctx, run)
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	s := r.l.steps[d.Step]
	if s == nil {
		return d, fmt.Errorf("retry dead letter %d: the run's workflow has no step %q", id, d.Step)
	}
	if s.Action.Kind != lang.KindExec && s.Action.Kind != lang.KindHTTP {
		return d, fmt.Errorf("retry dead letter %d: step %q has a %s action; only exec and http items can be retried: %w", id, d.Step, s.Action.Kind, store.ErrConflict)
	}
	atts, err := e.st.AttemptList(ctx, run.ID, d.StepKey)
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	for _, a := range atts {
		r.lastAtt[d.StepKey] = max(r.lastAtt[d.StepKey], a.Attempt)
	}
	r.now = e.clk.Now()
	u := unit{s: s, key: d.StepKey, idx: d.Index, iter: -1, item: decodeJSON(d.Item)}
	f, se := r.prepare(ctx, u)
	if se == nil {
		f.attempt = r.lastAtt[d.StepKey] + 1
		res := f.do(e)
		se = res.err
		if se == nil {
			out := r.red.value(normalizeJSON(res.out))
			d, err = e.st.DeadLetterUpdate(ctx, store.DeadLetterUpdateParams{ID: id, Status: store.DeadLetterRetried,
				Output: mustJSON(out), Now: e.clk.Now(), Events: []store.EventWrite{{Kind: "dead_letter_retried", StepKey: d.StepKey,
					Data: mustJSON(map[string]any{"dead_letter": id, "attempt": f.attempt, "output": out})}}})
			if err != nil {
				return d, fmt.Errorf("retry dead letter %d: %w", id, err)
			}
			return d, nil
		}
	}
	se.Message = r.red.text(se.Message)
	se.Output = nil
	errJSON := mustJSON(se)
	d, err = e.st.DeadLetterUpdate(ctx, store.DeadLetterUpdateParams{ID: id, Status: store.DeadLetterOpen, Error: errJSON,
		Now: e.clk.Now(), Events: []store.EventWrite{{Kind: "dead_letter_retry_failed", StepKey: d.StepKey,
			Data: mustJSON(map[string]any{"dead_letter": id, "error": se})}}})
	if err != nil {
		return d, fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	return d, fmt.Errorf("dead letter %d (%s) failed again: %s; %w", id, d.StepKey, se.Message, ErrRetryFailed)
}

// openLetter returns an open dead letter, or an error wrapping
// store.ErrNotFound or store.ErrConflict that says what to do.
func (e *Engine) openLetter(ctx context.Context, id int64) (store.DeadLetter, error) {
	d, err := e.st.DeadLetterGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return d, fmt.Errorf("no dead letter has id %d; list them with flowrun dlq list: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("dead letter %d: %w", id, err)
	}
	if d.Status != store.DeadLetterOpen {
		return d, fmt.Errorf("dead letter %d is already %s; only an open one can be retried or dropped: %w", id, d.Status, store.ErrConflict)
	}
	return d, nil
}
