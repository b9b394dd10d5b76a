package crashtest

import (
	"fmt"
	"sort"
	"testing"
)

// The exec steps of the proofs' workflows append two lines to a log around
// their work: "IDEMPOTENCY_KEY ATTEMPT start" and "... end", from the
// FLOWRUN_* variables flowrun sets. They are the ground truth of what ran.

// mark is one line an exec step appended to its log.
type mark struct {
	attempt int
	phase   string // "start" or "end"
}

// readMarks reads a log of marks: the marks of each idempotency key
// (RUN_ID/STEP), in the order they were written.
func readMarks(t *testing.T, path string) map[string][]mark {
	t.Helper()
	out := map[string][]mark{}
	for _, line := range readLines(t, path) {
		key, m, ok := parseMark(line)
		if !ok {
			t.Fatalf("%s: line %q is not IDEMPOTENCY_KEY ATTEMPT start|end", path, line)
		}
		out[key] = append(out[key], m)
	}
	return out
}

func parseMark(line string) (key string, m mark, ok bool) {
	if _, err := fmt.Sscanf(line, "%s %d %s", &key, &m.attempt, &m.phase); err != nil {
		return "", mark{}, false
	}
	return key, m, m.phase == "start" || m.phase == "end"
}

// checkExecutions checks one exec step's attempts (from the store) against
// its executions (its marks), and returns one sentence per violation:
//
//   - the attempts are numbered 1, 2, ... and carry the step's idempotency
//     key; the last completed and every earlier one was interrupted (that
//     an interrupted attempt's owner was killed, checkExclusive checks);
//   - no attempt ran twice (wrote its start twice), and none ran that the
//     store does not know;
//   - the completed attempt ran from its start to its end.
//
// So the step ran at least once, and more than once only in attempts that
// were cut short by a kill.
func checkExecutions(key string, as []attempt, ms []mark) []string {
	var bad []string
	if len(as) == 0 {
		return []string{fmt.Sprintf("step %s has no attempts", key)}
	}
	as = append([]attempt(nil), as...)
	sort.Slice(as, func(i, j int) bool { return as[i].Attempt < as[j].Attempt })
	for i, a := range as {
		if a.Attempt != i+1 {
			bad = append(bad, fmt.Sprintf("step %s: attempt numbers %v are not 1, 2, ...", key, as))
			break
		}
		if a.Idempotent != key {
			bad = append(bad, fmt.Sprintf("attempt %s has idempotency key %q, want %q", a, a.Idempotent, key))
		}
		want := "interrupted"
		if i == len(as)-1 {
			want = "completed"
		}
		if a.Status != want {
			bad = append(bad, fmt.Sprintf("attempt %s of %s is %s, want %s (only the last attempt of a step may complete)", a, key, a.Status, want))
		}
	}
	last := as[len(as)-1].Attempt
	seen := map[mark]bool{}
	for _, m := range ms {
		if seen[m] {
			bad = append(bad, fmt.Sprintf("step %s attempt %d wrote %q twice: one attempt ran twice", key, m.attempt, m.phase))
		}
		seen[m] = true
		if m.attempt > last {
			bad = append(bad, fmt.Sprintf("step %s attempt %d ran, but the store knows only %d attempts", key, m.attempt, last))
		}
	}
	if !seen[mark{last, "start"}] || !seen[mark{last, "end"}] {
		bad = append(bad, fmt.Sprintf("step %s: its completed attempt %d did not write both its start and end lines (%v)", key, last, ms))
	}
	return bad
}

// reran counts the steps that started more than once.
func reran(marks map[string][]mark) int {
	n := 0
	for _, ms := range marks {
		starts := 0
		for _, m := range ms {
			if m.phase == "start" {
				starts++
			}
		}
		if starts > 1 {
			n++
		}
	}
	return n
}

// orphanOverlaps counts, in a log of marks, the attempts that wrote their
// end line after the next attempt of their step had written its start: the
// action of a killed process outlived it and overlapped its own
// re-execution.
func orphanOverlaps(lines []string) int {
	started := map[string]int{} // key -> highest attempt started so far
	n := 0
	for _, line := range lines {
		key, m, ok := parseMark(line)
		if !ok {
			continue // readMarks reports malformed lines
		}
		switch m.phase {
		case "start":
			started[key] = max(started[key], m.attempt)
		case "end":
			if started[key] > m.attempt {
				n++
			}
		}
	}
	return n
}
