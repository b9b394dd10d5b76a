package testfile

import (
	"fmt"
	"sort"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// File is one parsed test file.
type File struct {
	Name  string // as given, for diagnostics
	HCL   *hcl.File
	Tests []*Test
	// Syntax is set when the file did not parse: nothing else of it was
	// read, and Check has nothing to check.
	Syntax bool
}

// Test is one test block.
type Test struct {
	Name  string
	Range hcl.Range // the block's header: test "NAME"
	// WorkflowName is the workflow attribute ("" when left out);
	// Check sets Graph to the workflow tested.
	WorkflowName string
	WorkflowRng  hcl.Range
	Graph        *graph.Graph
	Inputs       map[string]any
	InputsRng    hcl.Range
	InputRngs    map[string]hcl.Range // each input's key = value, by name
	Mocks        []*Mock              // in file order
	Signals      []*Signal
	Upgrade      *Upgrade
	Expect       *Expect
}

// Mock replaces the action of one step.
type Mock struct {
	Step  string
	Range hcl.Range // the label
	// Results, one per call in order; the last repeats.
	Results []Result
}

// Result is what one call of a mocked action gives: an output, or an
// error (kind, message, and exit_code or status), with the output the
// failed attempt produced, if any.
type Result struct {
	Output any
	Error  map[string]any // nil: the call succeeds
	Range  hcl.Range
}

// Signal is a signal sent to the run.
type Signal struct {
	Name     string
	Range    hcl.Range
	AfterMS  int64 // virtual time after the run starts
	HasAfter bool  // false: sent when the run starts (consumed as soon as the step waits)
	Data     any
}

// Upgrade applies another version of the workflow mid-run and takes the
// version decision.
type Upgrade struct {
	File     string // as written, relative to the test file's directory
	FileRng  hcl.Range
	Path     string // resolved by Check
	AfterMS  int64
	HasAfter bool   // false: applied when the run first parks
	Choose   string // old | new | migrate
	Range    hcl.Range
	Graph    *graph.Graph // set by Check
}

// Expect is what the finished run must show.
type Expect struct {
	Range     hcl.Range
	Status    string
	StatusRng hcl.Range
	Outputs   []Want // sorted by name
	Steps     []StepWant
	Calls     []Want // value: a json.Number
	Asserts   []*Assert
	// Compensated lists the steps whose compensation completed, in the
	// order they ran; nil when the test does not say (HasCompensated).
	Compensated    []Ref
	HasCompensated bool
	CompensatedRng hcl.Range
}

// Ref is a step reference (step.NAME) and where it is written.
type Ref struct {
	Name  string
	Range hcl.Range
}

// CompensateSuffix ends the step key of a compensation: the test names
// it steps.NAME~compensate in expect.steps and mocks it as such.
const CompensateSuffix = "~compensate"

// Want is one expected named value and where it is written.
type Want struct {
	Name  string
	Value any
	Range hcl.Range
}

// StepWant is what one step must show; nil fields are not checked.
type StepWant struct {
	Step     string
	Range    hcl.Range
	Status   *string
	Attempts *int
	Output   any
	HasOut   bool
}

// Assert is one CEL assertion over the finished run. Check compiles it:
// Expr is evaluated with Program (a graph holding the tested workflow's
// inputs and steps and the assertion as its one output, Output).
type Assert struct {
	Src   string
	Range hcl.Range
	Expr  *graph.Expr
	// Graph holds the tested workflow's inputs and steps and one output,
	// named "assert", whose value is the assertion: expr.Load(Graph)
	// evaluates it.
	Graph *graph.Graph
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "test", LabelNames: []string{"name"}}}}

var testSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "workflow"}, {Name: "inputs"}},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "mock", LabelNames: []string{"step"}},
		{Type: "signal", LabelNames: []string{"name"}},
		{Type: "upgrade"},
		{Type: "expect"},
	},
}

var mockSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "output"}, {Name: "error"}, {Name: "results"}}}

var signalSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "after"}, {Name: "data"}}}

var upgradeSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "file", Required: true}, {Name: "after"}, {Name: "choose", Required: true}}}

var expectSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "status"}, {Name: "outputs"}, {Name: "steps"}, {Name: "calls"}, {Name: "assert"}, {Name: "compensated"},
}}

func errAt(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	r := rng
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(detail, args...), Subject: &r}
}

