package lang

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/schedule"
	"github.com/hashicorp/hcl/v2"
)

// This file decodes and compiles a workflow's schedule blocks
// (spec/semantics.md §18): the timing is checked by package schedule,
// whose errors are placed at the attribute (and, for a cron field, at the
// field inside the string); the inputs are checked against the workflow's
// inputs as a child workflow's are, with schedule.time, schedule.date and
// schedule.name in scope.

// scheduleDecl is a decoded schedule block.
type scheduleDecl struct {
	graph.Schedule
	NameRange hcl.Range
	DeclRange hcl.Range
	Inputs    *dataNode
}

var scheduleSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "cron"}, {Name: "every"}, {Name: "timezone"}, {Name: "inputs"},
		{Name: "overlap"}, {Name: "catch_up"}, {Name: "max_catch_up"}, {Name: "jitter"},
	},
}

// decodeScheduleBlock decodes schedule "NAME" { ... }. The Schedule holds
// what could be decoded.
func decodeScheduleBlock(block *hcl.Block, sm *SourceMap) (*scheduleDecl, hcl.Diagnostics) {
	s := &scheduleDecl{NameRange: block.LabelRanges[0], DeclRange: block.DefRange}
	s.Name = block.Labels[0]
	path := "schedule." + s.Name
	sm.addBlock(path, block)
	diags := checkWorkflowName(s.Name, s.NameRange)
	for _, d := range diags {
		d.Summary, d.Detail = "Invalid schedule name", "Use letters, digits, \"-\" and \"_\" in a schedule name, starting with a letter."
	}
	c, d := content(block.Body, scheduleSchema)
	diags = append(diags, d...)
	sm.addAttrs(path, c.Attributes)
	str := func(name string) (string, *hcl.Attribute) {
		a := c.Attributes[name]
		if a == nil {
			return "", nil
		}
		v, d := literalString(a)
		diags = append(diags, d...)
		return v, a
	}
	cronText, cronAttr := str("cron")
	everyText, everyAttr := str("every")
	tzText, tzAttr := str("timezone")
	overlap, overlapAttr := str("overlap")
	catchUp, catchUpAttr := str("catch_up")
	if diags.HasErrors() {
		return s, diags
	}
	at := map[string]*hcl.Attribute{
		schedule.AttrCron: cronAttr, schedule.AttrEvery: everyAttr, schedule.AttrTimezone: tzAttr,
		schedule.AttrOverlap: overlapAttr, schedule.AttrCatchUp: catchUpAttr,
		schedule.AttrMaxCatchUp: c.Attributes["max_catch_up"], schedule.AttrJitter: c.Attributes["jitter"],
	}
	place := func(err error) {
		diags = append(diags, scheduleDiag(err, at, block.DefRange))
	}
	spec, err := schedule.Parse(schedule.Params{Cron: cronText, Every: everyText, Timezone: tzText})
	if err != nil {
		// A bad time zone and a bad timing are both reported (joined).
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				place(e)
			}
		} else {
			place(err)
		}
	} else {
		s.Cron, s.Every, s.Timezone = cronText, everyText, tzText
	}
	if o, err := schedule.ParseOverlap(overlap); err != nil {
		place(err)
	} else {
		s.Overlap = string(o)
	}
	cu, err := schedule.ParseCatchUp(catchUp)
	if err != nil {
		place(err)
	} else {
		s.CatchUp = string(cu)
	}
	if a := c.Attributes["max_catch_up"]; a != nil {
		n, d := literalInt(a, 1, 1_000_000)
		diags = append(diags, d...)
		if !d.HasErrors() && err == nil {
			if m, err := schedule.CheckMaxCatchUp(cu, int(n), true); err != nil {
				place(err)
			} else {
				s.MaxCatchUp = m
			}
		}
	} else if err == nil {
		s.MaxCatchUp, _ = schedule.CheckMaxCatchUp(cu, 0, false)
	}
	if a := c.Attributes["jitter"]; a != nil {
		ms, d := literalDurationOrZero(a)
		diags = append(diags, d...)
		s.JitterMS = ms
		if spec != nil && spec.Every() > 0 && !d.HasErrors() && time.Duration(ms)*time.Millisecond >= spec.Every() {
			// Not wrong, but rarely meant: slots' runs may start out of
			// order, and overlap then decides on runs not yet started.
			r := a.Expr.Range()
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Jitter not shorter than the interval",
				Detail: fmt.Sprintf("jitter delays each slot's run by up to %s, which is not less than every = %q: a slot's run may start after the next slot's. Make jitter shorter than the interval.",
					jitterText(a), everyText),
				Subject: &r})
		}
	}
	if a := c.Attributes["inputs"]; a != nil {
		v, d := decodeData(a.Expr)
		diags = append(diags, d...)
		s.Inputs = v
	}
	return s, diags
}

