package lang

import (
	"slices"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// This file decodes pass_env, the list of variables of the worker's
// environment that a workflow's programs take (language.md §2, §8.3). A
// program gets a fixed base list of the worker's variables, flowrun's own
// and its step's env; every other variable of the worker's environment is
// named here or never reaches it (semantics.md §11).

// decodePassEnv decodes pass_env = ["NAME", ...]: a literal list of
// variable names, each valid and none of flowrun's own. The result is
// sorted and without duplicates; nil when the list is empty.
func decodePassEnv(a *hcl.Attribute) ([]string, hcl.Diagnostics) {
	exprs, diags := hcl.ExprList(a.Expr)
	if diags.HasErrors() {
		return nil, hcl.Diagnostics{incorrectType(a, "a list of environment variable names", `["AWS_PROFILE"]`)}
	}
	var names []string
	for _, e := range exprs {
		v, d := literal(&hcl.Attribute{Name: a.Name, Expr: e, Range: e.Range(), NameRange: a.NameRange})
		if d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if v.IsNull() || v.Type() != cty.String {
			diags = append(diags, errAt(e.Range(), "Incorrect value type",
				"Each name in pass_env must be a quoted string, like pass_env = [\"AWS_PROFILE\"]."))
			continue
		}
		switch s := v.AsString(); {
		case !graph.ValidEnvName(s):
			diags = append(diags, errAt(e.Range(), "Invalid environment variable name",
				"%q cannot be an environment variable name: use letters, digits and underscores, starting with a letter or underscore, like pass_env = [\"AWS_PROFILE\"].", s))
		case strings.HasPrefix(s, graph.ReservedEnvPrefix):
			diags = append(diags, errAt(e.Range(), "Reserved environment variable",
				"%q is one of flowrun's own variables: no %s* variable of the worker's environment reaches a program (flowrun sets FLOWRUN_STEP and the others itself). Pass the value under a name of its own, or set it in the step's env.", s, graph.ReservedEnvPrefix))
		default:
			names = append(names, s)
		}
	}
	return sortedNames(names), diags
}

// sortedNames returns the names sorted and without duplicates, nil when
// there are none.
func sortedNames(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	s := slices.Clone(names)
	slices.Sort(s)
	return slices.Compact(s)
}

// mergePassEnv is the pass_env of one exec action: the workflow's list and
// the action's own, sorted and without duplicates (nil when both are
// empty).
func mergePassEnv(workflow, own []string) []string {
	return sortedNames(append(slices.Clip(workflow), own...))
}
