package expr

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// Loading a stored graph.
//
// Load must be fast even for a graph of 10,000 steps: resuming a run loads
// its graph and must start the next step within milliseconds. Parsing and
// checking CEL costs tens of microseconds per expression, so Load does not
// compile every expression up front. It indexes them, checks cheaply that
// every step an expression reads (steps.NAME) is visible from where the
// expression stands, and compiles each expression on its first evaluation
// (once, safely from several goroutines).
//
// An expression whose step references Load cannot establish by a scan of
// its text (an unknown or invisible step, or a use of steps it cannot read
// without parsing) is compiled by Load itself, so that such a graph is
// rejected by Load with the compiler's message. Other compile errors (a
// stored text that no longer parses or type-checks) are reported by the
// expression's first Eval, with the same message Load would have given.
//
// An expression is compiled in a narrow scope: only the steps it reads
// (with the types they have in its full scope), so that one expression's
// environment does not hold every ancestor of its step (which would make
// loading a long chain quadratic). If that fails, it is compiled again in
// the full scope, whose result and messages are those of the compiler.

// lazyExpr is an expression compiled on first use.
type lazyExpr struct {
	text string
	step *graph.Step // the step whose slot holds it; nil for workflow slots
	slot string      // the slot (SlotWhen, SlotKey, ...)

	once sync.Once
	c    *compiled
	err  error
}

// Load indexes every expression of a stored graph: the run key, the
// concurrency key, each step's when, foreach items, until, retry.when,
// switch cases, action values and idempotency key, the outputs and the
// alerts. Expressions are found by pointer when evaluated, and compiled on
// first use. Load fails when an expression reads a step it cannot see.
func Load(g *graph.Graph) (*Program, error) {
	p := &Program{g: g}
	if err := p.index(); err != nil {
		return nil, err
	}
	return p, nil
}

// LoadCompiled is Load for a graph the compiler has just built (and so
// checked: every step an expression reads is visible), done on first use
// instead of now. Storing a graph makes its program this way: a process
// that stores a graph and never runs it (flowrun apply --detach) indexes
// nothing. Were the graph one Load refuses, its first evaluation would
// report Load's error.
func LoadCompiled(g *graph.Graph) *Program {
	return &Program{g: g, deferred: &deferredIndex{}}
}

// deferredIndex is the index of a LoadCompiled program, made once.
type deferredIndex struct {
	once sync.Once
	done atomic.Bool
	err  error
}

// indexed makes a LoadCompiled program's index on its first use; it
// reports Load's error.
func (p *Program) indexed() error {
	d := p.deferred
	if d == nil {
		return nil
	}
	d.once.Do(func() {
		d.err = p.index()
		d.done.Store(true)
	})
	return d.err
}

// Indexed reports whether the program has indexed its graph's
// expressions: a Load program always has, a LoadCompiled one once used.
func (p *Program) Indexed() bool {
	return p.deferred == nil || p.deferred.done.Load()
}

// index indexes the graph's expressions (see Load).
func (p *Program) index() error {
	g := p.g
	p.progs = map[*graph.Expr]*compiled{}
	p.steps = make(map[string]*graph.Step, len(g.Steps))
	for _, s := range g.Steps {
		p.steps[s.Name] = s
	}
	p.cel = NewCelGraph(func(name string) *graph.Type {
		if s := p.steps[name]; s != nil {
			return VisibleOutput(s)
		}
		return nil
	}, func() []string { return naming.NamesSorted(p.steps) })
	// Count the expressions first (a walk without the map), so that the
	// index is allocated at its size: a graph of literals gets none, one of
	// an expression per step is not grown twenty times.
	n := loader{p: p, count: true}
	n.walk(g)
	p.lazy = make(map[*graph.Expr]*lazyExpr, n.n)
	l := loader{p: p}
	l.walk(g)
	if len(l.errs) > 0 {
		return p.loadError(errors.Join(l.errs...))
	}
	for _, o := range g.Outputs {
		if err := p.valueReads(o.Value); err != nil {
			return p.loadError(err)
		}
	}
	return nil
}

