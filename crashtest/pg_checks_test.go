package crashtest

import (
	"strings"
	"testing"
	"time"
)

// TestCheckTakeovers: on hand-made histories, the takeover check accepts a
// takeover after the lease and catches one by pid test (too early) or by
// the dead worker's own host.
func TestCheckTakeovers(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	killed := map[int]killing{100: {sent: at(1000), reaped: at(1005)}}
	const lease = 3 * time.Second
	history := func(by string, ms int) map[string][]event {
		return map[string][]event{"r1": {
			{ID: 1, Kind: "claimed", Owner: "host-0/100/w1", At: at(0)},
			{ID: 2, Kind: "step_started", StepKey: "a", Attempt: 1, At: at(10)},
			{ID: 3, Kind: "claimed", Owner: by, At: at(ms)},
		}}
	}
	cases := []struct {
		name string
		evs  map[string][]event
		want string // a word of the violation; "" for none
	}{
		{"after the lease", history("host-1/200/w1", 3500), ""},
		{"two thirds of a lease after the kill (the last heartbeat came before it)", history("host-1/200/w1", 3000), ""},
		{"at once, by pid test", history("host-1/200/w1", 1100), "before its lease"},
		{"by the same host", history("host-0/300/w1", 3500), "same host"},
	}
	for _, c := range cases {
		took, bad := checkTakeovers(c.evs, killed, lease)
		got := strings.Join(bad, "\n")
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: violations %s, want none", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: violations %q, want one saying %q", c.name, got, c.want)
		}
		if len(took[100]) != 1 {
			t.Errorf("%s: takeovers %v, want one of pid 100", c.name, took)
		}
	}
	// A claim before the kill (a run handed on while its worker lived) is
	// no takeover.
	if took, bad := checkTakeovers(history("host-1/200/w1", 500), killed, lease); len(took) != 0 || len(bad) != 0 {
		t.Errorf("a claim before the kill: takeovers %v, violations %v; want none", took, bad)
	}
}
