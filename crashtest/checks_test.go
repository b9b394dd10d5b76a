package crashtest

import (
	"strings"
	"testing"
	"time"
)

// The proofs are only as good as their checkers: these tests show, on
// hand-made histories, that the checkers catch what they are for.

// TestCheckExclusive: two owners at once.
func TestCheckExclusive(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	a1 := attempt{StepKey: "a", Attempt: 1, Status: "interrupted", Owner: "h/100/w1", Started: at(0), Finished: at(50)}
	a2 := attempt{StepKey: "a", Attempt: 2, Status: "completed", Owner: "h/200/w1", Started: at(60), Finished: at(90)}
	claims := []event{
		{ID: 1, Kind: "claimed", Owner: "h/100/w1", At: at(0)},
		{ID: 2, Kind: "step_started", StepKey: "a", Attempt: 1, At: at(0)},
		{ID: 3, Kind: "claimed", Owner: "h/200/w1", At: at(50)},
		{ID: 4, Kind: "step_started", StepKey: "a", Attempt: 2, At: at(60)},
		{ID: 5, Kind: "step_completed", StepKey: "a", At: at(90)},
	}
	killedAt := map[int]killing{100: {sent: at(20), reaped: at(25)}}

	cases := []struct {
		name   string
		evs    []event
		atts   []attempt
		killed map[int]killing
		want   string // a word of the violation; "" for none
	}{
		{"a killed owner's attempt taken over", claims, []attempt{a1, a2}, killedAt, ""},
		{"interrupted but never killed", claims, []attempt{a1, a2}, nil, "never killed"},
		{"closed before the kill", claims, []attempt{a1, a2}, map[int]killing{100: {sent: at(55), reaped: at(56)}}, "before its owner was killed"},
		{"started by a dead owner", claims, []attempt{{StepKey: "a", Attempt: 1, Status: "interrupted", Owner: "h/100/w1", Started: at(30), Finished: at(50)}, a2},
			killedAt, "after its owner was dead"},
		{"started under another's lease", []event{claims[0], claims[2], claims[1], claims[3], claims[4]}, []attempt{a1, a2}, killedAt, "while h/200/w1 held the run"},
		{"completed under another's lease", []event{claims[0], claims[1], claims[3], claims[4], claims[2]}, []attempt{a1, a2}, killedAt, "completed (event 5) by h/200/w1 while h/100/w1"},
		{"overlapping live owners", []event{claims[0], {ID: 2, Kind: "step_started", StepKey: "a", Attempt: 1}, claims[2], {ID: 4, Kind: "step_started", StepKey: "b", Attempt: 1}},
			[]attempt{{StepKey: "a", Attempt: 1, Status: "completed", Owner: "h/100/w1", Started: at(0), Finished: at(70)},
				{StepKey: "b", Attempt: 1, Status: "completed", Owner: "h/200/w1", Started: at(60), Finished: at(90)}}, nil, "overlap"},
		{"an attempt left running", claims[:2], []attempt{{StepKey: "a", Attempt: 1, Status: "running", Owner: "h/100/w1", Started: at(0)},
			{StepKey: "b", Attempt: 1, Status: "completed", Owner: "h/200/w1", Started: at(60), Finished: at(90)}}, nil, "overlap"},
	}
	for _, c := range cases {
		got := strings.Join(checkExclusive("r1", c.evs, c.atts, c.killed), "\n")
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: violations %s, want none", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: violations %q, want one saying %q", c.name, got, c.want)
		}
	}
}

// TestCheckExecutions: a step that ran too often, too little, or under the
// wrong key.
func TestCheckExecutions(t *testing.T) {
	const key = "R/s01"
	interrupted := attempt{StepKey: "s01", Attempt: 1, Status: "interrupted", Idempotent: key}
	completed := attempt{StepKey: "s01", Attempt: 2, Status: "completed", Idempotent: key}
	full := []mark{{1, "start"}, {2, "start"}, {1, "end"}, {2, "end"}}
	cases := []struct {
		name string
		as   []attempt
		ms   []mark
		want string // a word of the violation; "" for none
	}{
		{"re-run after a kill", []attempt{completed, interrupted}, full, ""},
		{"killed before its action began", []attempt{interrupted, completed}, []mark{{2, "start"}, {2, "end"}}, ""},
		{"no attempts", nil, nil, "no attempts"},
		{"an attempt ran twice", []attempt{interrupted, completed}, append(full, mark{2, "start"}), "ran twice"},
		{"ran without an attempt", []attempt{interrupted, completed}, append(full, mark{3, "start"}), "knows only 2"},
		{"completed without ending", []attempt{interrupted, completed}, full[:3], "did not write both"},
		{"never ran", []attempt{interrupted, completed}, nil, "did not write both"},
		{"completed twice", []attempt{{StepKey: "s01", Attempt: 1, Status: "completed", Idempotent: key}, completed}, full, "only the last attempt"},
		{"last one interrupted", []attempt{interrupted}, []mark{{1, "start"}}, "want completed"},
		{"another key", []attempt{interrupted, {StepKey: "s01", Attempt: 2, Status: "completed", Idempotent: "R/s01-x"}}, full, "idempotency key"},
		{"a gap in the numbers", []attempt{interrupted, {StepKey: "s01", Attempt: 3, Status: "completed", Idempotent: key}}, full, "not 1, 2"},
	}
	for _, c := range cases {
		got := strings.Join(checkExecutions(key, c.as, c.ms), "\n")
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: violations %s, want none", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: violations %q, want one saying %q", c.name, got, c.want)
		}
	}
	lines := []string{"R/s01 1 start", "R/s01 2 start", "R/s01 1 end", "R/s01 2 end", "R/s02 1 start", "R/s02 1 end"}
	if n := orphanOverlaps(lines); n != 1 {
		t.Errorf("orphanOverlaps = %d, want 1 (attempt 1 of s01 ended after attempt 2 began)", n)
	}
}