// Parse parses a test file. The File holds what could be read even when
// the diagnostics have errors.
func Parse(filename string, src []byte) (*File, hcl.Diagnostics) {
	f := &File{Name: filename}
	hf, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if hf == nil {
		hf = &hcl.File{Body: hcl.EmptyBody(), Bytes: src}
	}
	f.HCL = hf
	if diags.HasErrors() {
		f.Syntax = true
		return f, diags
	}
	content, d := hf.Body.Content(fileSchema)
	diags = append(diags, d...)
	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		t, d := parseTest(b)
		diags = append(diags, d...)
		if first, dup := seen[t.Name]; dup {
			diags = append(diags, errAt(t.Range, "Duplicate test", "A test named %q is already defined at %s. Give each test of a file its own name.", t.Name, pos(first)))
			continue
		}
		seen[t.Name] = t.Range
		f.Tests = append(f.Tests, t)
	}
	if len(content.Blocks) == 0 && !diags.HasErrors() {
		r := hf.Body.MissingItemRange()
		diags = append(diags, errAt(r, "No test", "The file %s holds no test block. Write one, like test \"it deploys\" { expect { status = \"completed\" } }.", filename))
	}
	return f, diags
}

func pos(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

func headerRange(b *hcl.Block) hcl.Range {
	r := b.TypeRange
	for _, l := range b.LabelRanges {
		r = hcl.RangeOver(r, l)
	}
	return r
}

func parseTest(b *hcl.Block) (*Test, hcl.Diagnostics) {
	t := &Test{Name: b.Labels[0], Range: headerRange(b)}
	var diags hcl.Diagnostics
	if t.Name == "" {
		diags = append(diags, errAt(b.LabelRanges[0], "Empty test name", "Name the test, like test \"approval granted deploys\"."))
	}
	c, d := b.Body.Content(testSchema)
	diags = append(diags, d...)
	if a := c.Attributes["workflow"]; a != nil {
		t.WorkflowRng = a.Expr.Range()
		s, d := literalString(a)
		diags = append(diags, d...)
		t.WorkflowName = s
	}
	if a := c.Attributes["inputs"]; a != nil {
		t.InputsRng = a.Expr.Range()
		v, d := literalObject(a)
		diags = append(diags, d...)
		t.Inputs = v
		if !d.HasErrors() {
			items, _ := objectItems(a)
			t.InputRngs = make(map[string]hcl.Range, len(items))
			for _, w := range items {
				t.InputRngs[w.Name] = w.Range
			}
		}
	}
	mocked := map[string]hcl.Range{}
	signaled := map[string]hcl.Range{}
	for _, blk := range c.Blocks {
		switch blk.Type {
		case "mock":
			m, d := parseMock(blk)
			diags = append(diags, d...)
			if first, dup := mocked[m.Step]; dup {
				diags = append(diags, errAt(m.Range, "Duplicate mock", "Step %q is mocked already at %s. Give one mock per step; list several results with results = [...].", m.Step, pos(first)))
				continue
			}
			mocked[m.Step] = m.Range
			t.Mocks = append(t.Mocks, m)
		case "signal":
			s, d := parseSignal(blk)
			diags = append(diags, d...)
			if first, dup := signaled[s.Name]; dup {
				diags = append(diags, errAt(s.Range, "Duplicate signal", "Signal %q is sent already at %s; a wait step consumes one signal.", s.Name, pos(first)))
				continue
			}
			signaled[s.Name] = s.Range
			t.Signals = append(t.Signals, s)
		case "upgrade":
			if t.Upgrade != nil {
				diags = append(diags, errAt(blk.TypeRange, "Duplicate upgrade block", "A test applies one upgrade; the first is at %s.", pos(t.Upgrade.Range)))
				continue
			}
			u, d := parseUpgrade(blk)
			diags = append(diags, d...)
			t.Upgrade = u
		case "expect":
			if t.Expect != nil {
				diags = append(diags, errAt(blk.TypeRange, "Duplicate expect block", "A test has one expect block; the first is at %s. Merge them.", pos(t.Expect.Range)))
				continue
			}
			e, d := parseExpect(blk)
			diags = append(diags, d...)
			t.Expect = e
		}
	}
	if t.Expect == nil {
		diags = append(diags, errAt(t.Range, "Missing expect block", "Test %q expects nothing, so it cannot fail. Add an expect block, like expect { status = \"completed\" }.", t.Name))
	}
	return t, diags
}

func parseMock(b *hcl.Block) (*Mock, hcl.Diagnostics) {
	m := &Mock{Step: b.Labels[0], Range: b.LabelRanges[0]}
	c, diags := b.Body.Content(mockSchema)
	n := 0
	for _, name := range []string{"output", "error", "results"} {
		if c.Attributes[name] != nil {
			n++
		}
	}
	if n != 1 {
		diags = append(diags, errAt(headerRange(b), "Invalid mock", "A mock sets exactly one of output, error or results (one result per call, the last repeats), like mock %q { output = { stdout = \"ok\", exit_code = 0 } }.", m.Step))
		return m, diags
	}
	switch {
	case c.Attributes["output"] != nil:
		a := c.Attributes["output"]
		v, d := literal(a.Expr)
		diags = append(diags, d...)
		m.Results = []Result{{Output: v, Range: a.Expr.Range()}}
	case c.Attributes["error"] != nil:
		a := c.Attributes["error"]
		r, d := resultOf(a.Expr, "error")
		diags = append(diags, d...)
		m.Results = []Result{r}
	default:
		a := c.Attributes["results"]
		elems, d := hcl.ExprList(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errAt(a.Expr.Range(), "Invalid results", "results is a list of objects, each { output = ... } or { error = { kind = \"exec\", message = \"...\" } }."))
			return m, diags
		}
		if len(elems) == 0 {
			diags = append(diags, errAt(a.Expr.Range(), "Invalid results", "results is empty; give at least one { output = ... } or { error = ... }."))
		}
		for _, e := range elems {
			r, d := resultOf(e, "")
			diags = append(diags, d...)
			m.Results = append(m.Results, r)
		}
	}
	return m, diags
}

