package schedule

import (
	"fmt"
	"testing"
	"time"
)

// zoneRules are a zone's 2026 offsets and switches, written out by hand
// from the published rules (EU: last Sunday of March and October at 01:00
// UTC; US: second Sunday of March and first Sunday of November at 02:00
// local), so the reference below does not depend on the zone database or
// on the code under test.
type zoneRules struct {
	name     string
	std, dst int        // UTC offsets in hours
	gapDay   time.Month // month of the spring-forward
	gapDate  int
	gapHour  int // the wall hour that is skipped
	backDay  time.Month
	backDate int
	backHour int // the wall hour that is repeated
}

var zones2026 = []zoneRules{
	{name: "Europe/Berlin", std: 1, dst: 2, gapDay: time.March, gapDate: 29, gapHour: 2, backDay: time.October, backDate: 25, backHour: 2},
	{name: "America/New_York", std: -5, dst: -4, gapDay: time.March, gapDate: 8, gapHour: 2, backDay: time.November, backDate: 1, backHour: 1},
}

// refInstant maps a 2026 wall time to its slot by the rules of
// spec/semantics.md with plain arithmetic on the offsets above.
func (z zoneRules) refInstant(m time.Month, d, h, min int) time.Time {
	utc := func(off int) time.Time { return time.Date(2026, m, d, h-off, min, 0, 0, time.UTC) }
	day := func(mm time.Month, dd int) int { return int(mm)*100 + dd }
	today := day(m, d)
	switch {
	case today < day(z.gapDay, z.gapDate), today == day(z.gapDay, z.gapDate) && h < z.gapHour:
		return utc(z.std)
	case today == day(z.gapDay, z.gapDate) && h == z.gapHour:
		// Skipped: the first instant after the gap, (gapHour+1):00 summer time.
		return time.Date(2026, m, d, z.gapHour+1-z.dst, 0, 0, 0, time.UTC)
	case today < day(z.backDay, z.backDate), today == day(z.backDay, z.backDate) && h <= z.backHour:
		return utc(z.dst) // on the fall-back day the repeated hour's first occurrence
	default:
		return utc(z.std)
	}
}

// refSlots lists the slots of the 2026 wall times that match, in wall
// order, the wall times of one gap merged into one slot.
func (z zoneRules) refSlots(match func(t time.Time) bool) []time.Time {
	var out []time.Time
	for w := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); w.Year() == 2026; w = w.Add(time.Minute) {
		if !match(w) {
			continue
		}
		i := z.refInstant(w.Month(), w.Day(), w.Hour(), w.Minute())
		if n := len(out); n > 0 && !i.After(out[n-1]) {
			if i.Equal(out[n-1]) {
				continue
			}
			panic(fmt.Sprintf("reference slots go back in time at %v", w))
		}
		out = append(out, i)
	}
	return out
}

// yearCases are cron expressions with a hand-written matcher of the wall
// time (a time in UTC whose fields are the wall clock's).
var yearCases = []struct {
	cron  string
	match func(w time.Time) bool
}{
	{"30 2 * * *", func(w time.Time) bool { return w.Hour() == 2 && w.Minute() == 30 }},
	{"30 1 * * *", func(w time.Time) bool { return w.Hour() == 1 && w.Minute() == 30 }},
	{"0 * * * *", func(w time.Time) bool { return w.Minute() == 0 }},
	{"*/20 1-3 * * *", func(w time.Time) bool { return w.Minute()%20 == 0 && w.Hour() >= 1 && w.Hour() <= 3 }},
	{"0 9 * * 1-5", func(w time.Time) bool {
		return w.Minute() == 0 && w.Hour() == 9 && w.Weekday() >= 1 && w.Weekday() <= 5
	}},
	{"15 2 1,15 * 0", func(w time.Time) bool { // day-of-month OR day-of-week
		return w.Minute() == 15 && w.Hour() == 2 && (w.Day() == 1 || w.Day() == 15 || w.Weekday() == 0)
	}},
	{"@daily", func(w time.Time) bool { return w.Hour() == 0 && w.Minute() == 0 }},
}

