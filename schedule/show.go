package schedule

import (
	"time"
)

// InZone words an instant for people in a schedule's time zone, with UTC
// beside it: "2026-12-06 02:00 Europe/Berlin (01:00 UTC)", the UTC date
// too when it is another day; "2026-12-06 01:00 UTC" for a schedule in
// UTC. A zone that does not load (the schedule was checked when applied)
// leaves the UTC form.
//
// The seconds are written when the instant has any (an every = "90s"
// schedule's slots, a manual trigger's instant), so three fires of an
// every = "20s" schedule never read as one minute three times.
func InZone(t time.Time, tz string) string {
	return inZone(t, tz, hasSeconds(t))
}

// AllInZone words instants as InZone does, all with their seconds when
// one has any: a schedule's next fires read alike ("10:00:30, 10:01:00").
func AllInZone(ts []time.Time, tz string) []string {
	secs := false
	for _, t := range ts {
		secs = secs || hasSeconds(t)
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = inZone(t, tz, secs)
	}
	return out
}

func hasSeconds(t time.Time) bool {
	return t.Second() != 0 || t.Nanosecond() != 0
}

func inZone(t time.Time, tz string, secs bool) string {
	u := t.UTC()
	clock := "15:04"
	if secs {
		clock = "15:04:05"
	}
	utc := u.Format("2006-01-02 "+clock) + " UTC"
	if tz == "" || tz == "UTC" || tz == "Etc/UTC" {
		return utc
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return utc
	}
	l := t.In(loc)
	beside := u.Format(clock) + " UTC"
	if l.Format("2006-01-02") != u.Format("2006-01-02") {
		beside = utc
	}
	return l.Format("2006-01-02 "+clock) + " " + tz + " (" + beside + ")"
}
