package expr

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
	"github.com/flowrun/flowrun/lang/graph"
)

// lazyVars are the CEL variables of one evaluation, built from an
// activation and converted to the declared types (of the steps, only those
// the expression reads), each when the evaluation first reads it: an
// expression that reads item alone does not convert the run's inputs (a
// foreach over a 10,000-item input list converted the whole list for each
// item: quadratic in the list).
type lazyVars struct {
	c    *compiled
	a    *Activation
	done map[string]any
}

// ResolveName implements interpreter.Activation.
func (l *lazyVars) ResolveName(name string) (any, bool) {
	t, ok := l.c.vars[name]
	if !ok {
		return nil, false
	}
	if v, ok := l.done[name]; ok {
		return v, true
	}
	v := l.c.bindOne(name, t, l.a)
	if l.done == nil {
		l.done = make(map[string]any, 2)
	}
	l.done[name] = v
	return v, true
}

// Parent implements interpreter.Activation: there is none.
func (l *lazyVars) Parent() interpreter.Activation { return nil }

// bindOne converts one variable of a's.
func (c *compiled) bindOne(name string, t *graph.Type, a *Activation) any {
	switch name {
	case "input":
		if a.Cache != nil {
			return a.Cache.inputAs(a.inputs, t, c.inputKey)
		}
		return toJSONTyped(a.inputs(), t)
	case "run":
		return map[string]any{
			"id": a.Run.ID, "workflow": a.Run.Workflow, "version": a.Run.Version, "key": a.Run.Key,
			"attempt": int64(a.Run.Attempt), "started_at": a.Run.StartedAt,
		}
	case "steps":
		steps := make(map[string]any, len(c.steps))
		for i, n := range c.steps {
			sr, ok := a.Steps[n]
			out := c.outs[i]
			if !ok || out.t == nil {
				continue // absent: reading it is an error (see Eval)
			}
			var errVal any
			if sr.Error != nil {
				errVal = toJSONTyped(sr.Error, ErrorType)
			}
			var v any
			if a.Cache != nil {
				v = a.Cache.stepOutputAs(n, sr.Output, out.t, out.key)
			} else {
				v = toJSONTyped(sr.Output, out.t)
			}
			steps[n] = map[string]any{
				"output":   v,
				"status":   sr.Status,
				"attempts": int64(sr.Attempts),
				"error":    errVal,
			}
		}
		return steps
	case "item":
		return toJSONTyped(a.Item, t)
	case "index":
		return int64(a.Index)
	case "iteration":
		return int64(a.Iteration)
	case "error":
		return toJSONTyped(orEmpty(a.Error), ErrorType)
	case "event":
		return toJSONTyped(orEmpty(a.Event), EventType)
	case "schedule":
		return toJSONTyped(orEmpty(a.Schedule), ScheduleType)
	case "body":
		return toJSONTyped(a.Body, graph.TypeAny)
	case "headers":
		m := make(map[string]any, len(a.Headers))
		for k, v := range a.Headers {
			m[k] = v
		}
		return m
	case "secrets":
		m := make(map[string]any, len(a.Secrets))
		for k, v := range a.Secrets {
			m[k] = v
		}
		return m
	}
	return nil
}

