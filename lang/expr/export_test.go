package expr

import (
	"cel.dev/cel-go/cel"
	"github.com/flowrun/flowrun/lang/graph"
)

// The external tests reach these through the names below.

type Compiled = compiled
type LazyVars = lazyVars
type SizeEstimator = sizeEstimator

var Base = base
var BoundedBySize = boundedBySize
var CheckExprEnv = checkExprEnv
var CompileExpr = compileExpr
var CtActivation = ctActivation
var CtCheck = ctCheck
var CtFullGraph = ctFullGraph
var CtGraph = ctGraph
var CtStep = ctStep
var FastParse = fastParse
var FromCEL = fromCEL
var ScanStepRefs = scanStepRefs

// Accessors of unexported state, for the external tests.

func (p *Program) Lazy() map[*graph.Expr]*lazyExpr           { return p.lazy }
func (p *Program) Cel() *CelGraph                            { return p.cel }
func (p *Program) FullScope(le *lazyExpr) *Scope             { return p.fullScope(le) }
func (p *Program) Compiled(e *graph.Expr) (*compiled, error) { return p.compiled(e) }
func (le *lazyExpr) Text() string                            { return le.text }
func (le *lazyExpr) C() *compiled                            { return le.c }
func (c *compiled) Vars() map[string]*graph.Type             { return c.vars }
func (c *compiled) ScopeSteps() int                          { return c.scopeSteps }
func (c *compiled) Steps() []string                          { return c.steps }
func (c *compiled) Prg() cel.Program                         { return c.prg }
func (v *lazyVars) Done() map[string]any                     { return v.done }
func (cc *ConvCache) Input() map[string]any                  { return cc.input }
func (cc *ConvCache) Steps() map[string]*convEntry           { return cc.steps }
func (g *CelGraph) Envs() map[string]*scopeEnv               { return g.envs }
func (e *scopeEnv) Env() *cel.Env                            { return e.env }
func (p *Program) Compile(le *lazyExpr) (*compiled, error)   { return p.compile(le) }

// NewProgram is a Program of g holding progs, compiled already.
func NewProgram(g *graph.Graph, progs map[*graph.Expr]*compiled) *Program {
	return &Program{g: g, progs: progs}
}

// NewLazyVars is the activation an expression compiled as c sees of a.
func NewLazyVars(c *compiled, a *Activation) *lazyVars { return &lazyVars{c: c, a: a} }

var CheckRuns = &checkRuns
var NoCheckCache = &noCheckCache