// resultOf reads one result: with only "error", the expression is the
// error object itself; otherwise an object { output = ... } or
// { error = {...}, output = ... }.
func resultOf(x hcl.Expression, only string) (Result, hcl.Diagnostics) {
	r := Result{Range: x.Range()}
	v, diags := literal(x)
	if diags.HasErrors() {
		return r, diags
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return r, hcl.Diagnostics{errAt(x.Range(), "Invalid mock result", "A mock result is an object, like { output = { stdout = \"ok\" } } or { error = { kind = \"exec\", exit_code = 75, message = \"busy\" } }.")}
	}
	if only == "error" {
		obj = map[string]any{"error": obj}
	}
	for k := range obj {
		if k != "output" && k != "error" {
			return r, hcl.Diagnostics{errAt(x.Range(), "Invalid mock result", "A mock result has output and error only, not %q.", k)}
		}
	}
	r.Output = obj["output"]
	if e, has := obj["error"]; has {
		em, ok := e.(map[string]any)
		if !ok {
			return r, hcl.Diagnostics{errAt(x.Range(), "Invalid mock error", "error is an object: { kind = \"exec\", message = \"...\", exit_code = 1 } (kind and message are strings; exit_code and status numbers).")}
		}
		if d := checkErrorObject(em, x.Range()); d != nil {
			return r, hcl.Diagnostics{d}
		}
		r.Error = em
	}
	return r, nil
}

// errorFields are the fields of a step error (expr.ErrorType) a mock may set.
var errorFields = []string{"exit_code", "kind", "message", "status"}

func checkErrorObject(em map[string]any, rng hcl.Range) *hcl.Diagnostic {
	if k, ok := em["kind"].(string); !ok || k == "" {
		return errAt(rng, "Invalid mock error", "A mock error needs a kind, a string such as \"exec\", \"http\" or \"timeout\" (retry.when reads error.kind).")
	}
	for k, v := range em {
		switch k {
		case "kind", "message":
			if _, ok := v.(string); !ok {
				return errAt(rng, "Invalid mock error", "error.%s is a string.", k)
			}
		case "exit_code", "status":
			if _, ok := asInt(v); !ok {
				return errAt(rng, "Invalid mock error", "error.%s is a whole number.", k)
			}
		default:
			return errAt(rng, "Invalid mock error", "A step error has the fields %s, not %q.%s", quoteAll(errorFields), k, naming.DidYouMean(k, errorFields))
		}
	}
	if _, ok := em["message"]; !ok {
		em["message"] = "mocked " + em["kind"].(string) + " error"
	}
	return nil
}

func parseSignal(b *hcl.Block) (*Signal, hcl.Diagnostics) {
	s := &Signal{Name: b.Labels[0], Range: b.LabelRanges[0], Data: map[string]any{}}
	c, diags := b.Body.Content(signalSchema)
	if a := c.Attributes["after"]; a != nil {
		ms, d := duration(a)
		diags = append(diags, d...)
		s.AfterMS, s.HasAfter = ms, true
	}
	if a := c.Attributes["data"]; a != nil {
		v, d := literal(a.Expr)
		diags = append(diags, d...)
		s.Data = v
	}
	return s, diags
}

