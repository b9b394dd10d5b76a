package graph

// The version diff: what changed between two graphs of one workflow, and
// the bump each change requires.
//
// Classification (the table of the versioning brief, with the cases it
// leaves open decided here):
//
// MAJOR: the workflow renamed; a step removed or renamed (a rename is
// reported as the old name removed and the new name added); a step's action
// kind changed; a switch changed; an edge between two steps that exist in
// both versions added or removed (Needs compared); join, when, on_error
// changed (on_error changes which steps run after a failure: control flow);
// foreach added, removed or its items changed; until added, removed or its
// condition changed; an input removed, retyped, added without a default, or
// its default removed; an output removed or retyped; a step's output type
// changed in a way that is not a pure widening (see below) while it is used.
//
// MINOR: a step added, with the edges from it to existing steps (an
// existing step that now also needs a new step); an action's parameters
// changed (an exec's pass_env, its own or the workflow's, included: the
// workflow's list is part of each exec action, and of each alert's,
// whose change stays PATCH with the rest of the alert); depends_on changed with the same Needs; an optional input added;
// an input's default added or changed; an output added or its value
// changed; the run key changed (it changes which runs apply resumes, not
// what a run does); the idempotency key changed; foreach concurrency or
// on_failure changed; until interval or max_iterations changed; a step's
// output type widened (an object gaining fields, recursively) or changed
// while nothing uses it.
//
// PATCH: description, step timeout, retry, breaker reference, breaker
// blocks, a compensation's timeout and retry, concurrency block, alerts, limits, deadline, secrets, schedules
// and webhooks (added, removed or changed: they start runs, they do not
// change what a run does).
//
// Rule of thumb, and an invariant the tests check: a change that alters a
// step's Hash is never PATCH, because PATCH upgrades move runs in flight to
// the new graph keeping every completed step.
//
// "Used" for output types is conservative: a step is used when some step of
// the new graph needs it, or when the new graph has any output at all
// (outputs are not traced to the steps they read).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Bump is the size of a version change.
type Bump int

// The bumps, ordered: a larger bump satisfies a smaller requirement.
const (
	BumpNone Bump = iota
	BumpPatch
	BumpMinor
	BumpMajor
)

// String returns "none", "PATCH", "MINOR" or "MAJOR".
func (b Bump) String() string {
	switch b {
	case BumpNone:
		return "none"
	case BumpPatch:
		return "PATCH"
	case BumpMinor:
		return "MINOR"
	case BumpMajor:
		return "MAJOR"
	}
	return fmt.Sprintf("Bump(%d)", int(b))
}

// Change is one classified difference between two graphs.
type Change struct {
	// Path names what changed: `step "notify"`, `input "amount"`,
	// `output "tracking"`, `alert "ops"`, `breaker "payments"`,
	// `secret "token"`, `concurrency`, `limits` or `workflow`.
	Path string
	// What is a short phrase: "added", "removed", "timeout changed (30s →
	// 1m)", "http parameters changed (url, body)", ...
	What string
	// Bump is what the change alone requires.
	Bump Bump
}

// String renders the change as `step "notify" added: MINOR`.
func (c Change) String() string {
	return c.Path + " " + c.What + ": " + c.Bump.String()
}

// RequiredBump returns the largest bump among the changes (BumpNone for
// none).
func RequiredBump(changes []Change) Bump {
	b := BumpNone
	for _, c := range changes {
		b = max(b, c.Bump)
	}
	return b
}

