package interp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// foreach steps: the scheduler records a foreach's items once, runs them
// as units up to its concurrency, and folds the items that ended (feCursor).

// advanceForeach drives a foreach step: the items are evaluated once and
// recorded; items run as units (or until loops) name[i], at most
// Foreach.Concurrency at once; the step completes with the list of item
// outputs once every item ended.
func (sc *scheduler) advanceForeach(ctx context.Context, s *graph.Step) bool {
	base := unit{s: s, key: s.Name, idx: -1, iter: -1}
	row := sc.rows[s.Name]
	if row == nil || row.Status == store.StepPending {
		st, n, err := sc.evalItems(ctx, s)
		if err != nil {
			sc.unitFailed(base, &stepError{Kind: "expression", Message: fmt.Sprintf("evaluate foreach items: %v", err)}, false)
			return true
		}
		// Every item takes at least one of the run's attempts
		// (limits.attempts): items known to need more than are left fail
		// the step before its first item, instead of after running as
		// many as the budget allows.
		if lim := sc.l.g.Limits.Attempts; lim > 0 && sc.usedAtts+n > lim {
			left := max(lim-sc.usedAtts, 0)
			sc.unitFailed(base, &stepError{Kind: "attempt_cap", Message: fmt.Sprintf(
				"foreach over %d items needs at least %d attempts, and the run has %d of its limits.attempts (%d) left; raise limits.attempts to at least %d, or give it fewer items",
				n, n, left, lim, sc.usedAtts+n)}, false)
			return true
		}
		row = sc.row(base)
		row.Status, row.StartedAt = store.StepRunning, sc.now
		if n == 0 {
			row.Status, row.Output, row.FinishedAt = store.StepCompleted, json.RawMessage("[]"), sc.now
			sc.put(row, nil)
			sc.tx.event("step_completed", s.Name, map[string]any{"items": 0})
			return true
		}
		sc.put(row, st)
		st.Items = nil // the row's State holds them: itemsOf reads them there
		sc.tx.event("step_started", s.Name, map[string]any{"items": n})
	}
	c, err := sc.cursor(s)
	if err != nil {
		sc.unitFailed(base, &stepError{Kind: "internal", Message: fmt.Sprintf("reading the recorded foreach items: %v", err)}, false)
		return true
	}
	items := c.items
	conc := max(s.Foreach.Concurrency, 1)
	active := 0
	for i := c.done; i < c.next; i++ {
		if ir := sc.rows[store.StepKey(s.Name, i, -1)]; ir != nil && ir.Status != store.StepPending && !ir.Status.Terminal() {
			active++
		}
	}
	changed, allDone := false, true
	for i := c.done; i < items.len(); i++ {
		if changed && len(sc.tx.t.Steps) >= maxTxSteps {
			sc.fold(s, c)
			return true // the next decide goes on with the items left
		}
		key := store.StepKey(s.Name, i, -1)
		ir := sc.rows[key]
		if ir == nil || !ir.Status.Terminal() {
			was := ir != nil && ir.Status != store.StepPending
			if !was && active >= conc {
				allDone = false
				if i >= c.next {
					break // no item after it has begun either
				}
				continue
			}
			if sc.advanceNode(ctx, unit{s: s, key: key, idx: i, iter: -1, item: items.at(i)}) {
				changed = true
			}
			ir = sc.rows[key]
			if ir == nil {
				// It could not begin (a drain, the run's parallel limit, the
				// attempt cap): no item after it begins now either.
				allDone = false
				break
			}
			if i >= c.next {
				c.next = i + 1
			}
			is := ir.Status != store.StepPending && !ir.Status.Terminal()
			if was && !is {
				active--
			} else if !was && is {
				active++
			}
			if !ir.Status.Terminal() {
				allDone = false
				continue
			}
		}
		if sc.noted[key] {
			continue
		}
		sc.noted[key] = true
		if ir.Status != store.StepFailed {
			continue
		}
		switch s.Foreach.OnFailure {
		case "continue":
		case "dead_letter":
			sc.deadLetter(s.Name, key, i, items.at(i), ir.Error)
		default:
			ie := &stepError{}
			_ = json.Unmarshal(ir.Error, ie)
			ie.Message = fmt.Sprintf("item %d failed: %s", i, ie.Message)
			sc.cancelStepKeys(s.Name)
			// The step's attempts are those of all its items (language.md
			// §11): the folded ones and those begun since, this one too.
			row := sc.row(base)
			row.Attempts = c.attempts
			for j := c.done; j < c.next; j++ {
				if jr := sc.rows[store.StepKey(s.Name, j, -1)]; jr != nil {
					row.Attempts += jr.Attempts
				}
			}
			sc.put(row, nil)
			sc.unitFailed(base, ie, false)
			delete(sc.fe, s.Name)
			return true
		}
	}
	sc.fold(s, c)
	if !allDone || sc.ended || c.done < items.len() {
		return changed
	}
	row = sc.row(base)
	row.Attempts = c.attempts
	out := store.ItemOutputs
	if c.read {
		addOut(c, "]")
		out = json.RawMessage(c.out)
	}
	row.Status, row.Output, row.FinishedAt = store.StepCompleted, out, sc.now
	delete(sc.fe, s.Name)
	sc.put(row, nil)
	sc.tx.event("step_completed", s.Name, map[string]any{"items": items.len()})
	return true
}