func parseUpgrade(b *hcl.Block) (*Upgrade, hcl.Diagnostics) {
	u := &Upgrade{Range: b.TypeRange}
	c, diags := b.Body.Content(upgradeSchema)
	if a := c.Attributes["file"]; a != nil {
		s, d := literalString(a)
		diags = append(diags, d...)
		u.File, u.FileRng = s, a.Expr.Range()
	}
	if a := c.Attributes["after"]; a != nil {
		ms, d := duration(a)
		diags = append(diags, d...)
		u.AfterMS, u.HasAfter = ms, true
	}
	if a := c.Attributes["choose"]; a != nil {
		s, d := literalString(a)
		diags = append(diags, d...)
		if !d.HasErrors() && s != "old" && s != "new" && s != "migrate" {
			diags = append(diags, errAt(a.Expr.Range(), "Invalid choose", "choose is \"old\", \"new\" or \"migrate\" (spec/versioning.md), not %q.%s", s, naming.DidYouMean(s, []string{"old", "new", "migrate"})))
		}
		u.Choose = s
	}
	return u, diags
}

// RunStatuses are the statuses expect.status may name: where a run ends
// or parks.
var RunStatuses = []string{"blocked", "canceled", "completed", "failed", "waiting"}

// StepStatuses are the statuses expect.steps may name.
var StepStatuses = []string{"canceled", "completed", "failed", "pending", "skipped", "waiting"}

func parseExpect(b *hcl.Block) (*Expect, hcl.Diagnostics) {
	e := &Expect{Range: b.TypeRange}
	c, diags := b.Body.Content(expectSchema)
	if a := c.Attributes["status"]; a != nil {
		s, d := literalString(a)
		diags = append(diags, d...)
		if !d.HasErrors() && !contains(RunStatuses, s) {
			diags = append(diags, errAt(a.Expr.Range(), "Invalid status", "A run ends or parks %s, not %q.%s", quoteAll(RunStatuses), s, naming.DidYouMean(s, RunStatuses)))
		}
		e.Status, e.StatusRng = s, a.Expr.Range()
	}
	if a := c.Attributes["outputs"]; a != nil {
		ws, d := objectItems(a)
		diags = append(diags, d...)
		e.Outputs = ws
	}
	if a := c.Attributes["calls"]; a != nil {
		ws, d := objectItems(a)
		diags = append(diags, d...)
		for _, w := range ws {
			if n, ok := asInt(w.Value); !ok || n < 0 {
				diags = append(diags, errAt(w.Range, "Invalid calls", "calls.%s is how many times the mock of step %q was called: a whole number, 0 or more.", w.Name, w.Name))
				continue
			}
			e.Calls = append(e.Calls, w)
		}
	}
	if a := c.Attributes["steps"]; a != nil {
		ws, d := objectItems(a)
		diags = append(diags, d...)
		for _, w := range ws {
			sw, d := stepWant(w)
			diags = append(diags, d...)
			e.Steps = append(e.Steps, sw)
		}
	}
	if a := c.Attributes["compensated"]; a != nil {
		e.HasCompensated, e.CompensatedRng = true, a.Expr.Range()
		elems, d := hcl.ExprList(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errAt(a.Expr.Range(), "Invalid compensated", "compensated is a list of steps in the order their compensations ran, like compensated = [step.charge, step.reserve]."))
		}
		for _, x := range elems {
			t, td := hcl.AbsTraversalForExpr(x)
			if td.HasErrors() || len(t) != 2 || t.RootName() != "step" {
				diags = append(diags, errAt(x.Range(), "Invalid compensated", "Each element names a step, like step.charge."))
				continue
			}
			attr, ok := t[1].(hcl.TraverseAttr)
			if !ok {
				diags = append(diags, errAt(x.Range(), "Invalid compensated", "Each element names a step, like step.charge."))
				continue
			}
			e.Compensated = append(e.Compensated, Ref{Name: attr.Name, Range: x.Range()})
		}
	}
	if a := c.Attributes["assert"]; a != nil {
		elems, d := hcl.ExprList(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errAt(a.Expr.Range(), "Invalid assert", "assert is a list of CEL expressions written as strings, like assert = [\"steps.health.attempts <= 3\"]."))
		}
		for _, x := range elems {
			v, d := literal(x)
			diags = append(diags, d...)
			s, ok := v.(string)
			if !d.HasErrors() && !ok {
				diags = append(diags, errAt(x.Range(), "Invalid assert", "Each assertion is a CEL expression written as a string, like \"steps.build.status == 'completed'\"."))
				continue
			}
			if ok {
				e.Asserts = append(e.Asserts, &Assert{Src: s, Range: x.Range()})
			}
		}
	}
	return e, diags
}

