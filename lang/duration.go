package lang

import (
	"fmt"
	"strconv"
	"time"
)

// durationUnits are the units a workflow duration may use: Go's, plus "d"
// for days of 24 hours.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond,
	"us": time.Microsecond,
	"µs": time.Microsecond,
	"ms": time.Millisecond,
	"s":  time.Second,
	"m":  time.Minute,
	"h":  time.Hour,
	"d":  24 * time.Hour,
}

// maxDurationMS bounds durations so that millisecond arithmetic never
// overflows: 100 years is more than any workflow needs.
const maxDurationMS = 100 * 365 * 24 * 60 * 60 * 1000

// ParseDuration parses a workflow duration such as "30s", "1m30s", "2h" or
// "1d" and returns it in whole milliseconds. The syntax is Go's
// time.ParseDuration plus the unit "d" (24 hours); a sign is not allowed.
// A duration shorter than one millisecond, or longer than 100 years, is an
// error.
func ParseDuration(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("the duration is empty")
	}
	rest := s
	var total float64 // in nanoseconds; float so that "1.5d" works
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%q does not start with a number", rest)
		}
		num, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", rest[:i])
		}
		rest = rest[i:]
		j := 0
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		unit := rest[:j]
		rest = rest[j:]
		if unit == "" {
			return 0, fmt.Errorf("the number %s has no unit", strconv.FormatFloat(num, 'f', -1, 64))
		}
		mult, ok := durationUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%q is not a unit", unit)
		}
		total += num * float64(mult)
	}
	ms := total / float64(time.Millisecond)
	if ms > maxDurationMS {
		return 0, fmt.Errorf("the duration is longer than 100 years")
	}
	if ms < 1 {
		return 0, fmt.Errorf("the duration is shorter than 1ms")
	}
	return int64(ms), nil
}

// durationHelp is the Detail sentence that says how to write a duration.
func durationHelp(s string) string {
	return fmt.Sprintf("%q is not a valid duration. Write a positive number with a unit, like \"500ms\", \"30s\", \"1m30s\", \"2h\" or \"1d\" (units: ms, s, m, h, d).", s)
}
