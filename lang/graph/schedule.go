package graph

import (
	"fmt"
	"strings"
)

// Schedule is a schedule block: when the workflow starts runs by itself
// (spec/semantics.md §18). Its spec is kept as written; package schedule
// parses it. A schedule does not change the step graph: adding, removing
// or changing one is a PATCH (see Diff).
type Schedule struct {
	Name string `json:"name"`
	// Exactly one of Cron (five fields or a descriptor) and Every (a
	// duration) is set.
	Cron  string `json:"cron,omitempty"`
	Every string `json:"every,omitempty"`
	// Timezone is an IANA name; "" is UTC.
	Timezone string `json:"timezone,omitempty"`
	// Inputs is the object of the inputs of the runs it starts, with
	// schedule.time, schedule.date and schedule.name in scope; nil: none.
	Inputs *Value `json:"inputs,omitempty"`
	// Overlap is skip, queue, cancel_previous or allow; CatchUp none,
	// latest or all; MaxCatchUp is set only with CatchUp all.
	Overlap    string `json:"overlap"`
	CatchUp    string `json:"catch_up"`
	MaxCatchUp int    `json:"max_catch_up,omitempty"`
	// JitterMS is the longest random delay of a fire's run (0: none).
	JitterMS int64 `json:"jitter_ms,omitempty"`
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
func (d *differ) schedules() {
	diffNamed(d, d.old.Schedules, d.new.Schedules, func(s Schedule) string { return s.Name }, "schedule", func(path string, a, b Schedule) {
		var parts []string
		if a.Cron != b.Cron || a.Every != b.Every {
			parts = append(parts, scheduleSpec(a)+" → "+scheduleSpec(b))
		}
		if a.Timezone != b.Timezone {
			parts = append(parts, "timezone "+diffOr(a.Timezone, "UTC")+" → "+diffOr(b.Timezone, "UTC"))
		}
		if !diffSame(a.Inputs, b.Inputs) {
			parts = append(parts, "inputs")
		}
		if a.Overlap != b.Overlap {
			parts = append(parts, "overlap "+a.Overlap+" → "+b.Overlap)
		}
		if a.CatchUp != b.CatchUp || a.MaxCatchUp != b.MaxCatchUp {
			parts = append(parts, "catch_up "+scheduleCatchUp(a)+" → "+scheduleCatchUp(b))
		}
		if a.JitterMS != b.JitterMS {
			parts = append(parts, "jitter "+diffMS(a.JitterMS)+" → "+diffMS(b.JitterMS))
		}
		if len(parts) > 0 {
			d.add(path, BumpPatch, "changed (%s)", strings.Join(parts, ", "))
		}
	}, BumpPatch, func(s Schedule) (string, Bump) {
		return "added (" + scheduleSpec(s) + ")", BumpPatch
	})
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
