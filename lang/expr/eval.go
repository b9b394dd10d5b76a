package expr

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"cel.dev/cel-go/cel"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// Program is a Graph ready to evaluate: each CEL expression is compiled on
// its first evaluation (see evalload.go). It is safe for concurrent use:
// each expression is compiled once, and cel-go programs may be evaluated
// from several goroutines at once.
type Program struct {
	g     *graph.Graph
	progs map[*graph.Expr]*compiled // compiled by Load (or by tests)
	lazy  map[*graph.Expr]*lazyExpr // compiled on first use (see evalload.go)
	steps map[string]*graph.Step    // g's steps by name
	cel   *CelGraph                 // the environments of the narrow scopes
	// outputReads: the steps the outputs read (OutputReads).
	outputReads []string
	// deferred is the index of a LoadCompiled program, made on first use
	// (nil: made by Load).
	deferred *deferredIndex
}

// compiled is one expression ready to run.
type compiled struct {
	text  string
	prg   cel.Program
	vars  map[string]*graph.Type // the variables the scope declares
	steps []string               // the steps the expression reads
	// inputKey is the text of the type the scope declares input as: the
	// key of its conversion in a ConvCache (each scope has a type of its
	// own, and equal types share one conversion).
	inputKey string
	// outs holds, for each of steps, the type the scope declares that
	// step's output as (nil: the scope does not declare the step) and its
	// text (the role of inputKey for steps.NAME.output). A long graph
	// keeps a compiled expression per step: no map or object type of its
	// own for these.
	outs []stepOut
	// scopeSteps is the number of steps the scope declared: a narrow
	// scope declares only those the expression reads.
	scopeSteps int
	// path is the selection the expression is, when it is only that
	// (selectPath): Eval then reads it without the program (evalPath).
	path []string
}

// stepOut is the declared output type of a step an expression reads.
type stepOut struct {
	t   *graph.Type
	key string
}

// stepsVar stands for the steps variable in a compiled expression's vars:
// its fields' types are in outs.
var stepsVar = &graph.Type{Kind: graph.KindObject}

// compileExpr parses, checks and plans one stored expression.
func compileExpr(text string, sc *Scope) (*compiled, error) {
	return compileExprLimit(text, sc, RuntimeCostLimit)
}

// compileExprLimit is compileExpr with a given runtime cost limit.
func compileExprLimit(text string, sc *Scope, costLimit uint64) (*compiled, error) {
	pe, diags := ParseExpr(text, hcl.Range{})
	if diags.HasErrors() {
		return nil, fmt.Errorf("expression %q in %s: %s", text, sc.where(), diags.Error())
	}
	return compileParsed(pe, text, sc, costLimit)
}

// compileParsed checks and plans a parsed stored expression.
func compileParsed(pe *ParsedExpr, text string, sc *Scope, costLimit uint64) (*compiled, error) {
	c, _, err := compileIn(pe, text, sc, costLimit)
	return c, err
}

// compileIn is compileParsed that also returns the environment that
// checked the expression.
func compileIn(pe *ParsedExpr, text string, sc *Scope, costLimit uint64) (*compiled, *scopeEnv, error) {
	_, checked, se, diags := checkExprEnv(pe, sc, nil)
	if diags.HasErrors() {
		return nil, nil, fmt.Errorf("expression %q in %s: %s", text, sc.where(), diags.Error())
	}
	prg, err := se.env.Program(checked,
		cel.CostLimit(costLimit),
		cel.InterruptCheckFrequency(InterruptCheckFrequency),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("planning expression %q: %w", text, err)
	}
	c := &compiled{text: text, prg: prg, vars: scopeVars(sc), steps: pe.StepRefs()}
	if pe.ast != nil {
		c.path = selectPath(pe.ast.NativeRep().Expr(), func(name string) bool { return c.vars[name] != nil })
	}
	if t := c.vars["input"]; t != nil {
		c.inputKey = t.String()
	}
	if t := c.vars["steps"]; t != nil {
		c.scopeSteps = len(t.Fields)
		c.outs = make([]stepOut, len(c.steps))
		for i, n := range c.steps {
			if st := t.Fields[n]; st != nil {
				out := st.Fields["output"]
				c.outs[i] = stepOut{t: out, key: out.String()}
			}
		}
		c.vars["steps"] = stepsVar
	}
	return c, se, nil
}

