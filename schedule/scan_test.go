package schedule

import (
	"fmt"
	"testing"
	"time"
)

// A slot of wall time W is the first instant at which the zone's wall
// clock reads W or later: that is the first occurrence of a repeated wall
// time, and the end of the gap for a skipped one. scanSlots computes the
// slots that way, minute by minute with the standard library's time.In,
// independently of the zone walk in instant; only the fields' matcher is
// shared.
func scanSlots(s *Spec, from, to time.Time) []time.Time {
	var out []time.Time
	wallOf := func(i time.Time) time.Time {
		l := i.In(s.loc)
		y, m, d := l.Date()
		return time.Date(y, m, d, l.Hour(), l.Minute(), 0, 0, time.UTC)
	}
	matches := func(w time.Time) bool {
		return s.month&(1<<uint(w.Month())) != 0 && s.dayMatches(w) &&
			s.hour&(1<<uint(w.Hour())) != 0 && s.minute&(1<<uint(w.Minute())) != 0
	}
	seen := wallOf(from) // the latest wall time the clock has read
	for i := from.Add(time.Minute); !i.After(to); i = i.Add(time.Minute) {
		w := wallOf(i)
		if !w.After(seen) {
			continue // a repeated wall time: its first occurrence was a slot
		}
		for v := seen.Add(time.Minute); !v.After(w); v = v.Add(time.Minute) {
			if matches(v) {
				out = append(out, i)
				break
			}
		}
		seen = w
	}
	return out
}

// TestSlotsMatchScan compares Slots with scanSlots around the transitions
// of zones with unusual rules: a 30-minute shift (Lord Howe), a skipped
// day (Apia, 2011-12-30), southern-hemisphere DST (Santiago), a
// double summer time (London, 1947), and no DST at all (Kolkata).
func TestSlotsMatchScan(t *testing.T) {
	windows := []struct {
		zone     string
		from, to string
	}{
		{"Australia/Lord_Howe", "2026-04-03T00:00:00Z", "2026-04-07T00:00:00Z"},
		{"Australia/Lord_Howe", "2026-10-02T00:00:00Z", "2026-10-06T00:00:00Z"},
		{"Pacific/Apia", "2011-12-27T00:00:00Z", "2012-01-02T00:00:00Z"},
		{"America/Santiago", "2026-04-03T00:00:00Z", "2026-04-07T00:00:00Z"},
		{"America/Santiago", "2026-09-04T00:00:00Z", "2026-09-08T00:00:00Z"},
		{"Europe/London", "1947-04-12T00:00:00Z", "1947-04-15T00:00:00Z"},
		{"Europe/London", "1947-08-08T00:00:00Z", "1947-08-12T00:00:00Z"},
		{"Asia/Kolkata", "2026-03-01T00:00:00Z", "2026-03-04T00:00:00Z"},
		{"America/New_York", "2026-10-30T00:00:00Z", "2026-11-03T00:00:00Z"},
		{"Europe/Berlin", "2026-03-27T00:00:00Z", "2026-03-31T00:00:00Z"},
	}
	crons := []string{"*/15 * * * *", "30 * * * *", "0 0 * * *", "0,45 1-3 * * *", "10 2 * * *", "*/7 0-4 * * 0,6", "0 12 30,31 12 *"}
	for _, w := range windows {
		for _, c := range crons {
			t.Run(fmt.Sprintf("%s/%s/%s", w.zone, w.from[:10], c), func(t *testing.T) {
				t.Parallel()
				s, err := Parse(Params{Cron: c, Timezone: w.zone})
				if err != nil {
					t.Fatal(err)
				}
				from, to := mustTime(t, w.from), mustTime(t, w.to)
				want := scanSlots(s, from, to)
				got, more := s.Slots(from, to, 100000)
				if more {
					t.Fatal("more slots than the window holds")
				}
				sameSlots(t, "slots", got, want)
				// Prev walks the same slots backwards.
				for k := len(got) - 1; k > 0; k-- {
					if p := s.Prev(got[k]); !p.Equal(got[k-1]) {
						t.Fatalf("Prev(%v) = %v, want %v", got[k].UTC(), p.UTC(), got[k-1].UTC())
					}
				}
			})
		}
	}
}
