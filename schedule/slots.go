package schedule

import "time"

// A slot is an instant a schedule fires at. Slots are instants, not wall
// times: the wall times of a cron expression map to instants in the
// schedule's zone by these rules (spec/semantics.md, "Schedules"):
//
//   - a wall time that occurs once is its instant;
//   - a wall time that occurs twice (a fall-back repeats it) is its first
//     occurrence only;
//   - a wall time that never occurs (a spring-forward skips it) is the
//     first instant after the gap, the instant of the transition; several
//     wall times of one gap are that one slot.
//
// This mapping never decreases as the wall time grows, so slots come in
// the order of their wall times. Every slots are the multiples of the
// interval since the Unix epoch, whatever the zone.

// searchYears bounds the search for a cron slot: every valid spec has a
// slot in any eight years (a 29 February may be that far away).
const searchYears = 10

// window is how far from an instant the zones that may decide a slot near
// it are looked for (beyond it every wall time is too far to matter; see
// Next).
const window = 72 * time.Hour

// Next returns the first slot after after. It returns the zero time only
// for an instant so close to the end of time that no slot follows.
func (s *Spec) Next(after time.Time) time.Time {
	if s.kind == KindEvery {
		iv := int64(s.every / time.Second)
		q := floorDiv(after.Unix(), iv)
		return time.Unix((q+1)*iv, 0).In(s.loc)
	}
	// A slot f(W) > after has its wall time W > after + the smallest UTC
	// offset in force between after and after+window (and any slot later
	// than that has a wall time far beyond it), so the walk may start
	// there.
	lo, _ := offsetRange(s.loc, after, after.Add(window))
	w, ok := s.nextWall(time.Unix(after.Unix()+int64(lo), 0).UTC())
	for ok {
		if i := s.instant(w); i.After(after) {
			return i
		}
		w, ok = s.nextWall(w.Add(time.Minute))
	}
	return time.Time{}
}

// Prev returns the last slot before before (strictly); the zero time when
// there is none in the searchYears before it.
func (s *Spec) Prev(before time.Time) time.Time {
	if s.kind == KindEvery {
		iv := int64(s.every / time.Second)
		q := floorDiv(before.Unix(), iv)
		if q*iv == before.Unix() && before.Nanosecond() == 0 {
			q--
		}
		return time.Unix(q*iv, 0).In(s.loc)
	}
	_, hi := offsetRange(s.loc, before.Add(-window), before)
	w, ok := s.prevWall(time.Unix(before.Unix()+int64(hi)+1, 0).UTC())
	for ok {
		if i := s.instant(w); i.Before(before) {
			return i
		}
		w, ok = s.prevWall(w.Add(-time.Minute))
	}
	return time.Time{}
}

// Slots returns the slots in (after, until], oldest first, at most limit
// of them (the oldest ones); more says whether there are others.
func (s *Spec) Slots(after, until time.Time, limit int) (slots []time.Time, more bool) {
	for t := s.Next(after); !t.IsZero() && !t.After(until); t = s.Next(t) {
		if len(slots) == limit {
			return slots, true
		}
		slots = append(slots, t)
	}
	return slots, false
}

// Date is a slot's date in the schedule's zone, YYYY-MM-DD (schedule.date).
func (s *Spec) Date(slot time.Time) string { return slot.In(s.loc).Format(time.DateOnly) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Wall times are handled as times in UTC whose fields are the wall clock's
// (a calendar without offsets), to the minute.

// nextWall returns the first wall time at or after w that the fields match.
func (s *Spec) nextWall(w time.Time) (time.Time, bool) {
	if t := w.Truncate(time.Minute); t.Before(w) {
		w = t.Add(time.Minute)
	} else {
		w = t
	}
	limit := w.AddDate(searchYears, 0, 0)
	for w.Before(limit) {
		y, m, d := w.Date()
		switch {
		case s.month&(1<<uint(m)) == 0:
			w = time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
		case !s.dayMatches(w):
			w = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
		case s.hour&(1<<uint(w.Hour())) == 0:
			w = w.Truncate(time.Hour).Add(time.Hour)
		case s.minute&(1<<uint(w.Minute())) == 0:
			w = w.Add(time.Minute)
		default:
			return w, true
		}
	}
	return time.Time{}, false
}

// prevWall returns the last wall time at or before w that the fields
// match.
func (s *Spec) prevWall(w time.Time) (time.Time, bool) {
	w = w.Truncate(time.Minute)
	limit := w.AddDate(-searchYears, 0, 0)
	for !w.Before(limit) {
		y, m, d := w.Date()
		switch {
		case s.month&(1<<uint(m)) == 0:
			w = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case !s.dayMatches(w):
			w = time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Add(-time.Minute)
		case s.hour&(1<<uint(w.Hour())) == 0:
			w = w.Truncate(time.Hour).Add(-time.Minute)
		case s.minute&(1<<uint(w.Minute())) == 0:
			w = w.Add(-time.Minute)
		default:
			return w, true
		}
	}
	return time.Time{}, false
}

// dayMatches is cron's day rule: when either day field is "*", a day must
// match both; otherwise either.
func (s *Spec) dayMatches(w time.Time) bool {
	dom := s.dom&(1<<uint(w.Day())) != 0
	dow := s.dow&(1<<uint(w.Weekday())) != 0
	if s.domStar || s.dowStar {
		return dom && dow
	}
	return dom || dow
}

// instant maps a wall time to its slot by the rules above.
func (s *Spec) instant(w time.Time) time.Time {
	u := w.Unix()
	type zone struct {
		off        int64
		start, end int64 // [start, end); math bounds for an open end
	}
	var zones []zone
	for t := time.Unix(u-15*3600, 0).In(s.loc); ; {
		_, off := t.Zone()
		zs, ze := t.ZoneBounds()
		z := zone{off: int64(off), start: minInt, end: maxInt}
		if !zs.IsZero() {
			z.start = zs.Unix()
		}
		if !ze.IsZero() {
			z.end = ze.Unix()
		}
		zones = append(zones, z)
		if ze.IsZero() || z.end > u+15*3600 {
			break
		}
		t = ze.In(s.loc)
	}
	// The first zone in which the wall time occurs gives its first
	// occurrence (the zones are in time order).
	for _, z := range zones {
		if i := u - z.off; i >= z.start && i < z.end {
			return time.Unix(i, 0).In(s.loc)
		}
	}
	// A gap: the wall clock jumped over w at the boundary of two zones.
	for k := 1; k < len(zones); k++ {
		t := zones[k].start
		if t+zones[k-1].off <= u && u < t+zones[k].off {
			return time.Unix(t, 0).In(s.loc)
		}
	}
	// Not reached for a zone database whose zones tile time.
	_, off := time.Unix(u, 0).In(s.loc).Zone()
	return time.Unix(u-int64(off), 0).In(s.loc)
}

const (
	minInt = -1 << 63
	maxInt = 1<<63 - 1
)

// offsetRange returns the smallest and largest UTC offset, in seconds, in
// force at some instant of [from, to].
func offsetRange(loc *time.Location, from, to time.Time) (lo, hi int) {
	t := from.In(loc)
	_, lo = t.Zone()
	hi = lo
	for {
		_, ze := t.ZoneBounds()
		if ze.IsZero() || ze.After(to) {
			return lo, hi
		}
		t = ze.In(loc)
		_, off := t.Zone()
		lo, hi = min(lo, off), max(hi, off)
	}
}
