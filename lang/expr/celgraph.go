package expr

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"github.com/flowrun/flowrun/lang/graph"
)

// The CEL environments of one graph.
//
// Building a CEL environment (cel.Env.Extend) costs about 100 µs and 50 KB,
// mostly cel-go's cost model, and the steps an expression sees differ from
// step to step: with one environment per scope, compiling a 1,000-step
// chain built a thousand of them. A celGraph shares environments between
// all the expressions of one graph being compiled or loaded.
//
// A step has the same type from every step that can see it (visibleOutput),
// so in a graph's environments `steps` has one CEL object type whose fields
// are all the graph's steps known so far. The exceptions are a step seen by
// its own until (one item's output) and by its own action data under until
// (any): a scope holding such a type gets a variant of the steps type with
// that field overridden. The environments of a graph then differ only by
// the other variables (input, item, iteration, error, ...) and the
// overrides: a handful per graph.
//
// The steps type holds steps an expression cannot see, but checkRefs has
// already rejected every reference to those, so the checker never selects
// them: the check, its result type and its cost are those of the scope's
// own environment. When a check in the graph's environment fails for any
// reason, checkExpr checks again in the scope's own environment (envFor),
// whose messages are the ones users see.

// graphSeq numbers the graphs' steps types, whose names must not meet.
var graphSeq atomic.Uint64

// maxOverrides bounds the overridden steps of a scope checked in a graph's
// environment; a scope with more uses its own environment.
const maxOverrides = 4

// CelGraph holds the CEL environments of one graph.
type CelGraph struct {
	ot   *objectTypes
	name string // the CEL name of the steps type (variants add a suffix)
	// step returns the type of steps.NAME.output seen from another step
	// (visibleOutput), or nil for a step not (yet) known. It must not
	// change once it returned a type.
	step func(name string) *graph.Type
	// names lists the steps known, for the provider.
	names func() []string

	mu       sync.RWMutex
	envs     map[string]*scopeEnv                   // by variables key
	variants map[string]map[string]*graph.Type      // steps type name → overridden visible types
	byKey    map[string]string                      // overrides key → steps type name
	fields   map[string]map[string]*types.FieldType // steps type name → field → its type
	checks   map[*scopeEnv]map[string]*graph.Type   // shape and field types → result type (checkcache.go)
	programs map[*scopeEnv]map[string]*compiled     // text → its program, planned at run time (program)
	typeIDs  map[*types.Type]int                    // the steps fields' CEL types, numbered
	byOutput map[*graph.Type]*types.FieldType       // a step's output type → its steps field type
}

// NewCelGraph returns the environments of a graph whose steps' visible
// output types step gives.
func NewCelGraph(step func(string) *graph.Type, names func() []string) *CelGraph {
	g := &CelGraph{
		name:     fmt.Sprintf("flowrun.steps_%d", graphSeq.Add(1)),
		step:     step,
		names:    names,
		envs:     map[string]*scopeEnv{},
		variants: map[string]map[string]*graph.Type{},
		byKey:    map[string]string{},
		fields:   map[string]map[string]*types.FieldType{},
		checks:   map[*scopeEnv]map[string]*graph.Type{},
		typeIDs:  map[*types.Type]int{},
		byOutput: map[*graph.Type]*types.FieldType{},
	}
	g.variants[g.name] = nil
	g.byKey[""] = g.name
	return g
}