// Activation binds the variables of one evaluation. Values are as decoded
// from JSON (float64 numbers, []any, map[string]any); Eval converts them
// using the declared types.
type Activation struct {
	Input map[string]any
	// InputFunc, when Input is nil, gives the inputs when an evaluation
	// first reads them (and Cache does not hold their conversion): a run
	// whose expressions do not read a large input never decodes it.
	InputFunc func() map[string]any
	Steps     map[string]StepResult
	Run       RunInfo
	Item      any
	Index     int
	InForeach bool
	Iteration int            // until: the current iteration, from 0
	Error     map[string]any // retry.when: {message, kind, exit_code?, status?}
	Event     map[string]any // alert: {kind, message, step}
	Schedule  map[string]any // a schedule's inputs: {time, date, name}
	Body      any            // a webhook's inputs and key: the parsed JSON body
	Headers   map[string]string
	Secrets   map[string]string
	// Cache, when set, keeps Input, and the large outputs of Steps,
	// converted for the evaluations that share it: a run's evaluations all
	// read the same inputs, and converting a large input (or a step's large
	// output) for each of them made a foreach body that reads it quadratic
	// in its length. Input and the outputs must not change while it is
	// used (a step's new result is a new value).
	Cache *ConvCache
}

// ConvCache keeps a run's inputs converted to the types expressions read
// them as (see Activation.Cache), one conversion per distinct type, and
// the latest conversion of each step's output when it is a list or map
// holding more than minCachedLen elements in all. It is safe for concurrent use.
type ConvCache struct {
	mu    sync.Mutex
	input map[string]any        // by the type's text
	steps map[string]*convEntry // by step name
}

// convEntry is a step output and its conversion to the type of key.
type convEntry struct {
	src  any // kept, so that no new output can take its address
	key  string
	conv any
}

// minCachedLen is the number of elements from which a step output's
// conversion is kept: converting a smaller one costs less than keeping it.
const minCachedLen = 32

// NewConvCache returns an empty cache.
func NewConvCache() *ConvCache {
	return &ConvCache{input: map[string]any{}, steps: map[string]*convEntry{}}
}

// stepOutputAs returns the output of step name converted to t (whose text
// is key): a large list or map once per value and type, anything else each
// time.
func (c *ConvCache) stepOutputAs(name string, out any, t *graph.Type, key string) any {
	if budget := minCachedLen; !exceeds(out, &budget) {
		return toJSONTyped(out, t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.steps[name]; e != nil && e.key == key && sameValue(e.src, out) {
		return e.conv
	}
	v := toJSONTyped(out, t)
	c.steps[name] = &convEntry{src: out, key: key, conv: v}
	return v
}

// exceeds reports whether v holds more than *budget lists, maps and
// elements in all, counting down *budget as it goes (it stops there).
func exceeds(v any, budget *int) bool {
	switch x := v.(type) {
	case []any:
		if *budget -= len(x) + 1; *budget < 0 {
			return true
		}
		for _, e := range x {
			if exceeds(e, budget) {
				return true
			}
		}
	case map[string]any:
		if *budget -= len(x) + 1; *budget < 0 {
			return true
		}
		for _, e := range x {
			if exceeds(e, budget) {
				return true
			}
		}
	}
	return false
}

// ForgetStep drops the kept conversion of step name's output (the runner
// no longer reads that step).
func (c *ConvCache) ForgetStep(name string) {
	c.mu.Lock()
	delete(c.steps, name)
	c.mu.Unlock()
}

// sameValue reports whether a and b are the same list or map (not equal:
// the same one).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && len(x) > 0 && &x[0] == &y[0]
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	}
	return false
}

