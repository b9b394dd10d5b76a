package schedule

import (
	"testing"
	"time"
)

func TestPlan(t *testing.T) {
	hourly, err := Parse(Params{Cron: "0 * * * *"})
	if err != nil {
		t.Fatal(err)
	}
	h := func(n int) time.Time { return time.Date(2026, 6, 1, n, 0, 0, 0, time.UTC) }
	hs := func(ns ...int) []time.Time {
		var out []time.Time
		for _, n := range ns {
			out = append(out, h(n))
		}
		return out
	}
	// Down from 01:00 (fired) to 05:20: 02:00, 03:00, 04:00, 05:00 are due.
	last, now := h(1), h(5).Add(20*time.Minute)
	cases := []struct {
		name      string
		p         Policy
		fire      []time.Time
		skip      []time.Time
		truncated bool
	}{
		{"latest", Policy{CatchUp: CatchUpLatest}, hs(5), hs(2, 3, 4), false},
		{"none, late", Policy{CatchUp: CatchUpNone, Grace: time.Minute}, nil, hs(2, 3, 4, 5), false},
		{"none, in grace", Policy{CatchUp: CatchUpNone, Grace: 30 * time.Minute}, hs(5), hs(2, 3, 4), false},
		{"all, max 2", Policy{CatchUp: CatchUpAll, Max: 2}, hs(4, 5), hs(2, 3), false},
		{"all, max 10", Policy{CatchUp: CatchUpAll, Max: 10}, hs(2, 3, 4, 5), nil, false},
		{"latest, skips listed 2", Policy{CatchUp: CatchUpLatest, MaxSkips: 2}, hs(5), hs(3, 4), true},
	}
	for _, c := range cases {
		p := hourly.Plan(last, now, c.p)
		sameSlots(t, c.name+" fire", p.Fire, c.fire)
		sameSlots(t, c.name+" skip", p.Skip, c.skip)
		if p.Truncated != c.truncated || !p.Next.Equal(h(6)) {
			t.Errorf("%s: truncated %v next %v", c.name, p.Truncated, p.Next)
		}
	}
	// Nothing due: the last slot was dealt with.
	if p := hourly.Plan(h(5), now, Policy{}); len(p.Fire)+len(p.Skip) != 0 || !p.Next.Equal(h(6)) {
		t.Errorf("nothing due: %+v", p)
	}
	// A slot exactly at now is due.
	if p := hourly.Plan(h(4), h(5), Policy{}); len(p.Fire) != 1 || !p.Fire[0].Equal(h(5)) {
		t.Errorf("slot at now: %+v", p)
	}
	// A year down with an every-second schedule costs only the listed slots.
	sec, _ := Parse(Params{Every: "1s"})
	p := sec.Plan(h(0).AddDate(-1, 0, 0), h(0), Policy{CatchUp: CatchUpAll, Max: 3, MaxSkips: 5})
	if len(p.Fire) != 3 || len(p.Skip) != 5 || !p.Truncated || !p.Fire[2].Equal(h(0)) || !p.Skip[4].Equal(h(0).Add(-3*time.Second)) {
		t.Errorf("a year of seconds: %+v", p)
	}
}

func TestJitter(t *testing.T) {
	slot := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	if Jitter("wf/a", slot, 0) != 0 || Jitter("wf/a", slot, time.Nanosecond) != 0 {
		t.Error("no jitter is not zero")
	}
	seen := map[time.Duration]bool{}
	for i := range 200 {
		s := slot.Add(time.Duration(i) * time.Minute)
		j := Jitter("wf/a", s, 30*time.Second)
		if j < 0 || j >= 30*time.Second || j%time.Microsecond != 0 {
			t.Fatalf("jitter %v out of [0, 30s) or finer than a microsecond", j)
		}
		if j != Jitter("wf/a", s, 30*time.Second) {
			t.Fatal("jitter is not a function of its arguments")
		}
		seen[j] = true
	}
	if len(seen) < 190 {
		t.Errorf("only %d distinct jitters of 200 slots", len(seen))
	}
	if Jitter("wf/a", slot, time.Hour) == Jitter("wf/b", slot, time.Hour) {
		t.Error("two schedules draw the same jitter for a slot")
	}
}

func TestPolicyParsing(t *testing.T) {
	if o, err := ParseOverlap(""); o != OverlapSkip || err != nil {
		t.Error("overlap default")
	}
	if _, err := ParseOverlap("replace"); err == nil {
		t.Error("overlap replace accepted")
	}
	if c, err := ParseCatchUp(""); c != CatchUpLatest || err != nil {
		t.Error("catch_up default")
	}
	if _, err := ParseCatchUp("some"); err == nil {
		t.Error("catch_up some accepted")
	}
	if _, err := CheckMaxCatchUp(CatchUpLatest, 5, true); err == nil {
		t.Error("max_catch_up without catch_up = all accepted")
	}
	if n, err := CheckMaxCatchUp(CatchUpAll, 0, false); n != DefaultMaxCatchUp || err != nil {
		t.Error("max_catch_up default")
	}
	if _, err := CheckMaxCatchUp(CatchUpAll, 0, true); err == nil {
		t.Error("max_catch_up 0 accepted")
	}
	if _, err := ParseJitter("-1s"); err == nil {
		t.Error("negative jitter accepted")
	}
}

func TestVarsAndRunKey(t *testing.T) {
	s, err := Parse(Params{Cron: "30 2 * * *", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	slot := s.Next(time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)) // the gap: 03:00 CEST
	if v := s.Vars("nightly", slot); v != (Vars{Time: "2026-03-29T03:00:00+02:00", Date: "2026-03-29", Name: "nightly"}) {
		t.Errorf("Vars = %+v", v)
	}
	// 00:30 UTC on 2026-10-25 is 02:30 CEST: the date is Berlin's.
	late := time.Date(2026, 10, 24, 23, 30, 0, 0, time.UTC)
	if v := s.Vars("nightly", late); v.Date != "2026-10-25" {
		t.Errorf("date of %v in Berlin = %s", late, v.Date)
	}
	if k := RunKey("nightly", slot); k != "schedule:nightly@2026-03-29T01:00:00Z" {
		t.Errorf("RunKey = %s", k)
	}
}
