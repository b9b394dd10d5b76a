package expr

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// ParsedExpr is a CEL expression that parsed, not yet checked.
type ParsedExpr struct {
	src  string   // the expression text
	loc  ExprLoc  // where it stands in the HCL file
	ast  *cel.Ast // the parsed (unchecked) AST
	refs []varRef // uses of flowrun variables, in source order
	// shape is kept when the tree is shed (checkcache.go); nil otherwise.
	shape *exprShape
}

// varRef is one use of a flowrun variable: the identifier, and the field
// selected on it when there is one (steps.NAME, secrets.NAME).
type varRef struct {
	name  string
	field string
	id    int64 // the selection's expression id (the identifier's without a field)
	ident int64 // the identifier's expression id
}

// ParseExpr parses a control expression. rng is the range of the HCL string
// literal holding it (the quotes included), used to place errors.
func ParseExpr(src string, rng hcl.Range) (*ParsedExpr, hcl.Diagnostics) {
	return parseExprAt(src, ExprLoc{Content: src, Rng: rng})
}

// MaxExprChars is the most characters one CEL expression of a workflow
// file may hold (language.md §15). cel-go's own bound is far higher, and
// its reference parser, which reports a mistake, takes memory many times
// an expression's length: a few expressions at that bound would hold more
// than the whole file's budget.
const MaxExprChars = 16384

// ParseSourceExprAt is parseExprAt for an expression of a workflow file
// being compiled: it also holds the expression to MaxExprChars and
// MaxCELNesting. (The expressions of a stored graph are parsed again
// without these checks, so a graph stored before a limit existed still
// runs.)
func ParseSourceExprAt(src string, loc ExprLoc) (*ParsedExpr, hcl.Diagnostics) {
	if len(src) > MaxExprChars && utf8.RuneCountInString(src) > MaxExprChars {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Expression too long",
			Detail: fmt.Sprintf("This expression holds %d characters, more than the %d flowrun reads of one expression. "+
				"Split it into several steps' values, or pass long data as an input.", utf8.RuneCountInString(src), MaxExprChars),
			Subject: loc.rangeOf(0, len(src)).Ptr(),
		}}
	}
	p, diags := parseExprAt(src, loc)
	if p == nil || diags.HasErrors() {
		return p, diags
	}
	if d := checkCELNesting(p.ast.NativeRep().Expr(), src, loc, p.ast.NativeRep().SourceInfo()); d.HasErrors() {
		return nil, d
	}
	return p, diags
}

// parseExprAt parses src, which stands at loc.
func parseExprAt(src string, loc ExprLoc) (*ParsedExpr, hcl.Diagnostics) {
	if strings.TrimSpace(src) == "" {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Empty expression",
			Detail:   "The expression is empty. Write a CEL expression, for example input.enabled.",
			Subject:  loc.rangeOf(0, len(src)).Ptr(),
		}}
	}
	env, err := base()
	if err != nil {
		return nil, internalDiag(err, loc)
	}
	a, ok := fastParse(env, src)
	if !ok {
		// The fast parser found a mistake (or could not be built): parse
		// again with cel-go's reference parser, whose messages are the
		// ones the diagnostics and the conformance cases are written for.
		var iss *cel.Issues
		a, iss = env.Parse(src)
		if iss.Err() != nil {
			return nil, issueDiags(iss, src, loc, nil, nil)
		}
	}
	p := &ParsedExpr{src: src, loc: loc, ast: a}
	var diags hcl.Diagnostics
	p.refs, diags = collectRefs(a.NativeRep().Expr(), src, loc, a.NativeRep().SourceInfo())
	if diags.HasErrors() {
		return nil, diags
	}
	return p, nil
}

// withAST returns p with its syntax tree: p itself, or, when the tree was
// shed (ParsedTemplate.Shed), a copy parsed again from the text, which
// parses as it did the first time.
func (p *ParsedExpr) withAST() (*ParsedExpr, hcl.Diagnostics) {
	if p.ast != nil {
		return p, nil
	}
	return parseExprAt(p.src, p.loc)
}

// StepRefs returns the names NAME of every steps.NAME the expression uses,
// sorted, without duplicates.
func (p *ParsedExpr) StepRefs() []string { return p.fieldRefs("steps") }

// secretRefs returns the NAMEs of secrets.NAME, sorted, without duplicates.
func (p *ParsedExpr) secretRefs() []string { return p.fieldRefs("secrets") }

func (p *ParsedExpr) fieldRefs(root string) []string {
	// Most expressions select one field of root, or none.
	var one string
	n := 0
	for _, r := range p.refs {
		if r.name == root && r.field != "" && (n == 0 || r.field != one) {
			one = r.field
			n++
		}
	}
	switch n {
	case 0:
		return nil
	case 1:
		return []string{one}
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range p.refs {
		if r.name == root && r.field != "" && !seen[r.field] {
			seen[r.field] = true
			out = append(out, r.field)
		}
	}
	sort.Strings(out)
	return out
}

// collectRefs walks an expression for uses of the flowrun variables,
// leaving out names bound by comprehensions (all(x, ...), map(x, ...)).
// steps['x'] is an error: the step must be named statically as steps.x.
func collectRefs(e ast.Expr, src string, loc ExprLoc, info *ast.SourceInfo) ([]varRef, hcl.Diagnostics) {
	var refs []varRef
	var diags hcl.Diagnostics
	bound := map[string]int{}
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e.Kind() {
		case ast.IdentKind:
			n := e.AsIdent()
			if flowVars[n] && bound[n] == 0 {
				refs = append(refs, varRef{name: n, id: e.ID(), ident: e.ID()})
			}
		case ast.SelectKind:
			sel := e.AsSelect()
			op := sel.Operand()
			if op.Kind() == ast.IdentKind && flowVars[op.AsIdent()] && bound[op.AsIdent()] == 0 {
				refs = append(refs, varRef{name: op.AsIdent(), field: sel.FieldName(), id: e.ID(), ident: op.ID()})
				return
			}
			walk(op)
		case ast.CallKind:
			c := e.AsCall()
			if (c.FunctionName() == operators.Index || c.FunctionName() == operators.OptIndex) && len(c.Args()) == 2 {
				if op := c.Args()[0]; op.Kind() == ast.IdentKind && (op.AsIdent() == "steps" || op.AsIdent() == "secrets") && bound[op.AsIdent()] == 0 {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Dynamic " + op.AsIdent() + " reference",
						Detail: fmt.Sprintf("%s[...] is not supported: the compiler must know which %s the expression uses. Write %s.NAME instead.",
							op.AsIdent(), strings.TrimSuffix(op.AsIdent(), "s"), op.AsIdent()),
						Subject: loc.exprRange(src, info, op.ID()).Ptr(),
					})
				}
			}
			if c.IsMemberFunction() {
				walk(c.Target())
			}
			for _, a := range c.Args() {
				walk(a)
			}
		case ast.ListKind:
			for _, el := range e.AsList().Elements() {
				walk(el)
			}
		case ast.MapKind:
			for _, ent := range e.AsMap().Entries() {
				me := ent.AsMapEntry()
				walk(me.Key())
				walk(me.Value())
			}
		case ast.StructKind:
			for _, f := range e.AsStruct().Fields() {
				walk(f.AsStructField().Value())
			}
		case ast.ComprehensionKind:
			cp := e.AsComprehension()
			walk(cp.IterRange())
			walk(cp.AccuInit())
			vars := []string{cp.IterVar(), cp.AccuVar()}
			if cp.HasIterVar2() {
				vars = append(vars, cp.IterVar2())
			}
			for _, v := range vars {
				bound[v]++
			}
			walk(cp.LoopCondition())
			walk(cp.LoopStep())
			walk(cp.Result())
			for _, v := range vars {
				bound[v]--
			}
		}
	}
	walk(e)
	return refs, diags
}

// CheckExpr type-checks a parsed expression in a scope and against the
// wanted result type (nil: any). It returns the Expr for the graph.
//
// The result type must be assignable to want (a dyn result, such as a field
// of an untyped JSON output, is accepted and checked at run time). The
// expression's estimated worst-case cost must stay under MaxEstimatedCost.
//
// An expression checked like one checked before in the same graph (the
// same tree but for the names of the steps it reads, whose types are the
// same) is not checked again (checkcache.go).
func CheckExpr(p *ParsedExpr, scope *Scope, want *graph.Type) (*graph.Expr, hcl.Diagnostics) {
	if e := checkCached(p, scope, want); e != nil {
		return e, nil
	}
	e, _, se, diags := checkExprEnv(p, scope, want)
	if e != nil && !diags.HasErrors() {
		rememberCheck(p, scope, se, e.Type)
	}
	return e, diags
}

