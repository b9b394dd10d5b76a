package lang

import (
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// This file holds the helpers every decodeXxxBlock uses: schema checking
// with helpful messages, literal attributes, static references and names.

// content decodes body against schema. Unknown arguments and blocks are
// errors whose Detail suggests the nearest valid name (HCL's own
// suggestion) or, failing that, lists the valid names.
func content(body hcl.Body, schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	if c, ok := fastContent(body, schema); ok {
		return c, nil
	}
	c, diags := body.Content(schema)
	for _, d := range diags {
		switch d.Summary {
		case "Unsupported argument":
			if !strings.Contains(d.Detail, "Did you mean") {
				names := make([]string, 0, len(schema.Attributes))
				for _, a := range schema.Attributes {
					names = append(names, a.Name)
				}
				d.Detail += validNames("arguments", names)
			}
		case "Unsupported block type":
			if !strings.Contains(d.Detail, "Did you mean") {
				names := make([]string, 0, len(schema.Blocks))
				for _, b := range schema.Blocks {
					names = append(names, b.Type)
				}
				d.Detail += validNames("blocks", names)
			}
		case "Missing required argument":
			d.Detail += " Add it to this block."
		}
	}
	return c, diags
}

func validNames(what string, names []string) string {
	if len(names) == 0 {
		return fmt.Sprintf(" No %s are allowed here.", what)
	}
	sort.Strings(names)
	return fmt.Sprintf(" The %s allowed here are %s.", what, naming.QuotedNames(names))
}

// rangeOfBlock is a block's whole range, from its type keyword to its
// closing brace.
func rangeOfBlock(b *hcl.Block) hcl.Range {
	if sb, ok := b.Body.(*hclsyntax.Body); ok {
		return hcl.RangeOver(b.DefRange, sb.SrcRange)
	}
	return b.DefRange
}

// errAt is an error diagnostic with a subject.
func errAt(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	if len(args) > 0 {
		detail = fmt.Sprintf(detail, args...)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()}
}

// posOf renders a range's start as FILE:LINE for "declared at" messages.
func posOf(r hcl.Range) string {
	return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
}

// literal evaluates an attribute that must be a constant: no references,
// no function calls.
func literal(attr *hcl.Attribute) (cty.Value, hcl.Diagnostics) {
	if diags := rejectInterpolation(attr.Expr); diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	if vars := attr.Expr.Variables(); len(vars) > 0 {
		return cty.DynamicVal, hcl.Diagnostics{errAt(vars[0].SourceRange(), "Reference not allowed",
			"The argument %q takes a literal value, not a reference.", attr.Name)}
	}
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	return v, nil
}

func incorrectType(attr *hcl.Attribute, want, example string) *hcl.Diagnostic {
	return errAt(attr.Expr.Range(), "Incorrect value type",
		"The argument %q must be %s, like %s = %s.", attr.Name, want, attr.Name, example)
}

// literalString decodes a string constant.
func literalString(attr *hcl.Attribute) (string, hcl.Diagnostics) {
	v, diags := literal(attr)
	if diags.HasErrors() {
		return "", diags
	}
	if v.IsNull() || v.Type() != cty.String {
		return "", hcl.Diagnostics{incorrectType(attr, "a string", `"..."`)}
	}
	return v.AsString(), nil
}

// literalBool decodes a bool constant.
func literalBool(attr *hcl.Attribute) (bool, hcl.Diagnostics) {
	v, diags := literal(attr)
	if diags.HasErrors() {
		return false, diags
	}
	if v.IsNull() || v.Type() != cty.Bool {
		return false, hcl.Diagnostics{incorrectType(attr, "true or false", "true")}
	}
	return v.True(), nil
}

// literalNumber decodes a number constant that is at least min.
func literalNumber(attr *hcl.Attribute, min float64) (float64, hcl.Diagnostics) {
	v, diags := literal(attr)
	if diags.HasErrors() {
		return 0, diags
	}
	if v.IsNull() || v.Type() != cty.Number {
		return 0, hcl.Diagnostics{incorrectType(attr, "a number", "2")}
	}
	f, _ := v.AsBigFloat().Float64()
	if f < min {
		return 0, hcl.Diagnostics{errAt(attr.Expr.Range(), "Value out of range",
			"The argument %q must be %s or more.", attr.Name, trimFloat(min))}
	}
	return f, nil
}

// literalInt decodes a whole number constant between lo and hi.
func literalInt(attr *hcl.Attribute, lo, hi int64) (int64, hcl.Diagnostics) {
	v, diags := literal(attr)
	if diags.HasErrors() {
		return 0, diags
	}
	if v.IsNull() || v.Type() != cty.Number {
		return 0, hcl.Diagnostics{incorrectType(attr, "a whole number", fmt.Sprint(max(lo, 1)))}
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return 0, hcl.Diagnostics{incorrectType(attr, "a whole number", fmt.Sprint(max(lo, 1)))}
	}
	i, acc := bf.Int64()
	if acc != big.Exact || i < lo || i > hi {
		return 0, hcl.Diagnostics{errAt(attr.Expr.Range(), "Value out of range",
			"The argument %q must be between %d and %d.", attr.Name, lo, hi)}
	}
	return i, nil
}

func trimFloat(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", f), ".0") }

// literalDuration decodes a duration string such as "30s" into
// milliseconds; it must be positive.
func literalDuration(attr *hcl.Attribute) (int64, hcl.Diagnostics) {
	return durationAttr(attr, false)
}

// literalDurationOrZero is literalDuration that also accepts a zero
// duration ("0s"), for interval, backoff and jitter.
func literalDurationOrZero(attr *hcl.Attribute) (int64, hcl.Diagnostics) {
	return durationAttr(attr, true)
}

func durationAttr(attr *hcl.Attribute, zero bool) (int64, hcl.Diagnostics) {
	v, diags := literal(attr)
	if diags.HasErrors() {
		return 0, diags
	}
	if v.IsNull() || v.Type() != cty.String {
		return 0, hcl.Diagnostics{errAt(attr.Expr.Range(), "Incorrect value type",
			"Durations are strings with a unit, like %s = \"30s\".", attr.Name)}
	}
	s := v.AsString()
	if zero && isZeroDuration(s) {
		return 0, nil
	}
	ms, err := ParseDuration(s)
	if err != nil {
		return 0, hcl.Diagnostics{errAt(attr.Expr.Range(), "Invalid duration", "%s", durationHelp(s))}
	}
	return ms, nil
}

// literalEnum decodes a string constant that must be one of allowed.
func literalEnum(attr *hcl.Attribute, allowed ...string) (string, hcl.Diagnostics) {
	s, diags := literalString(attr)
	if diags.HasErrors() {
		return "", diags
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", hcl.Diagnostics{errAt(attr.Expr.Range(), "Invalid "+attr.Name,
		"%q is not a valid %s: use %s.%s", s, attr.Name, orNames(allowed), naming.DidYouMean(s, allowed))}
}

// orNames renders names as "a", "b" or "c".
func orNames(names []string) string {
	q := naming.QuotedNames(names)
	if i := strings.LastIndex(q, " and "); i >= 0 {
		q = q[:i] + " or " + q[i+len(" and "):]
	}
	return q
}

// refDecl is a static reference such as step.charge, with its range.
type refDecl struct {
	Name  string
	Range hcl.Range
}

// staticRef decodes root.NAME (step.charge, breaker.payments).
func staticRef(expr hcl.Expression, root, what string) (refDecl, hcl.Diagnostics) {
	trav, diags := hcl.AbsTraversalForExpr(expr)
	bad := errAt(expr.Range(), "Invalid reference",
		"This must be a reference to a %s, like %s.NAME (without quotes).", what, root)
	if diags.HasErrors() || len(trav) != 2 || trav.RootName() != root {
		if !diags.HasErrors() && len(trav) >= 1 && trav.RootName() == "steps" && root == "step" {
			bad.Detail += " Use step.NAME here: steps.NAME is the CEL variable that reads a step's result."
		}
		return refDecl{}, hcl.Diagnostics{bad}
	}
	attr, ok := trav[1].(hcl.TraverseAttr)
	if !ok {
		return refDecl{}, hcl.Diagnostics{bad}
	}
	return refDecl{Name: attr.Name, Range: trav.SourceRange()}, nil
}

// staticRefList decodes [root.A, root.B, ...].
func staticRefList(attr *hcl.Attribute, root, what string) ([]refDecl, hcl.Diagnostics) {
	exprs, diags := hcl.ExprList(attr.Expr)
	if diags.HasErrors() {
		return nil, hcl.Diagnostics{errAt(attr.Expr.Range(), "Invalid reference list",
			"The argument %q must be a list of %s references, like [%s.NAME].", attr.Name, what, root)}
	}
	var refs []refDecl
	for _, e := range exprs {
		r, d := staticRef(e, root, what)
		diags = append(diags, d...)
		if !d.HasErrors() {
			refs = append(refs, r)
		}
	}
	return refs, diags
}

// checkName checks a block's name label: names that CEL reads as
// steps.NAME or input.NAME must be identifiers.
func checkName(b *hcl.Block, what string) hcl.Diagnostics {
	name := b.Labels[0]
	if !naming.ValidIdent(name) || len(name) > maxNameLen {
		return hcl.Diagnostics{errAt(b.LabelRanges[0], "Invalid "+what+" name",
			"%q cannot be a %s name: use up to 64 letters, digits and underscores, starting with a letter or underscore.", name, what)}
	}
	if reservedNames[name] {
		return hcl.Diagnostics{errAt(b.LabelRanges[0], "Invalid "+what+" name",
			"%q is a reserved word in CEL expressions: choose another %s name.", name, what)}
	}
	return nil
}

// maxNameLen is the longest name of a workflow, step, input, ... or signal.
const maxNameLen = 64

// checkWorkflowName checks a workflow name: letters, digits, "-" and "_",
// starting with a letter.
func checkWorkflowName(name string, rng hcl.Range) hcl.Diagnostics {
	ok := naming.ValidWorkflowName(name)
	if !ok {
		return hcl.Diagnostics{errAt(rng, "Invalid workflow name",
			"%q cannot be a workflow name: use up to 64 letters, digits, \"-\" and \"_\", starting with a letter.", name)}
	}
	return nil
}

// duplicate reports a second declaration, naming the first.
func duplicate(what, name string, first, again hcl.Range) *hcl.Diagnostic {
	article := "A"
	if what != "" && strings.ContainsRune("aeiou", rune(what[0])) {
		article = "An" // an input, an output, an alert
	}
	return errAt(again, "Duplicate "+what,
		"%s %s named %q was already declared at %s. Names must be unique: rename or remove one of them.", article, what, name, posOf(first))
}

// singleBlock reports a second block of a kind that may appear once.
func singleBlock(kind string, first, again *hcl.Block) *hcl.Diagnostic {
	return errAt(again.DefRange, "Duplicate "+kind+" block",
		"Only one %s block is allowed here; the first is at %s. Merge the two blocks.", kind, posOf(first.DefRange))
}

// isZeroDuration reports whether s writes a zero duration: "0" or "0s",
// "0ms", ... with any unit.
func isZeroDuration(s string) bool {
	if s == "0" {
		return true
	}
	t := strings.TrimLeft(s, "0.")
	if s[0] != '0' || t == "" {
		return false
	}
	_, unit := durationUnits[t]
	return unit
}