// Diff classifies every difference between old and new, two graphs of the
// same workflow, sorted by Path then What. The versions themselves and the
// step hashes are not compared; a nil graph counts as an empty one. Two graphs that differ only in formatting
// and comments have no changes. Both graphs should be in normal form
// (sealed or decoded).
func Diff(old, new *Graph) []Change {
	if old == nil {
		old = &Graph{}
	}
	if new == nil {
		new = &Graph{}
	}
	d := &differ{old: old, new: new}
	d.graphFields("workflow", old, new)
	sort.SliceStable(d.changes, func(i, j int) bool {
		a, b := d.changes[i], d.changes[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.What < b.What
	})
	return d.changes
}

type differ struct {
	old, new *Graph
	changes  []Change
}

func (d *differ) add(path string, b Bump, format string, args ...any) {
	d.changes = append(d.changes, Change{Path: path, What: fmt.Sprintf(format, args...), Bump: b})
}

// renamed reports a renamed workflow.
func (d *differ) renamed(path, o, n string) {
	if o != n {
		d.add(path, BumpMajor, "renamed (%s → %s)", o, n)
	}
}

func (d *differ) concurrency(_ string, oc, nc *Concurrency) {
	switch {
	case oc == nil && nc != nil:
		d.add("concurrency", BumpPatch, "added")
	case oc != nil && nc == nil:
		d.add("concurrency", BumpPatch, "removed")
	case oc != nil:
		if parts := concurrencyParts(oc, nc); len(parts) > 0 {
			d.add("concurrency", BumpPatch, "changed (%s)", strings.Join(parts, ", "))
		}
	}
}

func (d *differ) limits(_ string, o, n *Limits) {
	if parts := limitsParts(o, n); len(parts) > 0 {
		d.add("limits", BumpPatch, "changed (%s)", strings.Join(parts, ", "))
	}
}

func (d *differ) secrets(_ string, o, n []Secret) {
	diffNamed(d, o, n, func(s Secret) string { return s.Name }, "secret", func(path string, a, b Secret) {
		d.secretFields(path, &a, &b)
	}, BumpPatch, diffAdded[Secret](BumpPatch))
}

func (d *differ) breakers(_ string, o, n []Breaker) {
	diffNamed(d, o, n, func(b Breaker) string { return b.Name }, "breaker", func(path string, a, b Breaker) {
		if parts := breakerParts(&a, &b); len(parts) > 0 {
			d.add(path, BumpPatch, "changed (%s)", strings.Join(parts, ", "))
		}
	}, BumpPatch, diffAdded[Breaker](BumpPatch))
}

// alerts: an alert is compared whole (its action is run policy).
func (d *differ) alerts(_ string, o, n []Alert) {
	diffNamed(d, o, n, func(a Alert) string { return a.Name }, "alert", func(path string, a, b Alert) {
		d.add(path, BumpPatch, "changed")
	}, BumpPatch, diffAdded[Alert](BumpPatch))
}

func (d *differ) inputs(_ string, o, n []Input) {
	diffNamed(d, o, n, func(i Input) string { return i.Name }, "input", func(path string, a, b Input) {
		d.inputFields(path, &a, &b)
	}, BumpMajor, func(in Input) (string, Bump) {
		if in.Default == nil {
			// Every caller must now pass it.
			return "added without a default", BumpMajor
		}
		return "added with a default", BumpMinor
	})
}

// inputDefault: removing a default makes the input required (MAJOR);
// adding or changing one is MINOR.
func (d *differ) inputDefault(path string, o, n json.RawMessage) {
	switch {
	case o != nil && n == nil:
		d.add(path, BumpMajor, "default removed (the input is now required)")
	case o == nil && n != nil:
		d.add(path, BumpMinor, "default added (the input is now optional)")
	case !bytes.Equal(o, n):
		d.add(path, BumpMinor, "default changed%s", diffArrow(string(o), string(n)))
	}
}

func (d *differ) outputs(_ string, o, n []Output) {
	diffNamed(d, o, n, func(o Output) string { return o.Name }, "output", func(path string, a, b Output) {
		d.outputFields(path, &a, &b)
	}, BumpMajor, diffAdded[Output](BumpMinor))
}

// outputValue reports a changed value of an output whose type is the same
// (a changed type says more).
func (d *differ) outputValue(path string, o, n *Output) {
	if o.Type.Equal(n.Type) && !diffSame(o.Value, n.Value) {
		d.add(path, BumpMinor, "value changed")
	}
}

func (d *differ) steps(_ string, o, n []*Step) {
	oldSteps, newSteps := diffStepMap(o), diffStepMap(n)
	var used map[string]bool
	for name, os := range oldSteps {
		ns := newSteps[name]
		if ns == nil {
			d.add(diffPath("step", name), BumpMajor, "removed")
			continue
		}
		if used == nil {
			used = diffUsedSteps(d.new)
		}
		d.stepFields(diffPath("step", name), os, ns, &stepDiff{oldSteps, newSteps, used[name]})
	}
	for name := range newSteps {
		if oldSteps[name] == nil {
			d.add(diffPath("step", name), BumpMinor, "added")
		}
	}
}

// stepDiff is what the comparisons of a step's fields need beyond the two
// steps (ir_gen.go's differ.stepFields calls them in the order of Step's
// fields).
type stepDiff struct {
	oldSteps, newSteps map[string]*Step
	used               bool // later steps or outputs read the step's output
}

func (d *differ) stepNeeds(path string, o, n *Step, c *stepDiff) {
	oldNeeds, newNeeds := diffSet(o.Needs), diffSet(n.Needs)
	for _, x := range n.Needs {
		switch {
		case oldNeeds[x]:
		case c.oldSteps[x] != nil:
			d.add(path, BumpMajor, "now needs step %q", x)
		default:
			d.add(path, BumpMinor, "now needs new step %q", x)
		}
	}
	for _, x := range o.Needs {
		if !newNeeds[x] && c.newSteps[x] != nil {
			d.add(path, BumpMajor, "no longer needs step %q", x)
		}
	}
}

// stepDependsOn reports a changed depends_on only when the needs are the
// same (a changed need says more).
func (d *differ) stepDependsOn(path string, o, n *Step, _ *stepDiff) {
	if diffSame(o.Needs, n.Needs) && !diffSame(o.DependsOn, n.DependsOn) {
		d.add(path, BumpMinor, "depends_on changed%s", diffArrow(diffList(o.DependsOn), diffList(n.DependsOn)))
	}
}

// stepCompensate reports a changed compensation: its action or on_cancel
// (or the block added or removed) is a MINOR change, as catch; its
// timeout and retry are its run policy, PATCH as a step's are. A
// compensation's timeout defaults to the step's, so a step's timeout
// changed is not a MINOR change through it.
func (d *differ) stepCompensate(path string, o, n *Step, _ *stepDiff) {
	oc, nc := o.Compensate, n.Compensate
	if oc == nil || nc == nil || oc.OnCancel != nc.OnCancel || !diffSame(oc.Action, nc.Action) {
		if !diffSame(oc, nc) {
			d.add(path, BumpMinor, "compensate changed")
		}
		return
	}
	if oc.TimeoutMS != nc.TimeoutMS {
		d.add(path, BumpPatch, "compensate timeout changed (%s → %s)", diffMS(oc.TimeoutMS), diffMS(nc.TimeoutMS))
	}
	switch or, nr := oc.Retry, nc.Retry; {
	case or == nil && nr == nil:
	case or == nil:
		d.add(path, BumpPatch, "compensate retry added (%d attempts)", nr.Attempts)
	case nr == nil:
		d.add(path, BumpPatch, "compensate retry removed")
	default:
		if parts := retryParts(or, nr); len(parts) > 0 {
			d.add(path, BumpPatch, "compensate retry changed (%s)", strings.Join(parts, ", "))
		}
	}
}

// stepCatch reports changed catch blocks: a MINOR change, since what a
// failure leads to changes but no completed step's output does.
func (d *differ) stepCatch(path string, o, n *Step, _ *stepDiff) {
	if !diffSame(o.Catch, n.Catch) {
		d.add(path, BumpMinor, "catch changed")
	}
}

func (d *differ) stepOutputType(path string, o, n *Step, c *stepDiff) {
	if !o.OutputType.Equal(n.OutputType) {
		arrow := diffArrow(o.OutputType.String(), n.OutputType.String())
		switch {
		case diffWidens(o.OutputType, n.OutputType):
			d.add(path, BumpMinor, "output type widened%s", arrow)
		case c.used:
			d.add(path, BumpMajor, "output type changed%s, and later steps or outputs use it", arrow)
		default:
			d.add(path, BumpMinor, "output type changed%s", arrow)
		}
	}
}

func (d *differ) action(path string, o, n *Action) {
	if o.Kind != n.Kind {
		d.add(path, BumpMajor, "action changed (%s → %s)", diffOr(o.Kind, "none"), diffOr(n.Kind, "none"))
		return
	}
	if o.Kind == KindSwitch {
		if !diffSame(o.Switch, n.Switch) {
			d.add(path, BumpMajor, "switch changed")
		}
		return
	}
	if o.Kind == KindHTTP && o.HTTP != nil && n.HTTP != nil {
		if msg := openAPIChange(o.HTTP.OpenAPI, n.HTTP.OpenAPI); msg != "" {
			d.add(path, BumpMinor, "%s", msg)
		}
	}
	fields := slices.DeleteFunc(diffFields(o, n), func(f string) bool { return f == "openapi" })
	if len(fields) > 0 {
		d.add(path, BumpMinor, "%s parameters changed (%s)", o.Kind, strings.Join(fields, ", "))
	}
}

// openAPIChange says how the OpenAPI operation an http action was compiled
// from changed ("" when it did not): an operation, a document or its
// contents. The request it compiled to is compared with the other
// parameters.
func openAPIChange(o, n *OpenAPIRef) string {
	switch {
	case o == nil && n == nil:
		return ""
	case o == nil:
		return fmt.Sprintf("openapi operation added (%s in %s)", n.Operation, n.Document)
	case n == nil:
		return fmt.Sprintf("openapi operation removed (%s in %s)", o.Operation, o.Document)
	case o.Operation != n.Operation || o.Document != n.Document:
		return fmt.Sprintf("openapi operation changed (%s in %s → %s in %s)", o.Operation, o.Document, n.Operation, n.Document)
	case o.SHA256 != n.SHA256:
		return fmt.Sprintf("openapi document %s changed (sha256 %.12s → %.12s)", n.Document, o.SHA256, n.SHA256)
	}
	return ""
}

func (d *differ) foreach(path string, o, n *Foreach) {
	switch {
	case o == nil && n == nil:
	case o == nil:
		d.add(path, BumpMajor, "foreach added%s", diffArrow("", diffCEL(n.Items)))
	case n == nil:
		d.add(path, BumpMajor, "foreach removed")
	default:
		d.foreachFields(path, o, n)
	}
}

func (d *differ) until(path string, o, n *Until) {
	switch {
	case o == nil && n == nil:
	case o == nil:
		d.add(path, BumpMajor, "until added%s", diffArrow("", diffCEL(n.Cond)))
	case n == nil:
		d.add(path, BumpMajor, "until removed")
	default:
		d.untilFields(path, o, n)
	}
}

func (d *differ) retry(path string, o, n *Retry) {
	switch {
	case o == nil && n == nil:
	case o == nil:
		d.add(path, BumpPatch, "retry added (%d attempts)", n.Attempts)
	case n == nil:
		d.add(path, BumpPatch, "retry removed")
	default:
		parts := retryParts(o, n)
		if len(parts) == 0 {
			return
		}
		d.add(path, BumpPatch, "retry changed (%s)", strings.Join(parts, ", "))
	}
}

// diffNamed compares two name-keyed lists: an entry only in old is
// "removed" (bump removed), one only in new is classified by added, one in
// both and different is passed to changed.
func diffNamed[T any](d *differ, old, new []T, name func(T) string, kind string, changed func(path string, a, b T), removed Bump, added func(T) (string, Bump)) {
	om, nm := map[string]T{}, map[string]T{}
	for _, x := range old {
		om[name(x)] = x
	}
	for _, x := range new {
		nm[name(x)] = x
	}
	for k, a := range om {
		b, ok := nm[k]
		switch {
		case !ok:
			d.add(diffPath(kind, k), removed, "removed")
		case !diffSame(a, b):
			changed(diffPath(kind, k), a, b)
		}
	}
	for k, x := range nm {
		if _, ok := om[k]; !ok {
			what, b := added(x)
			d.add(diffPath(kind, k), b, "%s", what)
		}
	}
}

// diffAdded classifies every addition as "added" with bump b.
func diffAdded[T any](b Bump) func(T) (string, Bump) {
	return func(T) (string, Bump) { return "added", b }
}

func diffPath(kind, name string) string { return fmt.Sprintf("%s %q", kind, name) }

func diffStepMap(steps []*Step) map[string]*Step {
	m := make(map[string]*Step, len(steps))
	for _, s := range steps {
		if s != nil {
			m[s.Name] = s
		}
	}
	return m
}

// diffUsedSteps returns the steps whose output the graph may read: those
// some step needs, and every step when the graph has outputs.
func diffUsedSteps(g *Graph) map[string]bool {
	used := map[string]bool{}
	for _, s := range g.Steps {
		if s == nil {
			continue
		}
		if len(g.Outputs) > 0 {
			used[s.Name] = true
		}
		for _, x := range s.Needs {
			used[x] = true
		}
	}
	return used
}

// diffWidens reports whether n is o with extra object fields (recursively
// through lists, maps and objects): every expression that type-checked
// against o still does against n.
func diffWidens(o, n *Type) bool {
	if o == nil || n == nil || o.Kind != n.Kind {
		return o.Equal(n)
	}
	switch o.Kind {
	case KindList, KindMap:
		return diffWidens(o.Elem, n.Elem)
	case KindObject:
		for f, ft := range o.Fields {
			nt, ok := n.Fields[f]
			if !ok || !diffWidens(ft, nt) {
				return false
			}
		}
	}
	return true
}

// diffFields returns the names of the fields, sorted, whose encoding
// differs between the kind-specific blocks of two actions of the same kind.
// Names are the HCL attribute names ("duration", not "duration_ms").
func diffFields(o, n *Action) []string {
	ob, _ := encMarshal(o)
	nb, _ := encMarshal(n)
	if bytes.Equal(ob, nb) {
		return nil
	}
	var om, nm map[string]map[string]any
	_ = json.Unmarshal(ob, &om)
	_ = json.Unmarshal(nb, &nm)
	a, b := om[o.Kind], nm[o.Kind]
	var fields []string
	for k := range a {
		if !diffSame(a[k], b[k]) {
			fields = append(fields, strings.TrimSuffix(k, "_ms"))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			fields = append(fields, strings.TrimSuffix(k, "_ms"))
		}
	}
	sort.Strings(fields)
	if len(fields) == 0 {
		fields = []string{"parameters"}
	}
	return fields
}

func diffSet(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

// diffSame compares two values by their canonical JSON.
func diffSame(a, b any) bool {
	ab, aerr := encMarshal(a)
	bb, berr := encMarshal(b)
	return aerr == nil && berr == nil && bytes.Equal(ab, bb)
}

// diffArrow renders " (a → b)" when both sides are short enough to read in
// one line, " (b)" when only b is given, and "" otherwise.
func diffArrow(a, b string) string {
	const short = 48
	switch {
	case len(a) > short || len(b) > short:
		return ""
	case a == "" && b == "":
		return ""
	case a == "":
		return " (" + b + ")"
	}
	return " (" + a + " → " + b + ")"
}

// diffExprArrow shows how an expression changed: its text, or, when the
// text is the same, its type (a field it reads changed type).
func diffExprArrow(o, n *Expr) string {
	if o != nil && n != nil && o.CEL == n.CEL && o.Type != nil && n.Type != nil {
		if t := diffArrow(o.Type.String(), n.Type.String()); t != "" {
			if len(o.CEL) <= 48 {
				return " (" + o.CEL + ": type " + t[2:]
			}
			return " (type " + t[2:]
		}
	}
	return diffArrow(diffCEL(o), diffCEL(n))
}

func diffCEL(e *Expr) string {
	if e == nil {
		return "none"
	}
	return e.CEL
}

func diffList(l []string) string { return "[" + strings.Join(l, ", ") + "]" }

func diffOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

// diffMS renders a millisecond count the way a workflow author writes a
// duration: 1h30m, 1m, 30s, 500ms, 1s250ms; 0 is "none".
func diffMS(ms int64) string {
	if ms == 0 {
		return "none"
	}
	var b strings.Builder
	if ms < 0 {
		b.WriteByte('-')
		ms = -ms
	}
	for _, u := range []struct {
		name string
		ms   int64
	}{{"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1}} {
		if ms >= u.ms {
			fmt.Fprintf(&b, "%d%s", ms/u.ms, u.name)
			ms %= u.ms
		}
	}
	return b.String()
}
