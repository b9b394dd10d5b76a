package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name   string
		p      Params
		attr   string
		field  int
		offset int
		says   string
	}{
		{"four fields", Params{Cron: "0 2 * *"}, AttrCron, 0, 0, "has 4 fields; a cron expression has five"},
		{"six fields", Params{Cron: "0 0 2 * * *"}, AttrCron, 0, 0, "has 6 fields"},
		{"zone in the expression", Params{Cron: "CRON_TZ=UTC 0 2 * * *"}, AttrCron, 0, 0, "timezone attribute"},
		{"minute 60", Params{Cron: "60 2 * * *"}, AttrCron, 1, 0, "above maximum (59)"},
		{"hour 24", Params{Cron: "0  24 * * *"}, AttrCron, 2, 3, "hour is 0-23"},
		{"day 0", Params{Cron: "0 2 0 * *"}, AttrCron, 3, 4, "below minimum (1)"},
		{"month 13", Params{Cron: "0 2 * 13 *"}, AttrCron, 4, 6, "above maximum (12)"},
		{"day-of-week 7", Params{Cron: "0 2 * * 7"}, AttrCron, 5, 8, "0 is Sunday"},
		{"not a number", Params{Cron: "x 2 * * *"}, AttrCron, 1, 0, `"x"`},
		{"step 0", Params{Cron: "*/0 * * * *"}, AttrCron, 1, 0, "positive"},
		{"only a comma", Params{Cron: ", * * * *"}, AttrCron, 1, 0, "empty item in its list"},
		{"two commas", Params{Cron: "0 1,,5 * * *"}, AttrCron, 2, 2, "empty item in its list"},
		{"trailing comma", Params{Cron: "0 2 * * MON,"}, AttrCron, 5, 8, "empty item in its list"},
		{"30 February", Params{Cron: "0 0 30 2 *"}, AttrCron, 3, 4, `(day-of-month): "30": no month the expression names has such a day, so it would never fire`},
		{"unknown descriptor", Params{Cron: "@fortnightly"}, AttrCron, 0, 0, "unknown descriptor"},
		{"@every", Params{Cron: "@every 5m"}, AttrCron, 0, 0, `every = "15m"`},
		{"both", Params{Cron: "@daily", Every: "1h"}, AttrEvery, 0, 0, "not both"},
		{"neither", Params{}, AttrCron, 0, 0, "needs cron"},
		{"every under 1s", Params{Every: "500ms"}, AttrEvery, 0, 0, "shorter than the shortest interval, 1s"},
		{"every zero", Params{Every: "0s"}, AttrEvery, 0, 0, "shorter"},
		{"every negative", Params{Every: "-1m"}, AttrEvery, 0, 0, "shorter"},
		{"every not a duration", Params{Every: "1d"}, AttrEvery, 0, 0, "not a duration"},
		{"every fraction", Params{Every: "1.5s"}, AttrEvery, 0, 0, "whole number of seconds"},
		{"unknown zone", Params{Cron: "@daily", Timezone: "Europe/Berlln"}, AttrTimezone, 0, 0, `unknown time zone "Europe/Berlln"`},
		{"Local", Params{Cron: "@daily", Timezone: "Local"}, AttrTimezone, 0, 0, "not an IANA time zone name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.p)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%+v) = %v, want an *Error", c.p, err)
			}
			if e.Attr != c.attr || e.Field != c.field || e.Offset != c.offset || !strings.Contains(e.Error(), c.says) {
				t.Fatalf("Parse(%+v) = %+v (%q), want attr %s field %d offset %d saying %q", c.p, e, e.Error(), c.attr, c.field, c.offset, c.says)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	for _, p := range []Params{
		{Cron: "0 2 * * *", Timezone: "Europe/Berlin"},
		{Cron: "@hourly"}, {Cron: "@daily"}, {Cron: "@weekly"}, {Cron: "@monthly"}, {Cron: "@yearly"},
		{Cron: "*/5 9-17 * JAN-MAR MON-FRI", Timezone: "America/New_York"},
		{Cron: "0 0 29 2 *"},
		{Cron: "0 0 31 2 1"}, // day 31 never comes in February, but Mondays do
		{Every: "1s"}, {Every: "15m", Timezone: "Asia/Kolkata"},
	} {
		s, err := Parse(p)
		if err != nil {
			t.Errorf("Parse(%+v): %v", p, err)
			continue
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if n := s.Next(from); !n.After(from) {
			t.Errorf("%v: Next(%v) = %v", s, from, n)
		}
	}
}

func TestDescriptorsMatchTheirFields(t *testing.T) {
	from := time.Date(2026, 5, 17, 13, 7, 0, 0, time.UTC)
	for _, d := range Descriptors {
		a, err1 := Parse(Params{Cron: d.Name, Timezone: "Europe/Berlin"})
		b, err2 := Parse(Params{Cron: d.Fields, Timezone: "Europe/Berlin"})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		sa, _ := a.Slots(from, from.AddDate(2, 0, 0), 50)
		sb, _ := b.Slots(from, from.AddDate(2, 0, 0), 50)
		sameSlots(t, d.Name, sa, sb)
	}
}

// FuzzParse: no input panics; a spec that parses has slots that increase,
// each after the instant asked from, and Prev undoes Next.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0 2 * * *", "*/7 1-5 1,15 * MON-FRI", "@daily", "60 * * * *", "0 0 31 2 *", "1-59/3 */2 ? * ?", "5 4 * * SUN"} {
		f.Add(s, "Europe/Berlin", int64(1774746000))
	}
	f.Add("", "America/New_York", int64(0))
	f.Fuzz(func(t *testing.T, cron, zone string, at int64) {
		s, err := Parse(Params{Cron: cron, Timezone: zone})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Message == "" {
				t.Fatalf("Parse(%q, %q) = %v, not an *Error with a message", cron, zone, err)
			}
			return
		}
		after := time.Unix(at%(1<<33), 0) // within a few centuries of 1970
		for range 5 {
			n := s.Next(after)
			if n.IsZero() {
				t.Fatalf("%v: no slot after %v", s, after)
			}
			if !n.After(after) {
				t.Fatalf("%v: Next(%v) = %v is not later", s, after, n)
			}
			if p := s.Prev(n.Add(time.Nanosecond)); !p.Equal(n) {
				t.Fatalf("%v: Prev(Next(%v)+1ns) = %v, want %v", s, after, p, n)
			}
			after = n
		}
	})
}