// scheduleDiag places a *schedule.Error at its attribute: a cron field's
// error at the field inside the string, when the string is written as it
// reads (no escapes) on one line.
func scheduleDiag(err error, at map[string]*hcl.Attribute, block hcl.Range) *hcl.Diagnostic {
	var se *schedule.Error
	if !errors.As(err, &se) {
		return errAt(block, "Invalid schedule", "%s.", upperFirstLetter(err.Error()))
	}
	summary := map[string]string{
		schedule.AttrCron:       "Invalid cron expression",
		schedule.AttrEvery:      "Invalid every interval",
		schedule.AttrTimezone:   "Unknown time zone",
		schedule.AttrOverlap:    "Invalid overlap",
		schedule.AttrCatchUp:    "Invalid catch_up",
		schedule.AttrMaxCatchUp: "Invalid max_catch_up",
		schedule.AttrJitter:     "Invalid jitter",
	}[se.Attr]
	a := at[se.Attr]
	if a == nil {
		// both or neither of cron and every: at the block.
		if at[schedule.AttrCron] != nil && at[schedule.AttrEvery] != nil {
			return errAt(at[schedule.AttrEvery].Range, "Conflicting schedule timing", "%s.", upperFirstLetter(se.Message))
		}
		return errAt(block, "Missing schedule timing", "%s.", upperFirstLetter(se.Message))
	}
	if se.Attr == schedule.AttrEvery && at[schedule.AttrCron] != nil {
		return errAt(a.Range, "Conflicting schedule timing", "%s.", upperFirstLetter(se.Message))
	}
	rng := a.Expr.Range()
	detail := se.Message
	if se.Attr != schedule.AttrMaxCatchUp { // the message starts with the attribute's name
		detail = upperFirstLetter(detail)
	}
	if se.Field > 0 {
		detail = "Field " + strconv.Itoa(se.Field) + " (" + schedule.FieldNames[se.Field-1] + ") " + se.Message
		if fr, ok := fieldRange(a, se.Offset); ok {
			rng = fr
		}
	}
	return errAt(rng, summary, "%s.", trimDot(detail))
}

// fieldRange is the range of the cron field at offset in the string
// literal of a, when the literal's text is the string itself.
func fieldRange(a *hcl.Attribute, offset int) (hcl.Range, bool) {
	r := a.Expr.Range()
	v, d := literalString(a)
	if d.HasErrors() || r.Start.Line != r.End.Line || r.End.Byte-r.Start.Byte != len(v)+2 {
		return r, false
	}
	start := r.Start
	start.Byte += 1 + offset
	start.Column += 1 + offset
	end := start
	for i := offset; i < len(v) && v[i] != ' ' && v[i] != '\t'; i++ {
		end.Byte++
		end.Column++
	}
	return hcl.Range{Filename: r.Filename, Start: start, End: end}, true
}

func trimDot(s string) string {
	for len(s) > 0 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

// buildSchedules checks each schedule's inputs against the workflow's
// inputs, as a child workflow's are, with schedule.* in scope.
func (c *compiler) buildSchedules() {
	scope := c.graphScope(expr.SlotSchedule)
	for _, sd := range c.w.Schedules {
		s := sd.Schedule
		var in *graph.Value
		if sd.Inputs != nil {
			in = c.checkData(sd.Inputs, scope)
			if in != nil && in.Type != nil && in.Type.Kind != graph.KindObject {
				c.errorf(sd.Inputs.Range, "Invalid schedule inputs",
					"A schedule's inputs are an object of the workflow's inputs, like inputs = { date = \"{{ schedule.date }}\" }; this value is a %s.", in.Type)
				in = nil
			}
			s.Inputs = in
		}
		c.checkRunInputs(sd, in)
		c.g.Schedules = append(c.g.Schedules, s)
	}
}

// checkRunInputs checks a schedule's inputs against the workflow's own.
func (c *compiler) checkRunInputs(sd *scheduleDecl, in *graph.Value) {
	at := sd.NameRange
	if sd.Inputs != nil {
		at = sd.Inputs.Range
	}
	c.checkInputObject(at, sd.Inputs, in, c.g, inputWords{
		unknown: "Unknown schedule input", wrongType: "Incorrect schedule input type", missing: "Missing schedule input",
		giver: "schedule " + strconv.Quote(sd.Name), where: "its inputs = { ... }",
	})
}

// jitterText is the duration a schedule's jitter attribute was written as
// (it decoded without error).
func jitterText(a *hcl.Attribute) string {
	v, _ := literal(a)
	return v.AsString()
}