// OutputReads returns the steps the workflow's outputs read, found once by
// Load, with repeats: a name the scan cannot rule out may be one they do
// not read, but no step they read is missing. The slice is shared: the
// caller must not change it.
//
// A LoadCompiled program that Load would refuse reads none.
func (p *Program) OutputReads() []string {
	if p.indexed() != nil {
		return nil
	}
	return p.outputReads
}

// valueReads adds the steps the expressions of v read to p.outputReads:
// those a scan of the text finds, or, where the scan cannot follow the
// text, those of the compiled expression.
func (p *Program) valueReads(v *graph.Value) error {
	if v == nil {
		return nil
	}
	if v.Template != nil {
		for _, part := range v.Template.Parts {
			if part.Expr == nil {
				continue
			}
			refs, ok := scanStepRefs(part.Expr.CEL, nil)
			if !ok {
				c, err := p.compiledIndexed(part.Expr)
				if err != nil {
					return err
				}
				refs = c.steps
			}
			p.outputReads = append(p.outputReads, refs...)
		}
	}
	for _, el := range v.List {
		if err := p.valueReads(el); err != nil {
			return err
		}
	}
	for _, el := range v.Object {
		if err := p.valueReads(el); err != nil {
			return err
		}
	}
	return nil
}

func (p *Program) loadError(err error) error {
	return fmt.Errorf("loading workflow %s version %s: %w", p.g.Workflow, p.g.Version, err)
}

// loader indexes the expressions of one graph, collecting errors.
type loader struct {
	p     *Program
	errs  []error
	slab  []lazyExpr // lazyExprs are allocated in chunks
	refs  []string   // scratch for scanStepRefs
	count bool       // only count the expressions, in n
	n     int
}

// walk indexes every expression of g (or, when counting, counts them),
// each under the slot the graph's walk names for it.
func (l *loader) walk(g *graph.Graph) { graph.WalkExprs(g, l.expr) }

// expr indexes one expression (the first slot holding a pointer wins) and
// compiles it now when a scan of its text cannot show that every step it
// reads is visible.
func (l *loader) expr(e *graph.Expr, s *graph.Step, slot string) {
	if l.count {
		l.n++ // an expression held in two slots counts twice: a hint
		return
	}
	if _, ok := l.p.lazy[e]; ok {
		return
	}
	if len(l.slab) == cap(l.slab) {
		l.slab = make([]lazyExpr, 0, 256)
	}
	l.slab = append(l.slab, lazyExpr{text: e.CEL, step: s, slot: slot})
	le := &l.slab[len(l.slab)-1]
	l.p.lazy[e] = le
	var ok bool
	l.refs, ok = scanStepRefs(e.CEL, l.refs[:0])
	for _, r := range l.refs {
		ok = ok && l.p.visible(s, slot, r)
	}
	if ok {
		return
	}
	if _, err := l.p.compile(le); err != nil {
		l.errs = append(l.errs, err)
	}
}

// compiled returns the program of an expression of the graph, compiling it
// on first use.
func (p *Program) compiled(e *graph.Expr) (*compiled, error) {
	if err := p.indexed(); err != nil {
		return nil, err
	}
	return p.compiledIndexed(e)
}

// compiledIndexed is compiled once the index is made (by index itself,
// which must not wait for its own once).
func (p *Program) compiledIndexed(e *graph.Expr) (*compiled, error) {
	if c, ok := p.progs[e]; ok {
		return c, nil
	}
	le, ok := p.lazy[e]
	if !ok {
		return nil, fmt.Errorf("expression %q is not part of workflow %s version %s", exprText(e), p.g.Workflow, p.g.Version)
	}
	c, err := p.compile(le)
	if err != nil {
		return nil, p.loadError(err)
	}
	return c, nil
}

// compile compiles a lazy expression once.
func (p *Program) compile(le *lazyExpr) (*compiled, error) {
	le.once.Do(func() {
		le.c, le.err = p.compileNow(le)
	})
	return le.c, le.err
}

