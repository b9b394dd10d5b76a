package graph

import "maps"

// HTTPRequestType is the type of the request part of an http step's
// output: the method, the final URL (after redirects) and the headers the
// request carried, with secrets redacted (language.md §5).
var HTTPRequestType = ObjectOf(map[string]*Type{
	"method": TypeString, "url": TypeString, "headers": MapOf(TypeString),
})

// StepOutput returns the type of one output of step s (one item's, for a
// foreach step) as expressions, mocks and tests see it: s.OutputType with
// the parts its action implies.
//
// An http step's output has a request part that OutputType leaves out: it
// is the same for every http step, so the stored graph need not say it,
// and putting it there would have changed the hash of every http step
// stored before the part existed, so that the same file under the same
// version would be refused as another graph.
func StepOutput(s *Step) *Type {
	t := s.OutputType
	if s.Action.Kind != KindHTTP || t == nil || t.Kind != KindObject {
		return t
	}
	if _, ok := t.Fields["request"]; ok {
		return t
	}
	fields := make(map[string]*Type, len(t.Fields)+1)
	maps.Copy(fields, t.Fields)
	fields["request"] = HTTPRequestType
	return ObjectOf(fields)
}