// provider returns the graph's object types, creating them on first use.
func (g *CelGraph) provider() (*objectTypes, error) {
	b, err := base()
	if err != nil {
		return nil, err
	}
	g.mu.RLock()
	ot := g.ot
	g.mu.RUnlock()
	if ot != nil {
		return ot, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ot == nil {
		g.ot = newObjectTypes(b.CELTypeProvider())
		g.ot.graph = g
	}
	return g.ot, nil
}

// isStepsType reports whether name is one of the graph's steps types.
func (g *CelGraph) isStepsType(name string) bool {
	if !strings.HasPrefix(name, g.name) {
		return false
	}
	g.mu.RLock()
	_, ok := g.variants[name]
	g.mu.RUnlock()
	return ok
}

// stepNames lists the fields of a steps type, sorted.
func (g *CelGraph) stepNames(typeName string) []string {
	g.mu.RLock()
	over := g.variants[typeName]
	g.mu.RUnlock()
	seen := map[string]bool{}
	var names []string
	for _, n := range g.names() {
		seen[n] = true
		names = append(names, n)
	}
	for n := range over {
		if !seen[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// stepField returns the field type of steps.NAME in a steps type, or nil.
// Steps whose results have one type share one CEL type (celType).
func (g *CelGraph) stepField(typeName, name string) *types.FieldType {
	g.mu.RLock()
	f, ok := g.fields[typeName][name]
	over, isOver := g.variants[typeName][name]
	g.mu.RUnlock()
	if ok {
		return f
	}
	t := over
	if !isOver {
		t = g.step(name)
	}
	if t == nil {
		return nil
	}
	// Equal output types are mostly one pointer (the compiler and the
	// decoder share them), and the CEL type of a step's result depends
	// on its output type alone: one field type serves them all.
	g.mu.RLock()
	f = g.byOutput[t]
	g.mu.RUnlock()
	if f == nil {
		f = &types.FieldType{Type: g.ot.celType(StepResultType(t))}
	}
	g.mu.Lock()
	if g.byOutput[t] == nil {
		g.byOutput[t] = f
	}
	if g.fields[typeName] == nil {
		g.fields[typeName] = map[string]*types.FieldType{}
	}
	g.fields[typeName][name] = f
	g.mu.Unlock()
	return f
}

// envFor returns the graph's environment for a scope, or nil when the scope
// overrides too many steps to share one.
func (g *CelGraph) envFor(s *Scope) (*scopeEnv, error) {
	var over map[string]*graph.Type
	for n, t := range s.Steps {
		if known := g.step(n); known == nil || (known != t && !known.Equal(t)) {
			if len(over) == maxOverrides {
				return nil, nil
			}
			if over == nil {
				over = map[string]*graph.Type{}
			}
			over[n] = t
		}
	}
	ot, err := g.provider()
	if err != nil {
		return nil, err
	}
	overKey := overridesKey(over)
	var kb strings.Builder
	kb.Grow(128 + len(overKey))
	s.writeVarsKey(&kb)
	kb.WriteString("|")
	kb.WriteString(overKey)
	key := kb.String()
	g.mu.Lock()
	se, ok := g.envs[key]
	stepsName, known := g.byKey[overKey]
	if !known {
		stepsName = g.name + "_" + strconv.Itoa(len(g.variants))
		g.byKey[overKey] = stepsName
		g.variants[stepsName] = over
	}
	g.mu.Unlock()
	if ok {
		return se, nil
	}
	b, err := base()
	if err != nil {
		return nil, err
	}
	opts := []cel.EnvOption{cel.CustomTypeProvider(ot)}
	for name, t := range scopeVars(s) {
		ct := cel.ObjectType(stepsName)
		if name != "steps" {
			ct = ot.celType(t)
		}
		opts = append(opts, cel.Variable(name, ct))
	}
	env, err := b.Extend(opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the variables of %s: %w", s.where(), err)
	}
	se = &scopeEnv{env: env, types: ot, graph: g, stepsName: stepsName}
	g.mu.Lock()
	if old, ok := g.envs[key]; ok {
		se = old
	} else {
		g.envs[key] = se
	}
	g.mu.Unlock()
	return se, nil
}

// overridesKey is a text equal for equal overrides.
func overridesKey(over map[string]*graph.Type) string {
	if len(over) == 0 {
		return ""
	}
	names := make([]string, 0, len(over))
	for n := range over {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(strconv.Quote(n))
		b.WriteString(":")
		b.WriteString(typeKey(over[n]))
		b.WriteString(";")
	}
	return b.String()
}

// program returns the program planned at run time (Program.compileNow) for
// text in the graph's environment of scope, nil when there is none yet.
func (g *CelGraph) program(scope *Scope, text string) *compiled {
	se, err := g.envFor(scope)
	if err != nil || se == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.programs[se][text]
}

// keepProgram keeps c, text planned in se, for program; a program checked
// in an environment of its own (not the graph's) is not kept.
func (g *CelGraph) keepProgram(se *scopeEnv, text string, c *compiled) {
	if se == nil || se.graph != g {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.programs == nil {
		g.programs = map[*scopeEnv]map[string]*compiled{}
	}
	if g.programs[se] == nil {
		g.programs[se] = map[string]*compiled{}
	}
	g.programs[se][text] = c
}
