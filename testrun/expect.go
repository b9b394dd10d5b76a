package testrun

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
)

// expect compares the finished run of x with the test's expect block.
func (s *session) expect(ctx context.Context, x *execution) []Failure {
	e := s.t.Expect
	if e == nil {
		return nil
	}
	var fails []Failure
	if e.Status != "" && string(x.run.Status) != e.Status {
		actual := string(x.run.Status)
		if x.run.WaitReason != "" {
			actual += " (" + x.run.WaitReason + ")"
		}
		if len(x.run.Error) > 0 {
			actual += " " + string(x.run.Error)
		}
		fails = append(fails, Failure{Pos: pos(e.StatusRng), What: "status", Expected: e.Status, Actual: actual})
	}
	var outputs map[string]any
	if len(x.run.Outputs) > 0 {
		_ = json.Unmarshal(x.run.Outputs, &outputs)
	}
	for _, w := range e.Outputs {
		got, ok := outputs[w.Name]
		if !ok {
			fails = append(fails, Failure{Pos: pos(w.Range), What: "outputs." + w.Name, Expected: text(w.Value), Actual: "no output (the run " + string(x.run.Status) + ")"})
			continue
		}
		if !matches(jsonLike(w.Value), got) {
			fails = append(fails, Failure{Pos: pos(w.Range), What: "outputs." + w.Name, Expected: text(w.Value), Actual: text(got)})
		}
	}
	for _, sw := range e.Steps {
		fails = append(fails, stepFailures(sw, x.view)...)
	}
	for _, c := range e.Calls {
		want, _ := intOf(c.Value)
		if got := x.calls[c.Name]; got != want {
			fails = append(fails, Failure{Pos: pos(c.Range), What: "calls." + c.Name, Expected: fmt.Sprint(want), Actual: fmt.Sprint(got)})
		}
	}
	if e.HasCompensated {
		var want, got []string
		for _, c := range e.Compensated {
			want = append(want, c.Name)
		}
		for _, name := range x.view.Order {
			if base, ok := strings.CutSuffix(name, testfile.CompensateSuffix); ok && base != "" {
				if sv := x.view.Steps[name]; sv != nil && sv.Status == "completed" {
					got = append(got, base)
				}
			}
		}
		if !slices.Equal(want, got) {
			fails = append(fails, Failure{Pos: pos(e.CompensatedRng), What: "compensated", Expected: text(want), Actual: text(got)})
		}
	}
	for _, a := range e.Asserts {
		if f := s.assert(ctx, a, x); f != nil {
			fails = append(fails, *f)
		}
	}
	return fails
}

func stepFailures(sw testfile.StepWant, view *interp.RunView) []Failure {
	var fails []Failure
	sv := view.Steps[sw.Step]
	status, attempts := "pending", 0
	var out any
	if sv != nil {
		status, attempts = string(sv.Status), sv.Attempts
		if len(sv.Output) > 0 {
			_ = json.Unmarshal(sv.Output, &out)
		}
	}
	if sw.Status != nil && *sw.Status != status {
		fails = append(fails, Failure{Pos: pos(sw.Range), What: "steps." + sw.Step + ".status", Expected: *sw.Status, Actual: status})
	}
	if sw.Attempts != nil && *sw.Attempts != attempts {
		fails = append(fails, Failure{Pos: pos(sw.Range), What: "steps." + sw.Step + ".attempts", Expected: fmt.Sprint(*sw.Attempts), Actual: fmt.Sprint(attempts)})
	}
	if sw.HasOut && !matches(jsonLike(sw.Output), out) {
		fails = append(fails, Failure{Pos: pos(sw.Range), What: "steps." + sw.Step + ".output", Expected: text(sw.Output), Actual: text(out)})
	}
	return fails
}

// matches reports whether got matches want: an object matches when every
// field want names matches (fields want leaves out are not compared);
// lists match element by element; other values are equal.
func matches(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !matches(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !matches(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

// text renders a value for a failure message as compact JSON.
func text(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// assert evaluates one assertion over the finished run.
func (s *session) assert(ctx context.Context, a *testfile.Assert, x *execution) *Failure {
	fail := func(actual, msg string) *Failure {
		return &Failure{Pos: pos(a.Range), What: "assert", Expected: a.Src, Actual: actual, Message: msg}
	}
	if a.Graph == nil {
		return fail("", "the assertion did not compile")
	}
	prog, err := expr.Load(a.Graph)
	if err != nil {
		return fail("", err.Error())
	}
	act := &expr.Activation{Steps: map[string]expr.StepResult{}}
	var in map[string]any
	if len(x.run.Inputs) > 0 {
		_ = json.Unmarshal(x.run.Inputs, &in)
	}
	act.Input = in
	act.Run = expr.RunInfo{ID: x.run.ID, Workflow: x.run.Workflow, Version: x.run.Version, Key: x.run.Key, Attempt: max(x.run.Attempt, 1),
		StartedAt: x.run.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	names := make([]string, 0, len(x.view.Steps))
	for n := range x.view.Steps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sv := x.view.Steps[n]
		r := expr.StepResult{Status: string(sv.Status), Attempts: sv.Attempts}
		if len(sv.Output) > 0 {
			_ = json.Unmarshal(sv.Output, &r.Output)
		}
		if len(sv.Error) > 0 {
			_ = json.Unmarshal(sv.Error, &r.Error)
		}
		act.Steps[n] = r
	}
	v, err := prog.EvalValue(ctx, a.Graph.Outputs[0].Value, act)
	if err != nil {
		return fail("an error", err.Error())
	}
	if b, ok := v.(bool); !ok || !b {
		return fail(text(v), "")
	}
	return nil
}

// switchBranch is the branch a switch step took, from its output.
func switchBranch(st *graph.Step, out json.RawMessage) string {
	if st == nil || st.Action.Kind != graph.KindSwitch || len(out) == 0 {
		return ""
	}
	var b string
	if json.Unmarshal(out, &b) == nil {
		return b
	}
	return string(out)
}
