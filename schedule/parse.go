package schedule

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Kind says how a schedule's slots are defined.
type Kind string

// Schedule kinds.
const (
	KindCron  Kind = "cron"
	KindEvery Kind = "every"
)

// MinEvery is the shortest every interval.
const MinEvery = time.Second

// Attributes of a schedule block that Parse reads, as an Error names them.
const (
	AttrCron     = "cron"
	AttrEvery    = "every"
	AttrTimezone = "timezone"
)

// FieldNames are the five cron fields in order; Error.Field is an index
// into it plus one.
var FieldNames = [5]string{"minute", "hour", "day-of-month", "month", "day-of-week"}

// fieldRanges says what each field accepts, for error messages.
var fieldRanges = [5]string{"0-59", "0-23", "1-31", "1-12 or JAN-DEC", "0-6 (0 is Sunday) or SUN-SAT"}

// Descriptors are the cron shorthands Parse accepts, and what they mean
// (a table, not a map: data in the binary rather than work at every
// process's start).
var Descriptors = [...]struct{ Name, Fields string }{
	{"@hourly", "0 * * * *"},
	{"@daily", "0 0 * * *"},
	{"@midnight", "0 0 * * *"},
	{"@weekly", "0 0 * * 0"},
	{"@monthly", "0 0 1 * *"},
	{"@yearly", "0 0 1 1 *"},
	{"@annually", "0 0 1 1 *"},
}

// descriptor returns the fields of the shorthand name.
func descriptor(name string) (string, bool) {
	for _, d := range Descriptors {
		if d.Name == name {
			return d.Fields, true
		}
	}
	return "", false
}

// Error is a mistake in a schedule's spec. The compiler places it at the
// attribute (and, for a cron field, at the field inside the string).
type Error struct {
	// Attr is the attribute at fault: AttrCron, AttrEvery or AttrTimezone.
	Attr string
	// Field is the cron field at fault, 1 (minute) to 5 (day-of-week); 0
	// when the error is not about one field.
	Field int
	// Offset is the byte offset of that field in the cron string (0 when
	// Field is 0).
	Offset int
	// Message says what is wrong and how to fix it, without the position.
	Message string
}

func (e *Error) Error() string {
	if e.Field > 0 {
		return fmt.Sprintf("%s field %d (%s): %s", e.Attr, e.Field, FieldNames[e.Field-1], e.Message)
	}
	return e.Attr + ": " + e.Message
}

// Params are a schedule block's time attributes as written: exactly one of
// Cron and Every, and a Timezone ("" is UTC).
type Params struct {
	Cron     string
	Every    string
	Timezone string
}

// Spec is a parsed, valid schedule. Its methods are safe for concurrent
// use.
type Spec struct {
	kind Kind
	// text is the cron expression or every interval as written.
	text  string
	every time.Duration
	loc   *time.Location
	// The cron fields as bit sets: bit n is set when value n matches.
	minute, hour, dom, month, dow uint64
	// domStar and dowStar: the day fields were "*" or "?", so a day
	// matches when both match (otherwise when either does, as in cron).
	domStar, dowStar bool
}

// Kind is KindCron or KindEvery.
func (s *Spec) Kind() Kind { return s.kind }

// Text is the cron expression or the every interval as written.
func (s *Spec) Text() string { return s.text }

// Every is the interval of an every schedule (0 for cron).
func (s *Spec) Every() time.Duration { return s.every }

// Location is the schedule's time zone.
func (s *Spec) Location() *time.Location { return s.loc }

// String is the spec as a person reads it: `cron "0 2 * * *" in Europe/Berlin`.
func (s *Spec) String() string {
	return fmt.Sprintf("%s %q in %s", s.kind, s.text, s.loc)
}

// parser reads the five standard fields; descriptors are mapped before. (A
// function: a Parser variable would be set when every process starts.)
func parser() cron.Parser {
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
}

const starBit = 1 << 63 // robfig/cron's mark of a "*" or "?" field

// Parse validates a schedule's time attributes. Its errors are *Error.
func Parse(p Params) (*Spec, error) {
	s := &Spec{}
	// A bad time zone does not hide a bad timing: both are reported, as
	// errors.Join of the two *Errors.
	loc, tzErr := LoadLocation(p.Timezone)
	s.loc = loc
	if err := s.parseTiming(p); err != nil || tzErr != nil {
		return nil, errors.Join(tzErr, err)
	}
	return s, nil
}

// parseTiming reads the cron expression or the every interval of p.
func (s *Spec) parseTiming(p Params) error {
	var err error
	switch {
	case p.Cron != "" && p.Every != "":
		return &Error{Attr: AttrEvery, Message: "a schedule has cron or every, not both; remove one"}
	case p.Cron == "" && p.Every == "":
		return &Error{Attr: AttrCron, Message: `a schedule needs cron (e.g. "0 2 * * *" or "@daily") or every (e.g. "15m")`}
	case p.Every != "":
		s.kind, s.text = KindEvery, p.Every
		s.every, err = ParseEvery(p.Every)
		return err
	}
	s.kind, s.text = KindCron, p.Cron
	return s.parseCron(p.Cron)
}