func (p *Program) compileNow(le *lazyExpr) (*compiled, error) {
	// The same text in the same environment plans the same program: a
	// chain whose every step has url = "{{ input.base }}/..." checks and
	// plans input.base once, not once per step. The steps the text reads,
	// for its narrow scope, come from a scan, so that a text planned
	// before is not even parsed again.
	if refs, ok := scanStepRefs(le.text, nil); ok {
		if sc := p.narrowScope(le, slices.Compact(slices.Sorted(slices.Values(refs)))); sc != nil {
			if c := sc.Graph.program(sc, le.text); c != nil {
				return c, nil
			}
		}
	}
	pe, diags := ParseExpr(le.text, hcl.Range{})
	if diags.HasErrors() {
		return nil, fmt.Errorf("expression %q in %s: %s", le.text, (&Scope{Where: le.slot}).where(), diags.Error())
	}
	if sc := p.narrowScope(le, pe.StepRefs()); sc != nil {
		if c, se, err := compileIn(pe, le.text, sc, RuntimeCostLimit); err == nil {
			sc.Graph.keepProgram(se, le.text, c)
			return c, nil
		}
	}
	return compileParsed(pe, le.text, p.fullScope(le), RuntimeCostLimit)
}

// fullScope is the scope of the expression's slot, as the compiler saw it.
func (p *Program) fullScope(le *lazyExpr) *Scope {
	var sc *Scope
	if le.step == nil {
		sc = GraphScope(p.g, le.slot)
	} else {
		sc = StepScope(p.g, le.step, le.slot)
	}
	sc.Declared = naming.NamesSorted(p.steps)
	return sc
}

// narrowScope is fullScope with only the steps in refs, or nil when one of
// them is not visible.
func (p *Program) narrowScope(le *lazyExpr, refs []string) *Scope {
	view := &graph.Graph{Inputs: p.g.Inputs, Secrets: p.g.Secrets}
	if le.step == nil {
		for _, r := range refs {
			s, ok := p.steps[r]
			if !ok {
				return nil
			}
			view.Steps = append(view.Steps, s)
		}
		sc := GraphScope(view, le.slot)
		if len(refs) > 0 && sc.Steps == nil {
			return nil
		}
		sc.Graph = p.cel
		return sc
	}
	sc := StepScope(view, le.step, le.slot)
	for _, r := range refs {
		if _, ok := sc.Steps[r]; ok {
			continue // the step itself, under until
		}
		if !p.visible(le.step, le.slot, r) {
			return nil
		}
		sc.Steps[r] = VisibleOutput(p.steps[r])
	}
	sc.Graph = p.cel
	return sc
}

// visible reports whether an expression in a slot of step s (nil: of the
// workflow) can read steps.name: what StepScope and GraphScope make
// visible, without building the scope.
func (p *Program) visible(s *graph.Step, slot, name string) bool {
	if _, ok := p.steps[name]; !ok {
		return false
	}
	if s == nil {
		return slot == SlotOutput || slot == SlotAlert
	}
	if name == s.Name && slot == SlotCompensate {
		return true
	}
	if name == s.Name && s.Until != nil {
		switch slot {
		case SlotUntil, SlotData, SlotIdempotencyKey:
			return true
		}
	}
	return p.ancestor(s, name)
}

// ancestor reports whether s transitively needs the step named name.
// Compiled graphs list every step an expression reads among the reader's
// Needs, so the walk normally ends at the first level.
func (p *Program) ancestor(s *graph.Step, name string) bool {
	for _, n := range s.Needs {
		if n == name {
			return true
		}
	}
	seen := map[string]bool{}
	stack := append([]string(nil), s.Needs...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st, ok := p.steps[n]
		if !ok || seen[n] {
			continue
		}
		if n == name {
			return true
		}
		seen[n] = true
		stack = append(stack, st.Needs...)
	}
	return false
}