// yearBounds are the instants of the wall times 2026-01-01 00:00 and
// 2027-01-01 00:00 in the zone (standard time at both ends).
func (z zoneRules) yearBounds() (from, to time.Time) {
	return time.Date(2026, 1, 1, -z.std, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, -z.std, 0, 0, 0, time.UTC)
}

// TestYearMatchesReference drives a fake clock through 2026 in both zones
// with irregular steps, fires what Plan says (catch_up = all), and
// compares the fired slots with the reference list. Next and Slots are
// checked against the same list.
func TestYearMatchesReference(t *testing.T) {
	for _, z := range zones2026 {
		for _, c := range yearCases {
			t.Run(z.name+"/"+c.cron, func(t *testing.T) {
				t.Parallel()
				spec, err := Parse(Params{Cron: c.cron, Timezone: z.name})
				if err != nil {
					t.Fatal(err)
				}
				from, to := z.yearBounds()
				want := z.refSlots(c.match)
				if len(want) == 0 {
					t.Fatal("empty reference")
				}
				// The clock: steps of 1 to 97 minutes, never landing on
				// whole hours for long.
				var fired []time.Time
				after := from.Add(-time.Nanosecond)
				steps := []time.Duration{7 * time.Minute, 13 * time.Minute, time.Minute, 97 * time.Minute, 41 * time.Minute}
				for i, now := 0, from; now.Before(to.Add(2 * time.Hour)); i++ {
					p := spec.Plan(after, now, Policy{CatchUp: CatchUpAll, Max: 1000})
					if len(p.Skip) > 0 || p.Truncated {
						t.Fatalf("at %v: skipped %v with catch_up all", now, p.Skip)
					}
					if !p.Next.After(now) {
						t.Fatalf("at %v: next %v is not after now", now, p.Next)
					}
					fired = append(fired, p.Fire...)
					if n := len(p.Fire); n > 0 {
						after = p.Fire[n-1]
					}
					now = now.Add(steps[i%len(steps)])
				}
				var inYear []time.Time
				for _, f := range fired {
					if f.Before(to) {
						inYear = append(inYear, f)
					}
				}
				sameSlots(t, "fired", inYear, want)

				slots, more := spec.Slots(from.Add(-time.Nanosecond), to.Add(-time.Nanosecond), len(want)+1)
				if more {
					t.Fatal("Slots says there are more")
				}
				sameSlots(t, "Slots", slots, want)
			})
		}
	}
}

// TestYearLatest steps the clock by 5 hours 11 minutes through 2026 with
// catch_up = latest: at each step the latest due slot fires and the other
// due ones are skipped, as the reference list says.
func TestYearLatest(t *testing.T) {
	for _, z := range zones2026 {
		t.Run(z.name, func(t *testing.T) {
			t.Parallel()
			spec, err := Parse(Params{Cron: "*/20 1-3 * * *", Timezone: z.name})
			if err != nil {
				t.Fatal(err)
			}
			ref := z.refSlots(yearCases[3].match)
			from, to := z.yearBounds()
			after := from
			k := 0 // ref[k] is the first reference slot after `after`
			for now := from.Add(5*time.Hour + 11*time.Minute); now.Before(to); now = now.Add(5*time.Hour + 11*time.Minute) {
				var due []time.Time
				for k < len(ref) && !ref[k].After(now) {
					due = append(due, ref[k])
					k++
				}
				p := spec.Plan(after, now, Policy{CatchUp: CatchUpLatest})
				if len(due) == 0 {
					if len(p.Fire)+len(p.Skip) > 0 {
						t.Fatalf("at %v: plan %+v, want nothing due", now, p)
					}
					continue
				}
				sameSlots(t, fmt.Sprintf("fired at %v", now), p.Fire, due[len(due)-1:])
				sameSlots(t, fmt.Sprintf("skipped at %v", now), p.Skip, due[:len(due)-1])
				after = due[len(due)-1]
			}
		})
	}
}