// inputAs returns in converted to t (whose text is key), converting it once
// per type.
func (c *ConvCache) inputAs(in func() map[string]any, t *graph.Type, key string) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.input[key]; ok {
		return v
	}
	v := toJSONTyped(in(), t)
	c.input[key] = v
	return v
}

// StepResult is what steps.NAME shows of a finished step. A skipped step
// has Status "skipped" and a nil Output, so steps.NAME.output is null. A
// step without a result in Activation.Steps (a step's own result in
// iteration 0 of its until loop) is absent: reading it is an evaluation
// error, so expressions guard it (iteration == 0 ? ... : steps.x.output).
type StepResult struct {
	Status   string
	Attempts int
	Output   any
	Error    map[string]any // nil when none
}

// RunInfo is what `run` shows.
type RunInfo struct {
	ID, Workflow, Version, Key string
	Attempt                    int
	StartedAt                  string // RFC 3339
}

// Eval evaluates a control expression of the program's graph. The result is
// a JSON-like Go value: nil, bool, int64, float64, string, []any or
// map[string]any.
func (p *Program) Eval(ctx context.Context, e *graph.Expr, a *Activation) (any, error) {
	c, err := p.compiled(e)
	if err != nil {
		return nil, err
	}
	if a == nil {
		a = &Activation{}
	}
	vars := &lazyVars{c: c, a: a}
	if c.path != nil {
		if v, ok := c.evalPath(vars); ok {
			return v, nil
		}
	}
	out, _, err := c.prg.ContextEval(ctx, vars)
	if err != nil {
		return nil, fmt.Errorf("evaluating %q: %w", c.text, c.explain(err, a))
	}
	v, err := fromCEL(out)
	if err != nil {
		return nil, fmt.Errorf("evaluating %q: %w", c.text, err)
	}
	return v, nil
}

func exprText(e *graph.Expr) string {
	if e == nil {
		return "<nil>"
	}
	return e.CEL
}

// EvalValue evaluates a data value (literals and templates) to JSON-like Go
// values: nil, bool, int64, float64, string, []any, map[string]any.
// Numbers are int64 where the value's type is int, else float64.
func (p *Program) EvalValue(ctx context.Context, v *graph.Value, a *Activation) (any, error) {
	switch {
	case v == nil:
		return nil, nil
	case v.Lit != nil:
		var x any
		if err := graph.UnmarshalJSON(v.Lit, &x); err != nil {
			return nil, fmt.Errorf("decoding literal %s: %w", v.Lit, err)
		}
		return toJSONTyped(x, v.Type), nil
	case v.Template != nil:
		return p.evalTemplate(ctx, v.Template, a)
	case v.List != nil:
		out := make([]any, len(v.List))
		for i, el := range v.List {
			x, err := p.EvalValue(ctx, el, a)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case v.Object != nil:
		out := make(map[string]any, len(v.Object))
		for k, el := range v.Object {
			x, err := p.EvalValue(ctx, el, a)
			if err != nil {
				return nil, &FieldError{Key: k, Err: err}
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, nil
}

// evalTemplate evaluates a template: the typed value of a single {{ expr }},
// else the text with each expression's value rendered as text.
func (p *Program) evalTemplate(ctx context.Context, t *graph.Template, a *Activation) (any, error) {
	if len(t.Parts) == 1 && t.Parts[0].Expr != nil {
		return p.Eval(ctx, t.Parts[0].Expr, a)
	}
	var b []byte
	for _, pt := range t.Parts {
		if pt.Expr == nil {
			b = append(b, pt.Text...)
			continue
		}
		x, err := p.Eval(ctx, pt.Expr, a)
		if err != nil {
			return nil, err
		}
		s, err := TemplateText(x)
		if err != nil {
			return nil, fmt.Errorf("rendering %q as text: %w", pt.Expr.CEL, err)
		}
		b = append(b, s...)
	}
	return string(b), nil
}

// FieldError is the failure of one field of an object value (EvalValue):
// Key names the field of the outermost object, so a caller can name what
// failed without reading the message.
type FieldError struct {
	Key string
	Err error
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }
