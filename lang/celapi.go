package lang

// THIS FILE IS A TEMPORARY CONTRACT between the helpers building lang: the
// signatures are fixed; the bodies are replaced by the real implementation.

import (
	"context"

	"github.com/hashicorp/hcl/v2"
)

// Scope describes what one expression or template may see.
type Scope struct {
	// Inputs is the object type of `input` (nil: input not visible).
	Inputs *Type
	// Steps are the steps visible as steps.NAME, with their output types
	// (for a foreach step, the list type). nil: `steps` not visible.
	Steps map[string]*Type
	// Item is the type of `item` inside foreach (nil: item and index not
	// visible).
	Item *Type
	// Error makes `error` visible (retry.when).
	Error bool
	// Event makes `event` visible (alert).
	Event bool
	// Secrets are the names visible as secrets.NAME (data templates only).
	Secrets []string
	// Where names the slot for messages: "when", "until", "items", ...
	Where string
}

// ParsedExpr is a CEL expression that parsed, not yet checked.
type ParsedExpr struct{ impl any }

// ParsedTemplate is a string that parsed as a template.
type ParsedTemplate struct{ impl any }

// ParseExpr parses a control expression. rng is the range of the HCL string
// literal holding it (the quotes included), used to place errors.
func ParseExpr(src string, rng hcl.Range) (*ParsedExpr, hcl.Diagnostics) { panic("todo") }

// StepRefs returns the names NAME of every steps.NAME the expression uses,
// sorted, without duplicates.
func (p *ParsedExpr) StepRefs() []string { panic("todo") }

// CheckExpr type-checks a parsed expression in a scope and against the
// wanted result type (nil: any). It returns the Expr for the graph.
func CheckExpr(p *ParsedExpr, scope *Scope, want *Type) (*Expr, hcl.Diagnostics) { panic("todo") }

// ParseTemplate parses a string that may hold {{ expr }} parts.
func ParseTemplate(src string, rng hcl.Range) (*ParsedTemplate, hcl.Diagnostics) { panic("todo") }

// IsTemplate reports whether the string holds at least one {{ }}.
func (p *ParsedTemplate) IsTemplate() bool { panic("todo") }

// StepRefs is as for ParsedExpr, over all the template's expressions.
func (p *ParsedTemplate) StepRefs() []string { panic("todo") }

// SecretRefs returns the secret names the template uses.
func (p *ParsedTemplate) SecretRefs() []string { panic("todo") }

// CheckTemplate type-checks a template; the result type is the
// expression's for a template that is exactly one {{ expr }}, else string.
func CheckTemplate(p *ParsedTemplate, scope *Scope) (*Template, *Type, hcl.Diagnostics) {
	panic("todo")
}

// Program is a Graph with every CEL expression compiled, ready to evaluate.
// It is safe for concurrent use.
type Program struct{ impl any }

// Load compiles every expression of a stored graph.
func Load(g *Graph) (*Program, error) { panic("todo") }

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
	Error     map[string]any // retry.when: {message, kind, exit_code?, status?}
	Event     map[string]any // alert: {kind, message, step}
	Secrets   map[string]string
}

// StepResult is what steps.NAME shows of a finished step.
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

// Eval evaluates a control expression of the program's graph.
func (p *Program) Eval(ctx context.Context, e *Expr, a *Activation) (any, error) {
	panic("todo")
}

// EvalValue evaluates a data value (literals and templates) to JSON-like Go
// values: nil, bool, int64, float64, string, []any, map[string]any.
func (p *Program) EvalValue(ctx context.Context, v *Value, a *Activation) (any, error) {
	panic("todo")
}
