package testrun

import (
	"context"
	"slices"
	"strconv"
	"sync"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/flowrun/flowrun/store"
)

// The attempts of a parallel foreach (or of steps that run side by side)
// call their mocks from goroutines of their own, in whatever order the Go
// scheduler runs them, and the engine folds their results in the order
// they come back. Left alone, which result of a mock's `results` an item
// gets, and what the run decides when several results are ready at once,
// would change from one run of a test to the next.
//
// order makes both deterministic. Every mocked exec or http attempt of
// the tested run is registered when the commit that starts it is made,
// in commit order and, within a commit, in the order the engine started
// them (its decision order, the same on every run). Its mock call waits
// until it is the oldest registered and the call let through before it
// has been folded into the run (the commit that ends its attempt is
// made): then it takes the next result. So the engine sees one mocked
// result at a time, in the order it started the attempts. A call whose
// attempt the engine stopped, or whose engine was dropped (--crash),
// before its turn is answered at once with a canceled error and takes no
// result: its action never started.

// order is the queue of mocked attempts (guarded by execution.mu).
type order struct {
	cond *sync.Cond
	// runs are the runs whose attempts are ordered: the tested run (and
	// the run a decided upgrade replaced it with).
	runs map[string]bool
	// waiting holds the attempts registered and not yet let through, as
	// run id + "/" + step key + "#" + attempt, oldest first; inc is the
	// engine incarnation that started each.
	waiting []string
	inc     map[string]int
	// busy is the attempt let through and not yet folded into its run,
	// by incarnation busyInc.
	busy    string
	busyInc int
}

func newOrder(mu *sync.Mutex) *order {
	return &order{cond: sync.NewCond(mu), runs: map[string]bool{}, inc: map[string]int{}}
}

func callKey(runID, stepKey string, attempt int) string {
	return runID + "/" + stepKey + "#" + strconv.Itoa(attempt)
}

// ordered reports whether the attempts of step (a step key's name) are
// ordered: it is mocked with an exec or http action in every version of
// the test that has it.
func ordered(t *testfile.Test, step string) bool {
	mocked := false
	for _, m := range t.Mocks {
		mocked = mocked || m.Step == step
	}
	if !mocked {
		return false
	}
	for _, g := range []*graph.Graph{t.Graph, upgradeGraph(t)} {
		if g == nil {
			continue
		}
		if i, ok := g.StepIndex(step); ok {
			if k := g.Steps[i].Action.Kind; k != graph.KindExec && k != graph.KindHTTP {
				return false
			}
		}
	}
	return true
}

func upgradeGraph(t *testfile.Test) *graph.Graph {
	if t.Upgrade == nil {
		return nil
	}
	return t.Upgrade.Graph
}

// committing registers the mocked attempts a commit of incarnation inc
// starts, and lets the next call through when it ends the busy one
// (called with mu held, for a commit that is made).
func (o *order) committing(t *testfile.Test, inc int, ts []store.Transition) {
	changed := false
	for _, tr := range ts {
		if !o.runs[tr.RunID] {
			continue
		}
		for _, a := range tr.Attempts {
			k := callKey(tr.RunID, a.StepKey, a.Attempt)
			if a.Status != store.AttemptRunning {
				if k == o.busy {
					o.busy, changed = "", true
				}
				continue
			}
			name, _, _, ok := store.ParseStepKey(a.StepKey)
			if ok && ordered(t, name) && !slices.Contains(o.waiting, k) {
				o.waiting = append(o.waiting, k)
				o.inc[k] = inc
			}
		}
	}
	if changed {
		o.cond.Broadcast()
	}
}

// dropped lets the calls of a dropped incarnation go (with mu held).
func (o *order) dropped() { o.cond.Broadcast() }

// turn waits (with mu held, which it releases while it waits) until the
// call k may take its result, and reports true; false when its attempt was
// stopped or its engine dropped first. A call that was not registered
// goes at once.
func (o *order) turn(ctx context.Context, k string, dead map[int]bool) bool {
	if !slices.Contains(o.waiting, k) {
		return true
	}
	if ctx == nil {
		ctx = context.Background()
	}
	stop := context.AfterFunc(ctx, func() {
		o.cond.L.Lock()
		defer o.cond.L.Unlock()
		o.cond.Broadcast()
	})
	defer stop()
	for {
		if ctx.Err() != nil || dead[o.inc[k]] {
			o.remove(k)
			return false
		}
		if (o.busy == "" || dead[o.busyInc]) && o.waiting[0] == k {
			o.busy, o.busyInc = k, o.inc[k]
			o.remove(k)
			return true
		}
		o.cond.Wait()
	}
}

func (o *order) remove(k string) {
	if i := slices.Index(o.waiting, k); i >= 0 {
		o.waiting = slices.Delete(o.waiting, i, i+1)
	}
	delete(o.inc, k)
	o.cond.Broadcast()
}
