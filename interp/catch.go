package interp

// catch: a failed step whose catch takes its error does not fail the run;
// the catch's next steps run instead of the step's dependents
// (spec/semantics.md §4, language.md §8.1).

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// tryCatch tries the catch blocks of a failed step in order, with error
// bound to the step's error, and reports whether one took it. The first
// whose when holds (or that has none) takes it: the error is marked
// caught, the step's State records the catch's next (as a switch's
// branch), and step_caught is written, all in the transition that failed
// the step. A when that fails to evaluate does not take the error (the
// event catch_when_failed says why) and the next catch is tried. A step
// whose error was taken already (a rebuilt run) reports true again.
func (sc *scheduler) tryCatch(s *graph.Step, row *store.Step) bool {
	se := &stepError{}
	_ = json.Unmarshal(row.Error, se)
	if se.Caught {
		return true
	}
	errMap := decodeMap(row.Error)
	for i, c := range s.Catch {
		if c.When != nil {
			a := sc.act(nil)
			a.Error = errMap
			v, err := sc.l.prog.Eval(context.Background(), c.When, a)
			if err != nil {
				sc.tx.event("catch_when_failed", s.Name, map[string]any{"catch": i + 1, "message": sc.red.text(err.Error())})
				continue
			}
			if b, _ := v.(bool); !b {
				continue
			}
		}
		se.Caught = true
		nr := *row
		nr.Error = mustJSON(se)
		nr.Detail = fmt.Sprintf("caught by catch %d: %s runs next", i+1, strings.Join(c.Next, ", "))
		nst := *sc.state(s.Name)
		nst.Chosen = slices.Clone(c.Next)
		sc.put(&nr, &nst)
		ev := map[string]any{"catch": i + 1, "next": c.Next, "kind": se.Kind, "type": se.Type, "message": se.Message}
		se.problemFields(ev)
		sc.tx.event("step_caught", s.Name, ev)
		return true
	}
	return false
}

// caughtBy returns the next of the catch that took step n's error, or nil
// when n did not fail or no catch took its error.
func (sc *scheduler) caughtBy(n string, st store.StepStatus) []string {
	if st != store.StepFailed {
		return nil
	}
	return sc.state(n).Chosen
}

// catchEdge is the status of the edge from n, a step with catch blocks
// that ended with status st, to step to: for a target of n's catches,
// completed when the catch that took n's error chose it and skipped
// otherwise (n completed, failed with no catch taking it, or another
// catch took it); for a dependent, skipped when a catch took n's error
// (its targets run instead) unless the dependent comes after one of the
// chosen targets (it is part of the handling, as a step that raises the
// error again after a cleanup), else st.
func (sc *scheduler) catchEdge(n, to string, st store.StepStatus) store.StepStatus {
	chosen := sc.caughtBy(n, st)
	if slices.Contains(sc.l.g.CatchesTargeting(to), n) {
		if slices.Contains(chosen, to) {
			return store.StepCompleted
		}
		return store.StepSkipped
	}
	if chosen != nil && !sc.after(to, chosen) {
		return store.StepSkipped
	}
	return st
}

// after reports whether step to waits, directly or not, for one of the
// steps in of.
func (sc *scheduler) after(to string, of []string) bool {
	seen := map[string]bool{}
	stack := []string{to}
	for len(stack) > 0 {
		s := sc.l.step(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if s == nil {
			continue
		}
		for _, n := range s.Needs {
			if slices.Contains(of, n) {
				return true
			}
			if !seen[n] {
				seen[n] = true
				stack = append(stack, n)
			}
		}
	}
	return false
}

// catchSkipWhy says why the edge from n skips step to when n has catch
// blocks ("" when it has none, or the usual words say it).
func (sc *scheduler) catchSkipWhy(n, to string) string {
	if len(sc.l.step(n).Catch) == 0 {
		return ""
	}
	row := sc.rows[n]
	if row == nil {
		return ""
	}
	chosen := sc.caughtBy(n, row.Status)
	targeted := slices.Contains(sc.l.g.CatchesTargeting(to), n)
	switch {
	case targeted && row.Status == store.StepCompleted:
		return fmt.Sprintf("step %q completed, so no catch of it ran", n)
	case targeted && chosen != nil:
		return fmt.Sprintf("the catch that took step %q's error chose %s", n, strings.Join(chosen, ", "))
	case targeted && row.Status == store.StepFailed:
		return fmt.Sprintf("step %q failed and no catch of it took the error", n)
	case chosen != nil && !sc.after(to, chosen):
		return fmt.Sprintf("a catch of step %q took its error; %s runs instead", n, strings.Join(chosen, ", "))
	}
	return ""
}