func stepWant(w Want) (StepWant, hcl.Diagnostics) {
	sw := StepWant{Step: w.Name, Range: w.Range}
	m, ok := w.Value.(map[string]any)
	if !ok {
		return sw, hcl.Diagnostics{errAt(w.Range, "Invalid step expectation", "steps.%s is an object with any of status, attempts and output, like { status = \"completed\", attempts = 2 }.", w.Name)}
	}
	for _, k := range sortedKeys(m) {
		v := m[k]
		switch k {
		case "status":
			s, ok := v.(string)
			if !ok || !contains(StepStatuses, s) {
				return sw, hcl.Diagnostics{errAt(w.Range, "Invalid step expectation", "steps.%s.status is one of %s.", w.Name, quoteAll(StepStatuses))}
			}
			sw.Status = &s
		case "attempts":
			n, ok := asInt(v)
			if !ok || n < 0 {
				return sw, hcl.Diagnostics{errAt(w.Range, "Invalid step expectation", "steps.%s.attempts is a whole number, 0 or more.", w.Name)}
			}
			sw.Attempts = &n
		case "output":
			sw.Output, sw.HasOut = v, true
		default:
			return sw, hcl.Diagnostics{errAt(w.Range, "Invalid step expectation", "A step expectation has status, attempts and output, not %q.", k)}
		}
	}
	return sw, nil
}

// objectItems reads an object literal attribute item by item, with each
// item's range.
func objectItems(a *hcl.Attribute) ([]Want, hcl.Diagnostics) {
	pairs, d := hcl.ExprMap(a.Expr)
	if d.HasErrors() {
		return nil, hcl.Diagnostics{errAt(a.Expr.Range(), "Expected an object", "%s is an object, like %s = { name = value }.", a.Name, a.Name)}
	}
	var out []Want
	var diags hcl.Diagnostics
	for _, p := range pairs {
		k, d := literal(p.Key)
		if d.HasErrors() {
			// A bare word key (name = ...) is a traversal: take its name.
			if name := hcl.ExprAsKeyword(p.Key); name != "" {
				k, d = name, nil
			}
		}
		diags = append(diags, d...)
		ks, ok := k.(string)
		if !ok {
			continue
		}
		v, d := literal(p.Value)
		diags = append(diags, d...)
		out = append(out, Want{Name: ks, Value: v, Range: hcl.RangeOver(p.Key.Range(), p.Value.Range())})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, diags
}

// literal evaluates an expression that must be a literal (no variables,
// no functions) to JSON-like Go values.
func literal(x hcl.Expression) (any, hcl.Diagnostics) {
	if len(x.Variables()) > 0 {
		return nil, hcl.Diagnostics{errAt(x.Range(), "Not a literal", "Test files hold literal values only: strings, numbers, bools, lists and objects. References and ${...} are not evaluated.")}
	}
	v, diags := x.Value(nil)
	if diags.HasErrors() {
		return nil, diags
	}
	g, err := lang.LiteralGo(v)
	if err != nil {
		return nil, hcl.Diagnostics{errAt(x.Range(), "Invalid value", "%v.", err)}
	}
	return g, nil
}

func literalObject(a *hcl.Attribute) (map[string]any, hcl.Diagnostics) {
	v, diags := literal(a.Expr)
	if diags.HasErrors() {
		return nil, diags
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, hcl.Diagnostics{errAt(a.Expr.Range(), "Expected an object", "%s is an object, like %s = { name = \"web\" }.", a.Name, a.Name)}
	}
	return m, nil
}

func literalString(a *hcl.Attribute) (string, hcl.Diagnostics) {
	v, diags := literal(a.Expr)
	if diags.HasErrors() {
		return "", diags
	}
	s, ok := v.(string)
	if !ok {
		return "", hcl.Diagnostics{errAt(a.Expr.Range(), "Expected a string", "%s is a string.", a.Name)}
	}
	return s, nil
}

func duration(a *hcl.Attribute) (int64, hcl.Diagnostics) {
	s, diags := literalString(a)
	if diags.HasErrors() {
		return 0, diags
	}
	ms, err := lang.ParseDuration(s)
	if err != nil {
		return 0, hcl.Diagnostics{errAt(a.Expr.Range(), "Invalid duration", "%s = %q: %v. Write a duration like \"90s\", \"2h\" or \"1d\".", a.Name, s, err)}
	}
	return ms, nil
}