// checkExprEnv is CheckExpr without the cache, also returning the checked
// AST and the environment that checked the expression. A scope of a graph
// is checked in the graph's shared environment; if that fails, the scope's
// own environment checks it again and gives the diagnostics (see
// celgraph.go).
func checkExprEnv(p *ParsedExpr, scope *Scope, want *graph.Type) (*graph.Expr, *cel.Ast, *scopeEnv, hcl.Diagnostics) {
	p, diags := p.withAST()
	if diags.HasErrors() {
		return nil, nil, nil, diags
	}
	if diags := checkRefs(p, scope); diags.HasErrors() {
		return nil, nil, nil, diags
	}
	if scope.Graph != nil {
		se, err := scope.Graph.envFor(scope)
		if err != nil {
			return nil, nil, nil, internalDiag(err, p.loc)
		}
		if se != nil {
			if e, checked, diags := checkIn(se, p, scope, want); !diags.HasErrors() {
				return e, checked, se, nil
			}
		}
	}
	se, err := envFor(scope)
	if err != nil {
		return nil, nil, nil, internalDiag(err, p.loc)
	}
	e, checked, diags := checkIn(se, p, scope, want)
	return e, checked, se, diags
}

// checkIn checks an expression in an environment.
func checkIn(se *scopeEnv, p *ParsedExpr, scope *Scope, want *graph.Type) (*graph.Expr, *cel.Ast, hcl.Diagnostics) {
	checked, iss := se.check(p.ast)
	if iss.Err() != nil {
		return nil, nil, issueDiags(iss, p.src, p.loc, p, &checkContext{scope: scope, env: se})
	}
	rt := se.types.flowType(checked.OutputType())
	if want != nil && !rt.AssignableTo(want) {
		return nil, nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Type mismatch",
			Detail: fmt.Sprintf("%s must have type %s, but this one has type %s. Change the expression so that its result is a %s.",
				upperFirst(scope.what()), want, rt, want),
			Subject: p.loc.rangeOf(0, len(p.src)).Ptr(),
		}}
	}
	if diags := checkCost(se, checked, p, scope); diags.HasErrors() {
		return nil, nil, diags
	}
	text, err := cel.AstToString(p.ast)
	if err != nil {
		return nil, nil, internalDiag(fmt.Errorf("rendering the canonical form of %q: %w", p.src, err), p.loc)
	}
	return &graph.Expr{CEL: text, Type: rt}, checked, nil
}

// checkRefs reports uses of variables the scope does not declare, and of
// steps and secrets it does not know, with messages that say why.
func checkRefs(p *ParsedExpr, scope *Scope) hcl.Diagnostics {
	var diags hcl.Diagnostics
	info := p.ast.NativeRep().SourceInfo()
	reported := map[string]bool{}
	for _, r := range p.refs {
		if why := scope.notVisible(r.name); why != "" {
			if reported[r.name] {
				continue
			}
			reported[r.name] = true
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Variable not visible here",
				Detail:   why,
				Subject:  p.loc.exprRange(p.src, info, r.ident).Ptr(),
			})
			continue
		}
		switch r.name {
		case "steps":
			if r.field == "" {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid steps reference",
					Detail:   "steps must be followed by a step name, as in steps.NAME.output, so that the compiler knows which steps the expression waits for.",
					Subject:  p.loc.exprRange(p.src, info, r.id).Ptr(),
				})
				continue
			}
			if _, ok := scope.Steps[r.field]; !ok {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Unknown step",
					Detail:   scope.unknownStep(r.field),
					Subject:  p.loc.fieldRange(p.src, info, r.id).Ptr(),
				})
			}
		case "secrets":
			if r.field == "" {
				continue
			}
			if !slices.Contains(scope.Secrets, r.field) {
				declared := "This workflow declares no secrets"
				if len(scope.Secrets) > 0 {
					declared = "Declared secrets are " + naming.QuoteList(scope.Secrets)
				}
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Unknown secret",
					Detail: fmt.Sprintf("The workflow declares no secret %q. %s; add a secret %q { env = \"...\" } block to declare it.%s",
						r.field, declared, r.field, naming.DidYouMean(r.field, scope.Secrets)),
					Subject: p.loc.fieldRange(p.src, info, r.id).Ptr(),
				})
			}
		}
	}
	return diags
}

// ListLen returns the number of elements of the expression when it is a
// list literal ([a, b, c]); ok is false for anything else (a reference, a
// call), whose length is known only when it runs.
func (p *ParsedExpr) ListLen() (n int, ok bool) {
	q, diags := p.withAST()
	if diags.HasErrors() || q.ast == nil {
		return 0, false
	}
	e := q.ast.NativeRep().Expr()
	if e.Kind() != ast.ListKind {
		return 0, false
	}
	return len(e.AsList().Elements()), true
}