// LoadLocation loads an IANA time zone by name ("" and "UTC" are UTC).
// Its error is an *Error on AttrTimezone.
func LoadLocation(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name == "Local" || strings.TrimSpace(name) != name {
		return nil, &Error{Attr: AttrTimezone, Message: fmt.Sprintf("%q is not an IANA time zone name; write one such as \"Europe/Berlin\" or \"UTC\"", name)}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &Error{Attr: AttrTimezone, Message: fmt.Sprintf("unknown time zone %q; write an IANA name such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\"", name)}
	}
	return loc, nil
}

// ParseEvery reads an every interval: a Go duration ("90s", "15m",
// "1h30m") of at least MinEvery and a whole number of seconds. Its error is
// an *Error on AttrEvery.
func ParseEvery(text string) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, &Error{Attr: AttrEvery, Message: fmt.Sprintf("%q is not a duration; write one such as \"30s\", \"15m\" or \"24h\"", text)}
	}
	if d < MinEvery {
		return 0, &Error{Attr: AttrEvery, Message: fmt.Sprintf("%q is shorter than the shortest interval, %s", text, MinEvery)}
	}
	if d%time.Second != 0 {
		return 0, &Error{Attr: AttrEvery, Message: fmt.Sprintf("%q is not a whole number of seconds", text)}
	}
	return d, nil
}

func (s *Spec) parseCron(text string) error {
	expr := text
	if strings.HasPrefix(strings.TrimSpace(text), "@") {
		d, ok := descriptor(strings.ToLower(strings.TrimSpace(text)))
		if !ok {
			msg := fmt.Sprintf("unknown descriptor %q; use @hourly, @daily, @weekly, @monthly or @yearly, or five fields", strings.TrimSpace(text))
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), "@every") {
				msg = `write an interval as every = "15m", not cron = "@every ..."`
			}
			return &Error{Attr: AttrCron, Message: msg}
		}
		expr = d
	}
	fields, offsets := splitFields(expr)
	if len(fields) != 5 {
		msg := fmt.Sprintf("%q has %d fields; a cron expression has five: minute hour day-of-month month day-of-week (or @hourly, @daily, @weekly, @monthly, @yearly)", text, len(fields))
		if len(fields) > 0 && strings.Contains(fields[0], "=") {
			msg = "set the time zone with the timezone attribute, not in the cron expression"
		}
		return &Error{Attr: AttrCron, Message: msg}
	}
	// Each field alone, the others "*": the one robfig/cron refuses is
	// named in the error. An empty item of a list ("1,,5", ",") is refused
	// first: robfig/cron skips it, and a field of nothing but commas would
	// hold no value at all, a spec that never fires.
	for i, f := range fields {
		off := offsets[i]
		if expr != text {
			off = 0 // a descriptor's fields are not in the text
		}
		if slices.Contains(strings.Split(f, ","), "") {
			return &Error{Attr: AttrCron, Field: i + 1, Offset: off,
				Message: fmt.Sprintf("%q has an empty item in its list; write one value or range between each two commas, like 1,15,30 (%s is %s)", f, FieldNames[i], fieldRanges[i])}
		}
		probe := []string{"*", "*", "*", "*", "*"}
		probe[i] = f
		if _, err := parser().Parse(strings.Join(probe, " ")); err != nil {
			return &Error{Attr: AttrCron, Field: i + 1, Offset: off,
				Message: fmt.Sprintf("%q: %v (%s is %s)", f, err, FieldNames[i], fieldRanges[i])}
		}
	}
	sched, err := parser().Parse(strings.Join(fields, " "))
	if err != nil {
		return &Error{Attr: AttrCron, Message: fmt.Sprintf("%q: %v", text, err)}
	}
	ss, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return &Error{Attr: AttrCron, Message: fmt.Sprintf("%q is not a field schedule", text)}
	}
	s.minute, s.hour, s.month = ss.Minute&^starBit, ss.Hour&^starBit, ss.Month&^starBit
	s.dom, s.dow = ss.Dom&^starBit, ss.Dow&^starBit
	s.domStar, s.dowStar = ss.Dom&starBit != 0, ss.Dow&starBit != 0
	if err := s.checkDaysExist(fields, offsets, expr == text); err != nil {
		return err
	}
	return nil
}

// checkDaysExist refuses a spec whose days never come (day 30 of
// February): it would never fire.
func (s *Spec) checkDaysExist(fields []string, offsets []int, inText bool) error {
	if s.domStar || !s.dowStar {
		return nil // every day of a month, or any day of a week, exists
	}
	longest := map[int]int{1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}
	for m := 1; m <= 12; m++ {
		if s.month&(1<<m) == 0 {
			continue
		}
		for d := 1; d <= longest[m]; d++ {
			if s.dom&(1<<d) != 0 {
				return nil
			}
		}
	}
	off := 0
	if inText {
		off = offsets[2]
	}
	return &Error{Attr: AttrCron, Field: 3, Offset: off,
		Message: fmt.Sprintf("%q: no month the expression names has such a day, so it would never fire", fields[2])}
}

// splitFields splits a cron expression at runs of spaces and tabs and
// returns the fields with their byte offsets.
func splitFields(s string) (fields []string, offsets []int) {
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' {
			if start >= 0 {
				fields = append(fields, s[start:i])
				offsets = append(offsets, start)
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return fields, offsets
}