// TestDSTExamples spells out the rules on the switch days.
func TestDSTExamples(t *testing.T) {
	cases := []struct {
		zone, cron, after string
		want              []string // UTC
	}{
		// Berlin springs forward at 02:00 CET: 02:30 does not exist and
		// fires at 03:00 CEST, 01:00 UTC.
		{"Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00Z", []string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		// Berlin falls back at 03:00 CEST: 02:30 happens twice and fires
		// at the first, 02:30 CEST.
		{"Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00Z", []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// The wall times of a gap are one slot; the hour after it fires
		// once at its start.
		{"Europe/Berlin", "*/30 * * * *", "2026-03-29T00:15:00Z", []string{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}},
		// The repeated hour fires once: 01:00 and 01:30 EDT, then 02:00 EST.
		{"America/New_York", "*/30 * * * *", "2026-11-01T04:45:00Z", []string{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z"}},
		// New York's spring-forward skips 02:xx: 02:30 fires at 03:00 EDT.
		{"America/New_York", "30 2 * * *", "2026-03-07T12:00:00Z", []string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		// Asking from inside the repeated hour: its second occurrence is no slot.
		{"America/New_York", "30 1 * * *", "2026-11-01T06:10:00Z", []string{"2026-11-02T06:30:00Z"}},
	}
	for _, c := range cases {
		spec, err := Parse(Params{Cron: c.cron, Timezone: c.zone})
		if err != nil {
			t.Fatal(err)
		}
		at := mustTime(t, c.after)
		for _, w := range c.want {
			at = spec.Next(at)
			if !at.Equal(mustTime(t, w)) {
				t.Errorf("%s %q: got %v, want %s", c.zone, c.cron, at.UTC(), w)
				break
			}
			if p := spec.Prev(at.Add(time.Second)); !p.Equal(at) {
				t.Errorf("%s %q: Prev(%v+1s) = %v", c.zone, c.cron, at.UTC(), p.UTC())
			}
		}
	}
}

func TestEverySlotsAreEpochMultiples(t *testing.T) {
	for _, every := range []string{"1s", "7s", "15m", "1h30m", "25h"} {
		spec, err := Parse(Params{Every: every, Timezone: "America/New_York"})
		if err != nil {
			t.Fatal(err)
		}
		iv := int64(spec.Every() / time.Second)
		for _, s := range []string{"2026-03-08T06:59:59.5Z", "2026-11-01T05:00:00Z", "1969-12-31T23:59:58Z", "2026-01-01T00:00:00Z"} {
			after := mustTime(t, s)
			n := spec.Next(after)
			if n.Unix()%iv != 0 || n.Nanosecond() != 0 || !n.After(after) || n.Sub(after) > spec.Every() {
				t.Errorf("every %s: Next(%s) = %v", every, s, n.UTC())
			}
			// Brute force: the first multiple after `after`, second by second.
			want := after.Truncate(time.Second)
			for want = want.Add(time.Second); want.Unix()%iv != 0; want = want.Add(time.Second) {
			}
			if iv < 100000 && !n.Equal(want) {
				t.Errorf("every %s: Next(%s) = %v, want %v", every, s, n.UTC(), want.UTC())
			}
			if p := spec.Prev(n); !p.Equal(n.Add(-spec.Every())) {
				t.Errorf("every %s: Prev(%v) = %v", every, n.UTC(), p.UTC())
			}
		}
	}
}

func sameSlots(t *testing.T, what string, got, want []time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d slots, want %d\n%s", what, len(got), len(want), firstDiff(got, want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			t.Fatalf("%s: %s", what, firstDiff(got, want))
		}
	}
}

func firstDiff(got, want []time.Time) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if !got[i].Equal(want[i]) {
			return fmt.Sprintf("slot %d is %v, want %v", i, got[i].UTC(), want[i].UTC())
		}
	}
	return fmt.Sprintf("the lists agree for %d slots", min(len(got), len(want)))
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
