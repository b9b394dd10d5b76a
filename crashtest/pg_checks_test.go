package crashtest

import (
	"strings"
	"testing"
	"time"
)

// TestCheckTakeovers: on hand-made histories, the takeover check accepts a
// takeover after the lease and catches one before it (by the expiry read
// after the kill, or else by the holder's claim plus a lease) or by the
// dead worker's own host.
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
	heartbeat := map[string]time.Time{leaseKey("r1", "host-0/100/w1"): at(3400)} // renewed at 400 ms
	// The taker was killed later too, with a lease of its own recorded:
	// that lease says nothing of the first takeover.
	laterHolder := map[string]time.Time{leaseKey("r1", "host-1/200/w1"): at(9000)}
	cases := []struct {
		name    string
		evs     map[string][]event
		expires map[string]time.Time
		want    string // a word of the violation; "" for none
	}{
		{"after the recorded lease", history("host-1/200/w1", 3500), heartbeat, ""},
		{"before the recorded lease, after claim plus lease", history("host-1/200/w1", 3200), heartbeat, "before its lease expired"},
		{"no recorded lease: at claim plus lease (a heartbeat that lagged)", history("host-1/200/w1", 3000), nil, ""},
		{"no recorded lease: at once, by pid test", history("host-1/200/w1", 1100), nil, "before its lease expired"},
		{"by the same host", history("host-0/300/w1", 3500), heartbeat, "same host"},
		{"the taker's own later lease is not the dead holder's", history("host-1/200/w1", 3500), laterHolder, ""},
	}
	for _, c := range cases {
		took, bad := checkTakeovers(c.evs, killed, c.expires, lease)
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
	if took, bad := checkTakeovers(history("host-1/200/w1", 500), killed, nil, lease); len(took) != 0 || len(bad) != 0 {
		t.Errorf("a claim before the kill: takeovers %v, violations %v; want none", took, bad)
	}
}
