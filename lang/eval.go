package lang

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"cel.dev/cel-go/cel"
	"github.com/hashicorp/hcl/v2"
)

// Program is a Graph with every CEL expression compiled, ready to evaluate.
// It is safe for concurrent use: it is read-only after Load, and cel-go
// programs may be evaluated from several goroutines at once.
type Program struct {
	g     *Graph
	progs map[*Expr]*compiled
}

// compiled is one expression ready to run.
type compiled struct {
	text  string
	prg   cel.Program
	vars  map[string]*Type // the variables the scope declares
	steps []string         // the steps the expression reads
}

// Load compiles every expression of a stored graph: the run key, the
// concurrency key, each step's when, foreach items, until, retry.when,
// switch cases, action values and idempotency key, the outputs and the
// alerts. Expressions are found by pointer when evaluated.
func Load(g *Graph) (*Program, error) {
	p := &Program{g: g, progs: map[*Expr]*compiled{}}
	l := loader{p: p}
	if g.Key != nil {
		l.expr(g.Key, GraphScope(g, SlotKey))
	}
	if g.Concurrency != nil && g.Concurrency.Key != nil {
		l.expr(g.Concurrency.Key, GraphScope(g, SlotConcurrencyKey))
	}
	for _, s := range g.Steps {
		if s.When != nil {
			l.expr(s.When, StepScope(g, s, SlotWhen))
		}
		if s.Foreach != nil && s.Foreach.Items != nil {
			l.expr(s.Foreach.Items, StepScope(g, s, SlotItems))
		}
		if s.Until != nil && s.Until.Cond != nil {
			l.expr(s.Until.Cond, StepScope(g, s, SlotUntil))
		}
		if s.Retry != nil && s.Retry.When != nil {
			l.expr(s.Retry.When, StepScope(g, s, SlotRetryWhen))
		}
		if s.IdempotencyKey != nil {
			l.value(s.IdempotencyKey, StepScope(g, s, SlotIdempotencyKey))
		}
		if sw := s.Action.Switch; sw != nil {
			cs := StepScope(g, s, SlotCaseWhen)
			for i := range sw.Cases {
				if sw.Cases[i].When != nil {
					l.expr(sw.Cases[i].When, cs)
				}
			}
		}
		l.action(&s.Action, StepScope(g, s, SlotData))
	}
	if len(g.Outputs) > 0 {
		sc := GraphScope(g, SlotOutput)
		for _, o := range g.Outputs {
			l.value(o.Value, sc)
		}
	}
	if len(g.Alerts) > 0 {
		sc := GraphScope(g, SlotAlert)
		for i := range g.Alerts {
			l.action(&g.Alerts[i].Action, sc)
		}
	}
	if len(l.errs) > 0 {
		return nil, fmt.Errorf("loading workflow %s version %s: %w", g.Workflow, g.Version, errors.Join(l.errs...))
	}
	return p, nil
}

// loader compiles the expressions of one graph, collecting errors.
type loader struct {
	p    *Program
	errs []error
}

func (l *loader) action(a *Action, sc *Scope) {
	switch {
	case a.Exec != nil:
		l.value(a.Exec.Command, sc)
		l.value(a.Exec.Dir, sc)
		l.value(a.Exec.Env, sc)
		l.value(a.Exec.Stdin, sc)
	case a.HTTP != nil:
		l.value(a.HTTP.URL, sc)
		l.value(a.HTTP.Headers, sc)
		l.value(a.HTTP.Body, sc)
	case a.Set != nil:
		for _, v := range a.Set.Values {
			l.value(v, sc)
		}
	case a.Sleep != nil:
		l.value(a.Sleep.Until, sc)
	case a.Workflow != nil:
		l.value(a.Workflow.Input, sc)
	case a.Fail != nil:
		l.value(a.Fail.Message, sc)
	}
}

func (l *loader) value(v *Value, sc *Scope) {
	if v == nil {
		return
	}
	if v.Template != nil {
		for i := range v.Template.Parts {
			if e := v.Template.Parts[i].Expr; e != nil {
				l.expr(e, sc)
			}
		}
	}
	for _, el := range v.List {
		l.value(el, sc)
	}
	for _, el := range v.Object {
		l.value(el, sc)
	}
}

func (l *loader) expr(e *Expr, sc *Scope) {
	if _, ok := l.p.progs[e]; ok {
		return
	}
	c, err := compileExpr(e.CEL, sc)
	if err != nil {
		l.errs = append(l.errs, err)
		return
	}
	l.p.progs[e] = c
}

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
	_, checked, diags := checkExpr(pe, sc, nil)
	if diags.HasErrors() {
		return nil, fmt.Errorf("expression %q in %s: %s", text, sc.where(), diags.Error())
	}
	se, err := envFor(sc)
	if err != nil {
		return nil, err
	}
	prg, err := se.env.Program(checked,
		cel.CostLimit(costLimit),
		cel.InterruptCheckFrequency(InterruptCheckFrequency),
	)
	if err != nil {
		return nil, fmt.Errorf("planning expression %q: %w", text, err)
	}
	return &compiled{text: text, prg: prg, vars: se.vars, steps: pe.StepRefs()}, nil
}

// Activation binds the variables of one evaluation. Values are as decoded
// from JSON (float64 numbers, []any, map[string]any); Eval converts them
// using the declared types.
type Activation struct {
	Input     map[string]any
	Steps     map[string]StepResult
	Run       RunInfo
	Item      any
	Index     int
	InForeach bool
	Iteration int            // until: the current iteration, from 0
	Error     map[string]any // retry.when: {message, kind, exit_code?, status?}
	Event     map[string]any // alert: {kind, message, step}
	Secrets   map[string]string
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
func (p *Program) Eval(ctx context.Context, e *Expr, a *Activation) (any, error) {
	c, ok := p.progs[e]
	if !ok {
		return nil, fmt.Errorf("expression %q is not part of workflow %s version %s", exprText(e), p.g.Workflow, p.g.Version)
	}
	if a == nil {
		a = &Activation{}
	}
	vars := c.bind(a)
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

func exprText(e *Expr) string {
	if e == nil {
		return "<nil>"
	}
	return e.CEL
}

// EvalValue evaluates a data value (literals and templates) to JSON-like Go
// values: nil, bool, int64, float64, string, []any, map[string]any.
// Numbers are int64 where the value's type is int, else float64.
func (p *Program) EvalValue(ctx context.Context, v *Value, a *Activation) (any, error) {
	switch {
	case v == nil:
		return nil, nil
	case v.Lit != nil:
		var x any
		if err := json.Unmarshal(v.Lit, &x); err != nil {
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
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, nil
}

// evalTemplate evaluates a template: the typed value of a single {{ expr }},
// else the text with each expression's value rendered as text.
func (p *Program) evalTemplate(ctx context.Context, t *Template, a *Activation) (any, error) {
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
