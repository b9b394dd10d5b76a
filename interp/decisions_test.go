package interp

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
)

// The decision helpers are pure: these tables drive them with state and an
// instant, without a store, a clock or a goroutine.

func TestRetryWake(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n int64) time.Time { return now.Add(time.Duration(n) * time.Millisecond) }
	for _, tc := range []struct {
		name     string
		rp       graph.Retry
		failed   int
		jitter   int64
		deadline time.Time
		delay    int64
		wake     time.Time
		ok       bool
	}{
		{"first retry waits the backoff", graph.Retry{BackoffMS: 100, Multiplier: 2}, 1, 0, time.Time{}, 100, ms(100), true},
		{"backoff grows by the multiplier", graph.Retry{BackoffMS: 100, Multiplier: 2}, 3, 0, time.Time{}, 400, ms(400), true},
		{"a multiplier under 1 counts as 1", graph.Retry{BackoffMS: 100, Multiplier: 0.5}, 4, 0, time.Time{}, 100, ms(100), true},
		{"the cap bounds the backoff", graph.Retry{BackoffMS: 100, Multiplier: 10, MaxDelayMS: 2500}, 3, 0, time.Time{}, 2500, ms(2500), true},
		{"jitter adds to the wake, not the recorded backoff", graph.Retry{BackoffMS: 100, Multiplier: 1, JitterMS: 50}, 2, 37, time.Time{}, 100, ms(137), true},
		{"a fractional backoff is truncated to whole ms", graph.Retry{BackoffMS: 3, Multiplier: 1.5}, 2, 0, time.Time{}, 4, ms(4), true},
		{"before the deadline it is scheduled", graph.Retry{BackoffMS: 100, Multiplier: 1}, 1, 0, ms(101), 100, ms(100), true},
		{"at the deadline it is not", graph.Retry{BackoffMS: 100, Multiplier: 1}, 1, 0, ms(100), 100, ms(100), false},
		{"jitter can push it past the deadline", graph.Retry{BackoffMS: 100, Multiplier: 1, JitterMS: 10}, 1, 5, ms(103), 100, ms(105), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			delay, wake, ok := retryWake(&tc.rp, tc.failed, tc.jitter, now, tc.deadline)
			if delay != tc.delay || !wake.Equal(tc.wake) || ok != tc.ok {
				t.Fatalf("retryWake = (%d, %s, %v), want (%d, %s, %v)", delay, wake, ok, tc.delay, tc.wake, tc.ok)
			}
		})
	}
}

