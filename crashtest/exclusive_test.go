package crashtest

import (
	"fmt"
	"time"
)

// checkExclusive checks that no two processes ever worked on one run at
// once, from what the run's owners committed. It returns one sentence per
// violation. killed maps the pid of every process the test SIGKILLed to
// when that happened.
//
//  1. Commit order: every attempt's start (a step_started event) and every
//     completion (step_completed) was committed by the process that held
//     the run then, the owner of the latest "claimed" event before it. Two
//     processes working at once would interleave their commits.
//  2. Times: attempts of different owners overlap only when the earlier one
//     was interrupted and its owner was dead before the later one began.
//  3. Interrupted attempts: only a killed process's attempt is closed
//     interrupted, and only after the kill. A live process's attempt
//     closed by another would mean the other took over a run that was
//     still being worked on.
func checkExclusive(runID string, evs []event, atts []attempt, killed map[int]killing) []string {
	var bad []string
	byKey := map[string]attempt{}
	completed := map[string]attempt{}
	for _, a := range atts {
		byKey[fmt.Sprintf("%s#%d", a.StepKey, a.Attempt)] = a
		if a.Status == "completed" {
			completed[a.StepKey] = a
		}
	}

	// 1. Commit order.
	owner := ""
	for _, ev := range evs {
		switch ev.Kind {
		case "claimed":
			owner = ev.Owner
		case "step_started":
			a, ok := byKey[fmt.Sprintf("%s#%d", ev.StepKey, ev.Attempt)]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("run %s: event %d says step %s attempt %d started, but that attempt is not stored", runID, ev.ID, ev.StepKey, ev.Attempt))
			case a.Owner != owner:
				bad = append(bad, fmt.Sprintf("run %s: attempt %s was started (event %d) by %s while %s held the run", runID, a, ev.ID, a.Owner, owner))
			}
		case "step_completed":
			if a, ok := completed[ev.StepKey]; ok && a.Owner != owner {
				bad = append(bad, fmt.Sprintf("run %s: attempt %s was completed (event %d) by %s while %s held the run", runID, a, ev.ID, a.Owner, owner))
			}
		}
	}

	// 2. Times.
	for i, a := range atts {
		for _, b := range atts[i+1:] {
			if a.Owner == b.Owner {
				continue
			}
			first, second := a, b
			if second.Started.Before(first.Started) {
				first, second = second, first
			}
			if !first.Finished.IsZero() && !second.Started.Before(first.Finished) {
				continue
			}
			if k, ok := killed[first.ownerPID()]; first.Status == "interrupted" && ok && !second.Started.Before(k.sent.Truncate(time.Microsecond)) {
				continue // the first owner was being killed when the second began
			}
			bad = append(bad, fmt.Sprintf("run %s: attempts of two owners overlap: %s and %s", runID, first, second))
		}
	}

	// 3. Interrupted attempts.
	for _, a := range atts {
		if a.Status != "interrupted" {
			continue
		}
		k, ok := killed[a.ownerPID()]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("run %s: attempt %s was closed interrupted, but its owner was never killed: another process took the run over while it was still being worked on", runID, a))
		case a.Finished.Before(k.sent.Truncate(time.Microsecond)):
			bad = append(bad, fmt.Sprintf("run %s: attempt %s was closed interrupted at %s, before its owner was killed at %s", runID, a, a.Finished.Format(time.RFC3339Nano), k.sent.Format(time.RFC3339Nano)))
		case k.reaped.Before(a.Started):
			bad = append(bad, fmt.Sprintf("run %s: attempt %s started after its owner was dead (reaped at %s)", runID, a, k.reaped.Format(time.RFC3339Nano)))
		}
	}
	return bad
}

// killing records one SIGKILL: sent is taken just before the signal was
// sent, reaped just after the process was reaped, so the process died
// between them.
type killing struct {
	sent, reaped time.Time
}
