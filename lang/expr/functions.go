package expr

import (
	"sort"
	"strings"
)

// Function is a CEL function an expression may call, for tools (the
// language server completes and documents them).
type Function struct {
	Name string
	// Description is cel-go's or flowrun's documentation of the function,
	// "" when it has none.
	Description string
	// Signatures are its overloads, as "string.size() -> int" or
	// "size(list(A)) -> int".
	Signatures []string
}

// Functions returns the functions of the CEL environment every expression
// is checked in (spec/language.md §12), sorted by name. Operators and
// internal functions (whose names are not identifiers) are left out.
func Functions() ([]Function, error) {
	env, err := base()
	if err != nil {
		return nil, err
	}
	var out []Function
	for name, fd := range env.Functions() {
		if !identName(name) {
			continue
		}
		f := Function{Name: name, Description: fd.Description()}
		for _, o := range fd.OverloadDecls() {
			var args []string
			for _, a := range o.ArgTypes() {
				args = append(args, a.String())
			}
			sig := name + "(" + strings.Join(args, ", ") + ")"
			if o.IsMemberFunction() && len(args) > 0 {
				sig = args[0] + "." + name + "(" + strings.Join(args[1:], ", ") + ")"
			}
			f.Signatures = append(f.Signatures, sig+" -> "+o.ResultType().String())
		}
		sort.Strings(f.Signatures)
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// identName reports whether a function name can be written in an
// expression: dotted identifiers (url.raw), not operators (_+_) or
// internal names (@in).
func identName(name string) bool {
	if name == "" {
		return false
	}
	for _, part := range strings.Split(name, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
				return false
			}
		}
		if part[0] == '_' {
			return false
		}
	}
	return true
}
