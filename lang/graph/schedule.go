package graph

import (
	"fmt"
	"strings"
)

// Schedule is a schedule block: when the workflow starts runs by itself
// (spec/semantics.md §18). Its spec is kept as written; package schedule
// parses it. A schedule does not change the step graph: adding, removing
// or changing one is a PATCH (see Diff).
//
//graph:gen diff=parts
type Schedule struct {
	Name string `json:"name" graph:"diff=-"`
	// Exactly one of Cron (five fields or a descriptor) and Every (a
	// duration) is set.
	Cron  string `json:"cron,omitempty" graph:"diff=fn:scheduleTiming"`
	Every string `json:"every,omitempty" graph:"diff=with:Cron"`
	// Timezone is an IANA name; "" is UTC.
	Timezone string `json:"timezone,omitempty" graph:"diff=or:timezone:UTC"`
	// Inputs is the object of the inputs of the runs it starts, with
	// schedule.time, schedule.date and schedule.name in scope; nil: none.
	Inputs *Value `json:"inputs,omitempty" graph:"slot=schedule,diff=same:inputs"`
	// Overlap is skip, queue, cancel_previous or allow; CatchUp none,
	// latest or all; MaxCatchUp is set only with CatchUp all.
	Overlap    string `json:"overlap" graph:"diff=overlap"`
	CatchUp    string `json:"catch_up" graph:"diff=fn:scheduleCatchUpPart"`
	MaxCatchUp int    `json:"max_catch_up,omitempty" graph:"diff=with:CatchUp"`
	// JitterMS is the longest random delay of a fire's run (0: none).
	JitterMS int64 `json:"jitter_ms,omitempty" graph:"diff=ms:jitter"`
}

// Schedule policies as the graph stores them.
var (
	ScheduleOverlaps = []string{"skip", "queue", "cancel_previous", "allow"}
	ScheduleCatchUps = []string{"none", "latest", "all"}
)

func (v *encValidator) schedule(names map[string]bool, s Schedule) {
	where := encNamed("schedule", s.Name)
	v.unique(names, "schedule", s.Name)
	if (s.Cron == "") == (s.Every == "") {
		v.add("%s: exactly one of cron and every must be set", where)
	}
	v.oneOf(where, "overlap", s.Overlap, ScheduleOverlaps...)
	v.oneOf(where, "catch_up", s.CatchUp, ScheduleCatchUps...)
	if s.MaxCatchUp < 0 || (s.MaxCatchUp > 0 && s.CatchUp != "all") {
		v.add("%s: max_catch_up %d is not valid with catch_up %q", where, s.MaxCatchUp, s.CatchUp)
	}
	if s.JitterMS < 0 {
		v.add("%s: jitter_ms %d is negative", where, s.JitterMS)
	}
	if s.Inputs != nil {
		v.value(where, s.Inputs)
	}
}

// schedules compares the schedules of two versions: every change is a
// PATCH, named by what changed.
func (d *differ) schedules(_ string, o, n []Schedule) {
	diffNamed(d, o, n, func(s Schedule) string { return s.Name }, "schedule", func(path string, a, b Schedule) {
		if parts := scheduleParts(&a, &b); len(parts) > 0 {
			d.add(path, BumpPatch, "changed (%s)", strings.Join(parts, ", "))
		}
	}, BumpPatch, func(s Schedule) (string, Bump) {
		return "added (" + scheduleSpec(s) + ")", BumpPatch
	})
}

// scheduleTiming is the part of a schedule's change its cron or every
// makes.
func scheduleTiming(o, n *Schedule) (string, bool) {
	if o.Cron == n.Cron && o.Every == n.Every {
		return "", false
	}
	return scheduleSpec(*o) + " → " + scheduleSpec(*n), true
}

// scheduleCatchUpPart is the part of a schedule's change its catch_up or
// max_catch_up makes.
func scheduleCatchUpPart(o, n *Schedule) (string, bool) {
	if o.CatchUp == n.CatchUp && o.MaxCatchUp == n.MaxCatchUp {
		return "", false
	}
	return "catch_up " + scheduleCatchUp(*o) + " → " + scheduleCatchUp(*n), true
}

// scheduleSpec renders a schedule's timing: `cron "0 2 * * *"` or
// `every "15m"`.
func scheduleSpec(s Schedule) string {
	if s.Every != "" {
		return fmt.Sprintf("every %q", s.Every)
	}
	return fmt.Sprintf("cron %q", s.Cron)
}

func scheduleCatchUp(s Schedule) string {
	if s.MaxCatchUp > 0 {
		return fmt.Sprintf("%s (max %d)", s.CatchUp, s.MaxCatchUp)
	}
	return s.CatchUp
}
