package interp

// join = "first": a race. The step begins as soon as one of its needs
// completes; the needs still unfinished then (the losers), and the steps
// upstream of them that nothing else needs, are canceled in the same
// transition, so a run rebuilt after a crash sees either no winner yet or
// one winner and its losers canceled (spec/semantics.md §4).

import (
	"fmt"
	"slices"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// raceReady says whether a step with join = "first" can be decided: an
// edge from one of its needs completed, or every need ended (the join
// then skips it). It is pure.
func raceReady(needs []string, edge func(string) store.StepStatus) bool {
	ended := true
	for _, n := range needs {
		st := edge(n)
		if st == store.StepCompleted {
			return true
		}
		ended = ended && st.Terminal()
	}
	return ended
}

// cancelLosers cancels, once step s won its race, every need of s that
// has not ended and every step that only those losers wait for, upstream
// of them, that has not ended either.
func (sc *scheduler) cancelLosers(s *graph.Step) {
	losers := map[string]bool{}
	for _, n := range s.Needs {
		if row := sc.rows[n]; row == nil || !row.Status.Terminal() {
			losers[n] = true
		}
	}
	if len(losers) == 0 {
		return
	}
	gone := raceGone(sc.l.g, s.Name, losers, func(n string) bool {
		row := sc.rows[n]
		return row != nil && row.Status.Terminal()
	})
	// Graph order, so the writes and events come in a stable order. Each
	// is settled at once: the winner's expressions, evaluated in this
	// same pass, read the losers' status (steps.X.status is "canceled").
	for _, st := range sc.l.g.Steps {
		if gone[st.Name] {
			sc.cancelStep(st, fmt.Sprintf("lost the race of step %q (join = \"first\")", s.Name))
			if row := sc.rows[st.Name]; row != nil && row.Status.Terminal() {
				sc.settle(st, row)
			}
		}
	}
}

// raceGone returns the steps a race of step winner cancels: the losers
// and, upstream of them, every unfinished step (ended says which have
// ended) whose dependents are all canceled by the race. It is pure.
func raceGone(g *graph.Graph, winner string, losers map[string]bool, ended func(string) bool) map[string]bool {
	gone := map[string]bool{}
	users := map[string][]string{}
	for _, st := range g.Steps {
		for _, n := range st.Needs {
			users[n] = append(users[n], st.Name)
		}
	}
	for n := range losers {
		gone[n] = true
	}
	// Walk up from the losers in reverse graph order: a step's users come
	// after it, so each is decided before the step is looked at.
	for i := len(g.Steps) - 1; i >= 0; i-- {
		st := g.Steps[i]
		if !gone[st.Name] {
			continue
		}
		for _, up := range st.Needs {
			if gone[up] || ended(up) || up == winner {
				continue
			}
			if !slices.ContainsFunc(users[up], func(u string) bool { return !gone[u] }) {
				gone[up] = true
			}
		}
	}
	return gone
}

// cancelStep ends every unfinished step key of st canceled: its actions
// in flight are stopped, the child runs it waits for canceled after the
// commit, and a step that had not begun gets a canceled row.
func (sc *scheduler) cancelStep(st *graph.Step, why string) {
	top := false
	for _, row := range sc.rowsOf(st.Name) {
		if row.Key == st.Name {
			top = true
		}
		if row.Status.Terminal() {
			continue
		}
		if f, ok := sc.inFlight[row.Key]; ok {
			sc.abandon(row.Key, f, store.AttemptCanceled, store.StepCanceled)
		} else {
			if s := sc.state(row.Key); row.Status == store.StepWaiting && s.Wait == waitChild {
				if c, ok := sc.children[s.Child]; !ok || !c.Status.Terminal() {
					sc.afterEnd = append(sc.afterEnd, s.Child)
				}
			}
			c := *row
			c.Status, c.FinishedAt, c.WakeAt = store.StepCanceled, sc.now, zeroTime
			sc.put(&c, nil)
		}
		if c := sc.rows[row.Key]; c != nil {
			nc := *c
			nc.Detail = why
			sc.put(&nc, nil)
		}
		sc.tx.event("step_canceled", row.Key, map[string]any{"reason": why})
	}
	if !top {
		u := unit{s: st, key: st.Name, idx: -1, iter: -1}
		nr := sc.row(u)
		nr.Status, nr.FinishedAt, nr.Detail = store.StepCanceled, sc.now, why
		sc.put(nr, nil)
		sc.tx.event("step_canceled", st.Name, map[string]any{"reason": why})
	}
}