// feCursor is the runner's place in a foreach step's items, so that a
// decision costs the items in flight, not the items done (memory and time
// of a long foreach do not grow with the items that ended). It is not
// stored: a runner makes it again from the rows it loaded.
//
// Items begin in index order, so the items that never began are a suffix
// [next, n) without rows. The items [0, done) ended, were handled (a
// failure noted, a dead letter queued) and are folded: their outputs are
// in out and their attempts in attempts, and their rows were dropped from
// the runner's maps (they stay in the store).
//
// Only a foreach whose output an expression of the run reads (read) builds
// its output as it folds: the step needs it as a value once it ends.
// Otherwise the item rows are the output: the step's row is written with
// store.ItemOutputs and the store assembles the list when the row is read
// (show, a later rebuild), so the foreach holds nothing that grows with
// the items done.
type feCursor struct {
	items      *feItems
	done, next int
	attempts   int
	read       bool
	out        []byte // read: "[" and the folded items' outputs, comma-separated (see grow)
}

// cursor returns the cursor of foreach step s, making it from the items
// its row recorded and the rows the runner holds the first time.
func (sc *scheduler) cursor(s *graph.Step) (*feCursor, error) {
	if c := sc.fe[s.Name]; c != nil {
		return c, nil
	}
	items, err := itemsOf(sc.rows[s.Name].State, sc.run.Inputs)
	if err != nil {
		return nil, err
	}
	c := &feCursor{items: items, next: items.len(), read: sc.readAtAll(s.Name)}
	for c.next > 0 && sc.rows[store.StepKey(s.Name, c.next-1, -1)] == nil {
		c.next--
	}
	if c.read {
		addOut(c, "[")
	}
	if sc.fe == nil {
		sc.fe = map[string]*feCursor{}
	}
	sc.fe[s.Name] = c
	return c, nil
}

// evalItems evaluates the items of foreach step s once, redacted, and
// returns the State that records them and their number. Items that are
// exactly a run input's list holding no secret are recorded as the
// input's name: the run's stored inputs hold them already, and the list is
// never decoded whole (a decoded million-item list takes tens of bytes an
// item, and the inputs do not change). Any other items are recorded as
// their JSON.
func (sc *scheduler) evalItems(ctx context.Context, s *graph.Step) (*rowState, int, error) {
	if name, ok := inputRef(s.Foreach.Items.CEL); ok {
		if raw, ok := jsonField(sc.run.Inputs, name); ok && !sc.red.holdsBytes(raw) {
			if it, err := indexItems(raw); err == nil {
				return &rowState{ItemsInput: name}, it.len(), nil
			}
		}
	}
	v, err := sc.l.prog.Eval(ctx, s.Foreach.Items, sc.act(nil))
	if err != nil {
		return nil, 0, err
	}
	// Items are stored (and seen by the item's action) redacted.
	c := sc.red.clean(v)
	items, ok := c.([]any)
	if !ok && c == nil {
		if n := sc.skippedRead(s.Foreach.Items.CEL); n != "" {
			return nil, 0, &expr.SkippedReadError{Step: n}
		}
	}
	if !ok {
		return nil, 0, fmt.Errorf("items gave %s, not a list", describe(c))
	}
	return &rowState{Items: recordedItems(mustJSON(items))}, len(items), nil
}

// grow makes room in the step's output for k more bytes. The output is
// the one part of a foreach's memory that grows with its items. Grown by
// doubling alone, it would end holding up to twice its length; here it
// grows to the length that the items folded so far project for all of
// them and a sixteenth more, yet by no more than doubling (a projection
// from a few large first outputs may be far too high) and by at least a
// quarter: it ends about as long as the output.
func (c *feCursor) grow(k int) {
	need := len(c.out) + k
	if need <= cap(c.out) {
		return
	}
	want := need
	if c.done > 0 {
		want += len(c.out) / c.done * (c.items.len() - c.done)
	}
	want += want / 16
	want = min(want, 2*cap(c.out))
	want = max(want, need, cap(c.out)+cap(c.out)/4, 64)
	out := make([]byte, len(c.out), want)
	copy(out, c.out)
	c.out = out
}

// addOut appends b to the cursor's output.
func addOut[T ~string | ~[]byte](c *feCursor, b T) {
	c.grow(len(b))
	c.out = append(c.out, b...)
}

// fold moves the cursor's done past the leading items that ended and
// were handled, appending their outputs (null for an item that did not
// complete) and dropping their rows from the runner's maps.
func (sc *scheduler) fold(s *graph.Step, c *feCursor) {
	for c.done < c.next {
		key := store.StepKey(s.Name, c.done, -1)
		ir := sc.rows[key]
		if ir == nil || !ir.Status.Terminal() || !sc.noted[key] {
			return
		}
		if c.read {
			if c.done > 0 {
				addOut(c, ",")
			}
			// store.ItemOutputs assembles the same list (sqlrow.StepCols).
			if ir.Status == store.StepCompleted && len(ir.Output) > 0 {
				addOut(c, ir.Output)
			} else {
				addOut(c, "null")
			}
		}
		c.attempts += ir.Attempts
		if s.Until != nil {
			// The loop's last iterations are all it still held.
			it := sc.state(key).Iteration
			sc.drop(store.StepKey(s.Name, c.done, it))
			sc.drop(store.StepKey(s.Name, c.done, it-1))
		}
		sc.drop(key)
		c.done++
	}
}

// cancelStepKeys stops every unfinished key of a step (foreach items,
// iterations) other than the step's own row: their actions are killed and
// they are written canceled.
func (sc *scheduler) cancelStepKeys(name string) {
	for key, f := range sc.inFlight {
		if f.u.s.Name == name {
			sc.abandon(key, f, store.AttemptCanceled, store.StepCanceled)
		}
	}
	for _, row := range sc.rows {
		if row.Step == name && row.Key != name && !row.Status.Terminal() && row.Status != store.StepPending {
			c := *row
			c.Status, c.FinishedAt, c.WakeAt = store.StepCanceled, sc.now, zeroTime
			sc.put(&c, nil)
		}
	}
}
