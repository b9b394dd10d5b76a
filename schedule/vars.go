package schedule

import "time"

// Vars are the values of schedule.* in a schedule's inputs template.
type Vars struct {
	// Time is the slot as RFC 3339 in the schedule's zone, with its
	// offset: "2026-03-29T03:00:00+02:00".
	Time string
	// Date is the slot's date in the schedule's zone, YYYY-MM-DD.
	Date string
	// Name is the schedule's name.
	Name string
}

// Vars returns schedule.* for a slot of the schedule called name.
func (s *Spec) Vars(name string, slot time.Time) Vars {
	l := slot.In(s.loc)
	return Vars{Time: l.Format(time.RFC3339Nano), Date: l.Format(time.DateOnly), Name: name}
}

// RunKey is the key of a run a schedule starts when its workflow declares
// no key: the schedule's name and the slot in UTC,
// "schedule:nightly@2026-03-29T01:00:00Z". One slot, one key, whichever
// worker fires it.
func RunKey(name string, slot time.Time) string {
	return "schedule:" + name + "@" + slot.UTC().Format(time.RFC3339Nano)
}