// inputs returns a's inputs: Input, else InputFunc's, else none.
func (a *Activation) inputs() map[string]any {
	in := a.Input
	if in == nil && a.InputFunc != nil {
		in = a.InputFunc()
	}
	if in == nil {
		in = map[string]any{}
	}
	return in
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// explain adds to an evaluation error what a missing step result means.
func (c *compiled) explain(err error, a *Activation) error {
	for _, n := range c.steps {
		if _, ok := a.Steps[n]; !ok && strings.Contains(err.Error(), "no such key: "+n) {
			return fmt.Errorf("%w (steps.%s has no result yet: the step has not run, or this is iteration 0 of its own until loop, where it must be guarded: iteration == 0 ? ... : steps.%s.output)", err, n, n)
		}
	}
	for _, n := range c.steps {
		if sr, ok := a.Steps[n]; ok && sr.Status == "skipped" && strings.Contains(c.text, "steps."+n+".output") {
			return &SkippedReadError{Step: n, Err: err}
		}
	}
	return err
}

// SkippedReadError is an evaluation that failed while reading the output
// of a step that was skipped (its when was false, its join skipped it, or
// a switch took another branch): the output of a skipped step is null,
// and CEL's own words for reading into null ("got 'types.Null', expected
// iterable type", "no such key") say nothing of that.
type SkippedReadError struct {
	Step string
	Err  error // CEL's error
}

func (e *SkippedReadError) Error() string {
	return fmt.Sprintf("step %q was skipped, so steps.%s.output is null and has nothing to read; guard the read, for example steps.%s.status == 'completed' ? steps.%s.output.FIELD : DEFAULT",
		e.Step, e.Step, e.Step, e.Step)
}

// Unwrap returns CEL's error.
func (e *SkippedReadError) Unwrap() error { return e.Err }

// toJSONTyped converts a JSON-like Go value to the representation of type
// t: numbers become int64 where t is int (when integral) and float64
// elsewhere (a number inside an any value is a JSON number, so a double).
// Lists and maps are converted element by element.
func toJSONTyped(x any, t *graph.Type) any {
	var elem *graph.Type
	if t != nil && (t.Kind == graph.KindList || t.Kind == graph.KindMap) {
		elem = t.Elem
	}
	wantInt := t != nil && t.Kind == graph.KindInt
	wantNum := !wantInt
	switch v := x.(type) {
	case nil:
		return nil
	case json.Number:
		if i, err := v.Int64(); err == nil && wantInt {
			return i
		}
		f, err := v.Float64()
		if err != nil {
			return v.String()
		}
		return toJSONTyped(f, t)
	case float64:
		if wantInt && v == math.Trunc(v) && math.Abs(v) < 1<<63 {
			return int64(v)
		}
		return v
	case float32:
		return toJSONTyped(float64(v), t)
	case int:
		return intTo(int64(v), wantNum)
	case int8:
		return intTo(int64(v), wantNum)
	case int16:
		return intTo(int64(v), wantNum)
	case int32:
		return intTo(int64(v), wantNum)
	case int64:
		if wantNum && isDyn(t) && (v > 1<<53 || v < -(1<<53)) {
			return v // a double would round it (language.md §12)
		}
		return intTo(v, wantNum)
	case uint:
		return intTo(int64(v), wantNum)
	case uint8:
		return intTo(int64(v), wantNum)
	case uint16:
		return intTo(int64(v), wantNum)
	case uint32:
		return intTo(int64(v), wantNum)
	case uint64:
		if v > math.MaxInt64 {
			if isDyn(t) {
				return v // a CEL uint: only a uint holds it exactly
			}
			return float64(v)
		}
		return toJSONTyped(int64(v), t)
	case []any:
		out := make([]any, len(v))
		for i, el := range v {
			out[i] = toJSONTyped(el, elem)
		}
		return out
	case []string:
		out := make([]any, len(v))
		for i, el := range v {
			out[i] = el
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, el := range v {
			ft := elem
			if t != nil && t.Kind == graph.KindObject {
				ft = t.Fields[k]
			}
			out[k] = toJSONTyped(el, ft)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(v))
		for k, el := range v {
			out[k] = el
		}
		return out
	default:
		return x
	}
}

// isDyn reports whether t is the type of a value CEL sees as dyn: an any,
// or a number inside one.
func isDyn(t *graph.Type) bool { return t == nil || t.Kind == graph.KindAny }

func intTo(i int64, wantNum bool) any {
	if wantNum {
		return float64(i)
	}
	return i
}

// fromCEL converts a CEL result to a JSON-like Go value: nil, bool, int64,
// float64, string, []any or map[string]any. Bytes become base64 text,
// timestamps RFC 3339 text and durations Go duration text (1m30s).
func fromCEL(v ref.Val) (any, error) {
	switch x := v.(type) {
	case nil, types.Null:
		return nil, nil
	case *types.Err:
		return nil, x
	case *types.Unknown:
		return nil, fmt.Errorf("the result depends on unknown values %v", x)
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		if x > math.MaxInt64 {
			return uint64(x), nil
		}
		return int64(x), nil
	case types.Double:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("the result %v is not a finite number (was there a division by zero?)", float64(x))
		}
		return float64(x), nil
	case types.String:
		return string(x), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(x), nil
	case types.Timestamp:
		return x.Time.UTC().Format(time.RFC3339Nano), nil
	case types.Duration:
		return x.Duration.String(), nil
	case *types.Optional:
		if !x.HasValue() {
			return nil, nil
		}
		return fromCEL(x.GetValue())
	case traits.Lister:
		var out []any
		for it := x.Iterator(); it.HasNext() == types.True; {
			el, err := fromCEL(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, el)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			val, err := fromCEL(x.Get(k))
			if err != nil {
				return nil, err
			}
			key, err := fromCEL(k)
			if err != nil {
				return nil, err
			}
			ks, ok := key.(string)
			if !ok {
				ks, _ = TemplateText(key)
			}
			out[ks] = val
		}
		return out, nil
	}
	return nil, fmt.Errorf("a value of type %s cannot be represented as JSON", v.Type())
}

// TemplateText renders a value inside a text template: strings as they
// are, null as "", booleans as true and false, integral numbers without a
// trailing .0, other numbers in their shortest form, lists and maps as
// compact JSON.
func TemplateText(x any) (string, error) {
	switch v := x.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int:
		return strconv.Itoa(v), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float64:
		return formatNumber(v), nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return "", fmt.Errorf("encoding as JSON: %w", err)
	}
	return string(b), nil
}

func formatNumber(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
