package lang

import (
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
)

// This file types workflow steps by their child workflows: the child's
// inputs check the step's input object, and the child's outputs are the
// step's output type (language.md §8.6).

// childResolver finds the graph of a child workflow: the newest version a
// pin matches among the workflows being compiled and the stored versions.
type childResolver struct {
	// module holds the graphs compiled so far in this load, by name.
	module map[string]*graph.Graph
	// declared holds the names of every workflow block being loaded, with
	// errors or not yet compiled (a recursion) included.
	declared map[string]bool
	// stored lists a workflow's stored versions; nil: the store is not
	// consulted and a child found nowhere is left unchecked.
	stored func(name string) ([]*graph.Graph, error)
	cache  map[string][]*graph.Graph
	// docs holds the OpenAPI documents the load's openapi actions read
	// (openapi_doc.go).
	docs *docCache
}

// resolve returns the newest graph of workflow name matching pin, or nil.
func (r *childResolver) resolve(name string, pin graph.Pin) (*graph.Graph, error) {
	var cands []*graph.Graph
	if g := r.module[name]; g != nil {
		cands = append(cands, g)
	}
	if r.stored != nil {
		gs, ok := r.cache[name]
		if !ok {
			var err error
			if gs, err = r.stored(name); err != nil {
				return nil, err
			}
			if r.cache == nil {
				r.cache = map[string][]*graph.Graph{}
			}
			r.cache[name] = gs
		}
		cands = append(cands, gs...)
	}
	var best *graph.Graph
	var bestV graph.SemVer
	for _, g := range cands {
		v, err := graph.ParseVersion(g.Version)
		if err != nil || !pin.Matches(v) {
			continue
		}
		if best == nil || v.Compare(bestV) > 0 {
			best, bestV = g, v
		}
	}
	return best, nil
}

// versionsOf lists the versions of workflow name that resolve looked at
// (in the files and, when consulted, the database), lowest first.
func (r *childResolver) versionsOf(name string) []string {
	var gs []*graph.Graph
	if g := r.module[name]; g != nil {
		gs = append(gs, g)
	}
	gs = append(gs, r.cache[name]...)
	seen := map[string]bool{}
	var vs []graph.SemVer
	var out []string
	for _, g := range gs {
		v, err := graph.ParseVersion(g.Version)
		if err != nil || seen[g.Version] {
			continue
		}
		seen[g.Version] = true
		vs = append(vs, v)
		out = append(out, g.Version)
	}
	sort.Sort(byVersion{vs, out})
	return out
}

type byVersion struct {
	v []graph.SemVer
	s []string
}

func (b byVersion) Len() int           { return len(b.v) }
func (b byVersion) Less(i, j int) bool { return b.v[i].Compare(b.v[j]) < 0 }
func (b byVersion) Swap(i, j int) {
	b.v[i], b.v[j] = b.v[j], b.v[i]
	b.s[i], b.s[j] = b.s[j], b.s[i]
}

// majorOf is the MAJOR pin of a version: "1" for "1.2.0".
func majorOf(version string) string {
	major, _, _ := strings.Cut(version, ".")
	return major
}

