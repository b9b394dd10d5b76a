package schedule

import (
	"time"
)

// InZone words an instant for people in a schedule's time zone, with UTC
// beside it: "2026-12-06 02:00 Europe/Berlin (01:00 UTC)", the UTC date
// too when it is another day; "2026-12-06 01:00 UTC" for a schedule in
// UTC. A zone that does not load (the schedule was checked when applied)
// leaves the UTC form.
func InZone(t time.Time, tz string) string {
	u := t.UTC()
	utc := u.Format("2006-01-02 15:04") + " UTC"
	if tz == "" || tz == "UTC" || tz == "Etc/UTC" {
		return utc
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return utc
	}
	l := t.In(loc)
	beside := u.Format("15:04") + " UTC"
	if l.Format("2006-01-02") != u.Format("2006-01-02") {
		beside = utc
	}
	return l.Format("2006-01-02 15:04") + " " + tz + " (" + beside + ")"
}
