package schedule

import "time"

// DefaultMaxSkips is how many skipped slots a Plan lists when its Policy
// does not say.
const DefaultMaxSkips = 100

// Policy is what Plan needs of a schedule's catch-up attributes.
type Policy struct {
	CatchUp CatchUp
	// Max is max_catch_up: with CatchUpAll, at most this many slots fire,
	// the latest ones (<= 0: DefaultMaxCatchUp).
	Max int
	// Grace is how late a slot may be found and still count as on time:
	// with CatchUpNone the latest due slot fires only when now is at most
	// Grace after it. The engine sets it to its polling delay and margin.
	Grace time.Duration
	// MaxSkips bounds how many skipped slots the plan lists (<= 0:
	// DefaultMaxSkips); the most recent ones are listed.
	MaxSkips int
}

// Plan is what a scheduler does at now with a schedule whose slots up to
// after are dealt with (fired or recorded skipped): the slots in
// (after, now] are due.
type Plan struct {
	// Fire are the slots to start runs for, oldest first.
	Fire []time.Time
	// Skip are due slots not fired, to record as skipped (reason
	// "catch_up"), oldest first: the most recent of them, at most
	// Policy.MaxSkips.
	Skip []time.Time
	// Truncated says that there are more skipped slots, between after and
	// the first of Skip (or of Fire), than Skip lists.
	Truncated bool
	// Next is the first slot after now: the schedule's next_at.
	Next time.Time
}

// Plan decides which due slots fire under the policy:
//
//   - CatchUpLatest: the latest due slot fires, however late; the others
//     are skipped.
//   - CatchUpNone: the latest due slot fires if it is at most Grace old;
//     every other due slot is skipped.
//   - CatchUpAll: the latest Max due slots fire, oldest first; older ones
//     are skipped.
//
// after is the last slot dealt with, or, for a schedule that has none or
// was changed, resumed or activated since, the instant that happened (its
// slots up to then are not due). Plan reads only the slots it returns and
// one more, however long the schedule went unfired.
func (s *Spec) Plan(after, now time.Time, p Policy) Plan {
	plan := Plan{Next: s.Next(now)}
	maxSkips := p.MaxSkips
	if maxSkips <= 0 {
		maxSkips = DefaultMaxSkips
	}
	latest := s.Prev(now.Add(time.Nanosecond))
	if latest.IsZero() || !latest.After(after) {
		return plan
	}
	fire := 1
	switch p.CatchUp {
	case CatchUpNone:
		if now.Sub(latest) > p.Grace {
			fire = 0
		}
	case CatchUpAll:
		fire = p.Max
		if fire <= 0 {
			fire = DefaultMaxCatchUp
		}
	}
	// The due slots, newest first: those that fire, those listed as
	// skipped, and one more to tell whether the list is whole.
	var due []time.Time
	for t := latest; !t.IsZero() && t.After(after) && len(due) <= fire+maxSkips; t = s.Prev(t) {
		due = append(due, t)
	}
	if len(due) > fire+maxSkips {
		due, plan.Truncated = due[:fire+maxSkips], true
	}
	n := min(fire, len(due))
	plan.Fire = reversed(due[:n])
	plan.Skip = reversed(due[n:])
	return plan
}

func reversed(ts []time.Time) []time.Time {
	if len(ts) == 0 {
		return nil
	}
	out := make([]time.Time, len(ts))
	for i, t := range ts {
		out[len(ts)-1-i] = t
	}
	return out
}