// checkChild checks a workflow step against its child and returns the
// step's output type: an object of the child's outputs, or any when the
// child is not checked here (no store was given and the child is not in the
// files, the child has errors of its own, or it is being compiled: a
// recursion).
func (c *compiler) checkChild(a *actionDecl, input *graph.Value) *graph.Type {
	r := c.children
	if r == nil || a.Workflow == "" {
		return graph.TypeAny
	}
	pin, err := graph.ParsePin(a.Pin)
	if err != nil {
		return graph.TypeAny // reported when decoded
	}
	child, err := r.resolve(a.Workflow, pin)
	if err != nil {
		c.errorf(a.WorkflowRange, "Cannot read the child workflow",
			"Reading the stored versions of workflow %q failed: %v. Check the database (--db), or apply the child together with this file.", a.Workflow, err)
		return graph.TypeAny
	}
	if child == nil {
		if r.stored == nil || (r.declared[a.Workflow] && r.module[a.Workflow] == nil) {
			// Not looked up in a store; or the child is in the files but
			// has errors of its own, or is being compiled (a recursion).
			return graph.TypeAny
		}
		if vs := r.versionsOf(a.Workflow); len(vs) > 0 {
			c.errorf(a.WorkflowRange, "Unknown child workflow",
				"No version of workflow %q matches %q: the files given and the database hold %s. Pin one of those (version = %q pins its MAJOR), or apply the version the pin names together with this file.",
				a.Workflow, a.Pin, naming.QuoteList(vs), majorOf(vs[len(vs)-1]))
			return graph.TypeAny
		}
		var names []string
		for n := range r.declared {
			names = append(names, n)
		}
		sort.Strings(names)
		c.errorf(a.WorkflowRange, "Unknown child workflow",
			"No workflow %q with a version matching %q is in the files given or in the database.%s Apply it together with this file, which stores both: flowrun apply parent.hcl child.hcl.",
			a.Workflow, a.Pin, naming.DidYouMean(a.Workflow, names))
		return graph.TypeAny
	}
	c.checkChildInput(a, input, child)
	fields := make(map[string]*graph.Type, len(child.Outputs))
	for _, o := range child.Outputs {
		t := o.Type
		if t == nil {
			t = graph.TypeAny
		}
		fields[o.Name] = t
	}
	return graph.ObjectOf(fields)
}

// checkChildInput checks the step's input object against the child's
// declared inputs: every key names an input, every value has its type, and
// every input without a default is given. An input that is a map or any is
// checked when the step runs.
func (c *compiler) checkChildInput(a *actionDecl, input *graph.Value, child *graph.Graph) {
	at := a.WorkflowRange
	if a.Input != nil {
		at = a.Input.Range
	}
	c.checkInputObject(at, a.Input, input, child, inputWords{
		unknown: "Unknown child input", wrongType: "Incorrect child input type", missing: "Missing child input",
		giver: "this step", where: "input = { ... }",
	})
}

// inputWords word checkInputObject's messages for one kind of caller.
type inputWords struct {
	unknown, wrongType, missing string // summaries
	giver                       string // "this step"
	where                       string // where to add a missing input
}

// checkInputObject checks an object of inputs (node as decoded, input as
// compiled; node nil: none given) against the declared inputs of target:
// every key names an input, every value has its type, and every input
// without a default is given. at is where a missing input is reported.
func (c *compiler) checkInputObject(at hcl.Range, node *dataNode, input *graph.Value, target *graph.Graph, w inputWords) {
	declared := map[string]graph.Input{}
	var names []string
	for _, in := range target.Inputs {
		declared[in.Name] = in
		names = append(names, in.Name)
	}
	sort.Strings(names)
	given := map[string]bool{}
	if node != nil {
		if input == nil || input.Type == nil || input.Type.Kind != graph.KindObject {
			return
		}
		keys := make([]string, 0, len(input.Type.Fields))
		for k := range input.Type.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			given[k] = true
			rng := at
			if r, ok := node.Keys[k]; ok {
				rng = r
			}
			in, ok := declared[k]
			if !ok {
				its := "it declares no inputs"
				if len(names) > 0 {
					its = "its inputs are " + naming.QuoteList(names)
				}
				c.errorf(rng, w.unknown,
					"Workflow %q version %s declares no input %q; %s.%s Remove it or fix its name.",
					target.Workflow, target.Version, k, its, naming.DidYouMean(k, names))
				continue
			}
			if t := input.Type.Fields[k]; !t.AssignableTo(in.Type) {
				c.errorf(rng, w.wrongType,
					"Input %q of workflow %q version %s has type %s, but this value is a %s. Give it a %s.",
					k, target.Workflow, target.Version, in.Type, t, in.Type)
			}
		}
	}
	var missing []string
	for _, n := range names {
		if declared[n].Default == nil && !given[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		c.errorf(at, w.missing,
			"Workflow %q version %s requires %s, which %s does not give: add %s to %s.",
			target.Workflow, target.Version, inputsWord(len(missing))+" "+naming.QuoteList(missing), w.giver, itThem(len(missing)), w.where)
	}
}

// itThem is the pronoun of n inputs.
func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func inputsWord(n int) string {
	if n == 1 {
		return "input"
	}
	return "inputs"
}
