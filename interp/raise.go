package interp

// Errors as values: the problem fields (RFC 9457) every error carries, the
// problem type of each kind flowrun raises itself, and the error a fail
// step raises (spec/semantics.md §6).

import (
	"context"
	"fmt"
	"math"

	"github.com/flowrun/flowrun/lang/graph"
)

// problemTypePrefix starts the problem type URI of every error kind
// flowrun raises itself: urn:flowrun:error:timeout, …. A URN, not a URL,
// since it names the kind and is never fetched.
const problemTypePrefix = "urn:flowrun:error:"

// problemType is the problem type URI of an error kind.
func problemType(kind string) string {
	if kind == "" {
		kind = "internal"
	}
	return problemTypePrefix + kind
}

// problemFields adds the problem fields an error has beyond kind, message
// and type to m (an event's data, a run's error).
func (e *stepError) problemFields(m map[string]any) {
	for k, v := range map[string]string{"title": e.Title, "detail": e.Detail, "instance": e.Instance} {
		if v != "" {
			m[k] = v
		}
	}
	if e.Status != nil {
		m["status"] = *e.Status
	}
	if e.ExitCode != nil {
		m["exit_code"] = *e.ExitCode
	}
}

// raise evaluates a fail action into the error it raises: kind "fail",
// based on the error it raises again (its kind, type and fields kept),
// with each field the action sets over it. A field that cannot be
// evaluated leaves the error raised with what could be, and its message
// says which field failed: a fail step always fails.
func (sc *scheduler) raise(ctx context.Context, u unit, f *graph.FailAction) *stepError {
	se := &stepError{Kind: "fail"}
	var problems []string
	a := sc.dataAct(&u)
	if f.Error != nil {
		v, err := sc.evalValue(ctx, f.Error, a)
		if err != nil {
			problems = append(problems, fmt.Sprintf("error: %v", err))
		} else if m, ok := v.(map[string]any); ok && (m["kind"] != nil || m["message"] != nil) {
			se.fromMap(m)
		} else if ok {
			problems = append(problems, "error: the object has neither kind nor message, so it is not an error object (steps.X.error is one)")
		} else if v != nil {
			problems = append(problems, fmt.Sprintf("error: the value is a %T, not an error object", v))
		} else {
			problems = append(problems, "error: the value is null, not an error object (the step whose error it names did not fail); guard it, as in steps.X.status == 'failed'")
		}
	}
	text := func(name string, v *graph.Value, dst *string) {
		if v == nil {
			return
		}
		s, err := sc.evalString(ctx, v, a)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", name, err))
			return
		}
		*dst = s
	}
	text("message", f.Message, &se.Message)
	text("type", f.Type, &se.Type)
	text("title", f.Title, &se.Title)
	text("detail", f.Detail, &se.Detail)
	text("instance", f.Instance, &se.Instance)
	if f.Status != nil {
		v, err := sc.evalValue(ctx, f.Status, a)
		n, ok := wholeStatus(v)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("status: %v", err))
		case !ok:
			problems = append(problems, fmt.Sprintf("status: %v is not an HTTP status (a whole number from 100 to 599)", v))
		default:
			se.Status = &n
		}
	}
	if len(problems) > 0 {
		msg := "the fail step's " + problems[0]
		for _, p := range problems[1:] {
			msg += "; " + p
		}
		if se.Message != "" {
			msg = se.Message + " (" + msg + ")"
		}
		se.Message = msg
	}
	se.Message = sc.red.text(se.Message)
	se.Title, se.Detail, se.Instance = sc.red.text(se.Title), sc.red.text(se.Detail), sc.red.text(se.Instance)
	return se
}

// fromMap takes the fields of an error object (steps.X.error as CEL sees
// it) into e; unknown fields are ignored, and caught is not raised again.
func (e *stepError) fromMap(m map[string]any) {
	str := func(k string) string { s, _ := m[k].(string); return s }
	if k := str("kind"); k != "" {
		e.Kind = k
	}
	e.Message, e.Type = str("message"), str("type")
	e.Title, e.Detail, e.Instance = str("title"), str("detail"), str("instance")
	if n, ok := wholeStatus(m["status"]); ok {
		e.Status = &n
	}
	if n, ok := whole(m["exit_code"]); ok {
		e.ExitCode = &n
	}
	if c, ok := m["child_error"]; ok {
		e.ChildError = c
	}
}

// whole reads a JSON or CEL number that is a whole number.
func whole(v any) (int, bool) {
	var f float64
	switch x := v.(type) {
	case int64:
		return int(x), true
	case int:
		return x, true
	case uint64:
		return int(x), x <= math.MaxInt32
	case float64:
		f = x
	default:
		if n, ok := v.(interface{ Int64() (int64, error) }); ok {
			i, err := n.Int64()
			return int(i), err == nil
		}
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// wholeStatus reads an HTTP status: a whole number from 100 to 599.
func wholeStatus(v any) (int, bool) {
	n, ok := whole(v)
	return n, ok && n >= 100 && n <= 599
}