func TestJoinSkip(t *testing.T) {
	const (
		C = store.StepCompleted
		F = store.StepFailed
		S = store.StepSkipped
		X = store.StepCanceled
	)
	type st = store.StepStatus
	for _, tc := range []struct {
		name  string
		join  string
		needs []string
		edge  map[string]st // the edge's status
		own   map[string]st // the need's own status (differs for a switch not taken)
		want  string
	}{
		{"no needs runs (all)", "", nil, nil, nil, ""},
		{"no needs runs (any)", "any", nil, nil, nil, ""},
		{"all completed runs", "", []string{"a", "b"}, map[string]st{"a": C, "b": C}, map[string]st{"a": C, "b": C}, ""},
		{"a failed need does not skip (continue on error)", "", []string{"a"}, map[string]st{"a": F}, map[string]st{"a": F}, ""},
		{"a skipped need skips", "", []string{"a", "b"}, map[string]st{"a": C, "b": S}, map[string]st{"a": C, "b": S}, `its dependency "b" was skipped`},
		{"a canceled need skips", "", []string{"a"}, map[string]st{"a": X}, map[string]st{"a": X}, `its dependency "a" was canceled`},
		{"the first skipped need is named", "", []string{"a", "b"}, map[string]st{"a": S, "b": X}, map[string]st{"a": S, "b": X}, `its dependency "a" was skipped`},
		{"a switch that took another branch", "", []string{"sw"}, map[string]st{"sw": S}, map[string]st{"sw": C}, `switch "sw" took another branch`},
		{"any: one completed runs", "any", []string{"a", "b"}, map[string]st{"a": S, "b": C}, map[string]st{"a": S, "b": C}, ""},
		{"any: a switch branch taken runs", "any", []string{"sw", "b"}, map[string]st{"sw": C, "b": F}, map[string]st{"sw": C, "b": F}, ""},
		{"any: none completed skips", "any", []string{"a", "b"}, map[string]st{"a": F, "b": S}, map[string]st{"a": F, "b": S}, `none of its dependencies completed (join = "any")`},
		{"any: switch not taken counts as skipped", "any", []string{"sw"}, map[string]st{"sw": S}, map[string]st{"sw": C}, `none of its dependencies completed (join = "any")`},
		{"first: one completed runs", "first", []string{"a", "b"}, map[string]st{"a": X, "b": C}, map[string]st{"a": X, "b": C}, ""},
		{"first: none completed skips", "first", []string{"a", "b"}, map[string]st{"a": F, "b": X}, map[string]st{"a": F, "b": X}, `none of its dependencies completed (join = "first")`},
		{"a caught need skips with its reason", "", []string{"get"}, map[string]st{"get": S}, map[string]st{"get": F}, `a catch of step "get" took its error`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edge := func(n string) st { return tc.edge[n] }
			own := func(n string) st { return tc.own[n] }
			why := func(n string) string {
				if n == "get" {
					return `a catch of step "get" took its error`
				}
				return ""
			}
			if got := joinSkip(tc.join, tc.needs, edge, own, why); got != tc.want {
				t.Fatalf("joinSkip = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNextWake(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type row struct {
		key    string
		status store.StepStatus
		wake   time.Time
		wait   string
	}
	for _, tc := range []struct {
		name     string
		rows     []row
		deadline time.Time
		next     time.Time
		external bool
	}{
		{"nothing waits", []row{{"a", store.StepCompleted, time.Time{}, ""}}, time.Time{}, time.Time{}, false},
		{"the deadline alone", nil, at(9), at(9), false},
		{"the earliest wake of waiting keys", []row{{"a", store.StepWaiting, at(5), waitRetry}, {"b", store.StepWaiting, at(3), waitSleep}}, time.Time{}, at(3), false},
		{"rows not waiting are ignored", []row{{"a", store.StepRunning, at(1), ""}, {"b", store.StepWaiting, at(4), waitInterval}}, time.Time{}, at(4), false},
		{"an earlier deadline wins", []row{{"a", store.StepWaiting, at(5), waitRetry}}, at(2), at(2), false},
		{"a later deadline does not", []row{{"a", store.StepWaiting, at(5), waitRetry}}, at(7), at(5), false},
		{"a signal wait is external, with its timeout", []row{{"a", store.StepWaiting, at(6), waitSignal}}, time.Time{}, at(6), true},
		{"a child wait with no timeout is external, no wake", []row{{"a", store.StepWaiting, time.Time{}, waitChild}}, time.Time{}, time.Time{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runState{rows: map[string]*store.Step{}, states: map[string]*rowState{}}
			for _, r := range tc.rows {
				st, err := json.Marshal(rowState{Wait: r.wait})
				if err != nil {
					t.Fatal(err)
				}
				s.rows[r.key] = &store.Step{Key: r.key, Step: r.key, Index: -1, Iteration: -1, Status: r.status, WakeAt: r.wake, State: st}
			}
			next, external := s.nextWake(tc.deadline)
			if !next.Equal(tc.next) || external != tc.external {
				t.Fatalf("nextWake = (%s, %v), want (%s, %v)", next, external, tc.next, tc.external)
			}
		})
	}
}

func TestParkWake(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	steps := []*graph.Step{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	type row struct {
		key, step string
		status    store.StepStatus
		wake      time.Time
		st        rowState
	}
	for _, tc := range []struct {
		name     string
		rows     []row
		deadline time.Time
		avail    time.Time
		reason   string
		waiting  bool
	}{
		{"nothing waits: no progress", []row{{"a", "a", store.StepCompleted, time.Time{}, rowState{}}}, time.Time{}, time.Time{}, "", false},
		{"a retry backoff", []row{{"a", "a", store.StepWaiting, at(5), rowState{Wait: waitRetry}}}, time.Time{}, at(5), "retry", true},
		{"the earliest timer sets the reason", []row{{"a", "a", store.StepWaiting, at(5), rowState{Wait: waitRetry}}, {"b", "b", store.StepWaiting, at(3), rowState{Wait: waitSleep}}}, time.Time{}, at(3), "timer", true},
		{"an until interval is a timer", []row{{"c", "c", store.StepWaiting, at(2), rowState{Wait: waitInterval}}}, time.Time{}, at(2), "timer", true},
		{"a signal with no timeout parks far away", []row{{"a", "a", store.StepWaiting, time.Time{}, rowState{Wait: waitSignal, Signal: "go"}}}, time.Time{}, now.Add(farFuture), "signal:go", true},
		{"a child with no timeout parks far away", []row{{"b", "b", store.StepWaiting, time.Time{}, rowState{Wait: waitChild}}}, time.Time{}, now.Add(farFuture), "child", true},
		{"a timed wait wins over an untimed one", []row{{"a", "a", store.StepWaiting, time.Time{}, rowState{Wait: waitSignal, Signal: "go"}}, {"b", "b", store.StepWaiting, at(7), rowState{Wait: waitSleep}}}, time.Time{}, at(7), "timer", true},
		{"among untimed waits the last in step order names it", []row{{"a", "a", store.StepWaiting, time.Time{}, rowState{Wait: waitSignal, Signal: "go"}}, {"b", "b", store.StepWaiting, time.Time{}, rowState{Wait: waitChild}}}, time.Time{}, now.Add(farFuture), "child", true},
		{"the deadline brings it forward", []row{{"a", "a", store.StepWaiting, at(9), rowState{Wait: waitRetry}}}, at(4), at(4), "retry", true},
		{"the deadline brings far future forward", []row{{"a", "a", store.StepWaiting, time.Time{}, rowState{Wait: waitChild}}}, at(60), at(60), "child", true},
		{"a breaker names the step's breaker", []row{{"c", "c", store.StepWaiting, at(8), rowState{Wait: waitBreaker}}}, time.Time{}, at(8), "breaker:br-c", true},
		{"a foreach item's row counts", []row{{"b[1]", "b", store.StepWaiting, at(6), rowState{Wait: waitRetry}}, {"b", "b", store.StepRunning, time.Time{}, rowState{}}}, time.Time{}, at(6), "retry", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runState{rows: map[string]*store.Step{}, states: map[string]*rowState{}}
			for _, r := range tc.rows {
				st, err := json.Marshal(r.st)
				if err != nil {
					t.Fatal(err)
				}
				s.rows[r.key] = &store.Step{Key: r.key, Step: r.step, Status: r.status, WakeAt: r.wake, State: st}
			}
			breaker := func(step string) string { return "br-" + step }
			avail, reason, waiting := s.parkWake(steps, breaker, now, tc.deadline)
			if !avail.Equal(tc.avail) || reason != tc.reason || waiting != tc.waiting {
				t.Fatalf("parkWake = (%s, %q, %v), want (%s, %q, %v)", avail, reason, waiting, tc.avail, tc.reason, tc.waiting)
			}
		})
	}
}

// TestCheckOutputHTTPRequestPart: a kept http output is checked against
// the type with its request part; one recorded before the part existed
// is taken as it was; a wrong one is still refused.
func TestCheckOutputHTTPRequestPart(t *testing.T) {
	s := &graph.Step{Name: "call", Action: graph.Action{Kind: graph.KindHTTP}, OutputType: graph.ObjectOf(map[string]*graph.Type{
		"status": graph.TypeInt, "headers": graph.MapOf(graph.TypeString), "body": graph.TypeAny,
	})}
	old := map[string]any{"status": 200.0, "headers": map[string]any{}, "body": "ok"}
	now := map[string]any{"status": 200.0, "headers": map[string]any{}, "body": "ok",
		"request": map[string]any{"method": "GET", "url": "http://h/", "headers": map[string]any{}}}
	for _, v := range []map[string]any{old, now} {
		if err := checkOutput(s, v, "output"); err != nil {
			t.Errorf("checkOutput(%v) = %v, want nil", v, err)
		}
	}
	bad := map[string]any{"status": "200", "headers": map[string]any{}, "body": "ok"}
	if err := checkOutput(s, bad, "output"); err == nil {
		t.Errorf("checkOutput(%v) = nil, want the status's type error", bad)
	}
	wrongReq := map[string]any{"status": 200.0, "headers": map[string]any{}, "body": "ok", "request": "GET"}
	if err := checkOutput(s, wrongReq, "output"); err == nil {
		t.Errorf("checkOutput(%v) = nil, want the request's type error", wrongReq)
	}
}
