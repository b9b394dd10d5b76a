package interp

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// Reading a long run's rows for a rebuild.
//
// A rebuild needs the rows of the step keys still open and of the finished
// steps that later decisions read (keep, keep.go); every other finished
// step would be settled and at once dropped by the first compact. For a
// run of many step keys the rebuild therefore reads the heads of every key
// (key and status, no output or state), decides from them and the graph
// which finished steps the first compact would drop, marks those dropped,
// and reads whole only the rows of the rest. Resuming a run that has
// 10,000 finished steps then reads a handful of rows instead of all of
// them with their outputs.

// prefetchGraphBytes is the size of a stored graph from which a rebuild
// that must decode it reads the run's step heads at the same time: such a
// graph has hundreds of steps or more (a few hundred bytes each), so its
// run is read heads first, and decoding it takes long enough (10 ms at
// 10,000 steps) to hide the read.
const prefetchGraphBytes = 64 << 10

// headsRead is a read of a run's step heads in progress; wait returns its
// result (and must be called: it owns the reading goroutine).
type headsRead struct {
	done  chan struct{}
	heads []store.StepHead
	err   error
}

func (h *headsRead) wait() ([]store.StepHead, error) {
	<-h.done
	return h.heads, h.err
}

// loadGraph returns the run's loaded graph (load) and, when it had to
// decode a large graph, the read of the run's step heads it started
// before decoding (nil when not started).
func (r *runner) loadGraph(ctx context.Context) (*loaded, *headsRead, error) {
	var heads *headsRead
	l, err := r.e.loadDecoding(ctx, r.run.Workflow, r.run.GraphHash, func(size int) {
		if size < prefetchGraphBytes {
			return
		}
		heads = &headsRead{done: make(chan struct{})}
		go func() {
			defer close(heads.done)
			heads.heads, heads.err = r.e.st.StepHeads(ctx, r.run.ID)
		}()
	})
	return l, heads, err
}

// leanRebuild says when a rebuild reads heads first: from keys step keys
// (below, one StepList is cheaper than two reads), and only when it needs
// at most 1/share of them whole, which it reads one by one (beyond, one
// StepList is cheaper). Tests lower both to take this path on small runs.
type leanRebuild struct{ keys, share int }

// loadRows returns the rows a rebuild must hold. When it read heads first,
// it also returns the runner's keep with the steps that ended and that
// nothing reads any more already dropped (their rows were not read), to be
// set before the rows are settled.
//
// pre, when not nil, is a read of the heads started while the graph was
// decoded (loadGraph); it is used instead of reading them again.
func (r *runner) loadRows(ctx context.Context, pre *headsRead) ([]store.Step, *keep, error) {
	full := func() ([]store.Step, *keep, error) {
		steps, err := r.e.st.StepList(ctx, r.run.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: load steps: %w", r.run.ID, err)
		}
		return steps, nil, nil
	}
	if len(r.l.g.Steps) < r.e.lean.keys && !r.l.g.Expands() {
		return full() // a short graph's run has few keys: no heads first
	}
	var heads []store.StepHead
	var err error
	if pre != nil {
		heads, err = pre.wait()
	} else {
		heads, err = r.e.st.StepHeads(ctx, r.run.ID)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("run %s: load steps: %w", r.run.ID, err)
	}
	if len(heads) < r.e.lean.keys {
		return full()
	}
	k := r.sched.newKeep()
	gone := r.droppable(k, heads)
	var need []string
	for _, h := range heads {
		if i, ok := r.l.g.StepIndex(h.Step); ok && gone[i] {
			continue
		}
		need = append(need, h.Key)
	}
	if len(need) > len(heads)/r.e.lean.share {
		return full() // most rows are needed: one read of all is cheaper
	}
	rows := make([]store.Step, 0, len(need))
	for _, key := range need {
		row, err := r.e.st.StepGet(ctx, r.run.ID, key)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: load step %s: %w", r.run.ID, key, err)
		}
		rows = append(rows, row)
	}
	for i, g := range gone {
		if !g {
			continue
		}
		k.gone[i] = true
		for _, need := range r.l.g.Steps[i].Needs {
			if j, ok := r.l.g.StepIndex(need); ok {
				k.readers[j]--
			}
		}
	}
	return rows, k, nil
}

// droppable returns, per step of the graph, whether the first compact
// after a rebuild from these heads would drop it (see keep; k is a new
// keep, its readers counted): it ended, every step that needs it ended, and
// no workflow output reads it. A failed workflow step is never dropped
// here: the rebuild reads its row to cancel a child it gave up on.
func (r *runner) droppable(k *keep, heads []store.StepHead) []bool {
	steps := r.l.g.Steps
	ended := make([]bool, len(steps))
	failed := make([]bool, len(steps))
	for _, h := range heads {
		if h.Index >= 0 || h.Iteration >= 0 {
			continue
		}
		if i, ok := r.l.g.StepIndex(h.Step); ok && h.Status.Terminal() {
			ended[i] = true
			failed[i] = h.Status == store.StepFailed
		}
	}
	readers := make([]int32, len(steps))
	copy(readers, k.readers)
	for i, s := range steps {
		if !ended[i] {
			continue
		}
		for _, need := range s.Needs {
			if j, ok := r.l.g.StepIndex(need); ok {
				readers[j]--
			}
		}
	}
	gone := make([]bool, len(steps))
	for i, s := range steps {
		gone[i] = ended[i] && readers[i] == 0 && !(failed[i] && s.Action.Kind == graph.KindWorkflow)
	}
	return gone
}
