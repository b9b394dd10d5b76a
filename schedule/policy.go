package schedule

import (
	"fmt"
	"time"
)

// Overlap says what a slot does while runs of the same schedule are
// unfinished. Deciding it is the engine's; the values are parsed here.
type Overlap string

// Overlap policies.
const (
	OverlapSkip           Overlap = "skip" // the slot is recorded skipped (the default)
	OverlapQueue          Overlap = "queue"
	OverlapCancelPrevious Overlap = "cancel_previous"
	OverlapAllow          Overlap = "allow"
)

// CatchUp says which slots fire of those that came due while no scheduler
// fired them (see Plan).
type CatchUp string

// Catch-up policies.
const (
	CatchUpNone   CatchUp = "none"
	CatchUpLatest CatchUp = "latest" // the default
	CatchUpAll    CatchUp = "all"
)

// Attributes the policy parsers name in their errors.
const (
	AttrOverlap    = "overlap"
	AttrCatchUp    = "catch_up"
	AttrMaxCatchUp = "max_catch_up"
	AttrJitter     = "jitter"
)

// DefaultMaxCatchUp is max_catch_up when catch_up = "all" leaves it out.
const DefaultMaxCatchUp = 10

// ParseOverlap reads an overlap attribute ("" is the default, skip).
func ParseOverlap(text string) (Overlap, error) {
	switch o := Overlap(text); o {
	case "":
		return OverlapSkip, nil
	case OverlapSkip, OverlapQueue, OverlapCancelPrevious, OverlapAllow:
		return o, nil
	}
	return "", &Error{Attr: AttrOverlap, Message: fmt.Sprintf("%q is not an overlap policy; use skip, queue, cancel_previous or allow", text)}
}

// ParseCatchUp reads a catch_up attribute ("" is the default, latest).
func ParseCatchUp(text string) (CatchUp, error) {
	switch c := CatchUp(text); c {
	case "":
		return CatchUpLatest, nil
	case CatchUpNone, CatchUpLatest, CatchUpAll:
		return c, nil
	}
	return "", &Error{Attr: AttrCatchUp, Message: fmt.Sprintf("%q is not a catch-up policy; use none, latest or all", text)}
}

// CheckMaxCatchUp validates max_catch_up (set says it was written): only
// with catch_up = "all", and at least 1. It returns the value to use.
func CheckMaxCatchUp(c CatchUp, n int, set bool) (int, error) {
	if !set {
		if c == CatchUpAll {
			return DefaultMaxCatchUp, nil
		}
		return 0, nil
	}
	if c != CatchUpAll {
		return 0, &Error{Attr: AttrMaxCatchUp, Message: fmt.Sprintf(`max_catch_up applies only with catch_up = "all" (this schedule's catch_up is %q); remove it or set catch_up = "all"`, c)}
	}
	if n < 1 {
		return 0, &Error{Attr: AttrMaxCatchUp, Message: fmt.Sprintf("max_catch_up is %d; it must be at least 1", n)}
	}
	return n, nil
}

// ParseJitter reads a jitter attribute: a Go duration of zero or more ("" is
// none).
func ParseJitter(text string) (time.Duration, error) {
	if text == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 {
		return 0, &Error{Attr: AttrJitter, Message: fmt.Sprintf("%q is not a duration of zero or more; write one such as \"30s\"", text)}
	}
	return d, nil
}
