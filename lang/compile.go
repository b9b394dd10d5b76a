package lang

import (
	"container/heap"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// This file turns a decoded workflow into a Graph: it resolves references
// into edges, rejects cycles, orders the steps, and then builds and
// type-checks each step in that order (compile_step.go), so that every
// expression is checked against the output types of the steps it reads.

// compiler holds the state of compiling one workflow.
type compiler struct {
	w     *workflowDecl
	g     *graph.Graph
	diags hcl.Diagnostics
	steps map[string]*stepDecl
	// edges[a] lists the steps a waits for, sorted by name, each with the
	// range of the first reference that makes a wait for it (edges.go).
	// A step's list is dropped once the step is built.
	edges map[string][]stepEdge
	// switchOf[t] is the switch step that can choose step t.
	switchOf map[string]string
	// built holds the steps already compiled, by name.
	built map[string]*graph.Step
	// skip holds expressions and templates already reported (a step reading
	// itself), which are not type-checked again.
	skip map[any]bool
	// cel holds the CEL environments shared by the narrow scopes.
	cel *expr.CelGraph
	// children finds the graphs of child workflows; nil: none are checked.
	children *childResolver
	// deferred holds checks whose results no later step's types depend
	// on (the steps' when), run after every step is built.
	deferred []*deferredCheck
	// names lists every declared step, sorted, for messages.
	names []string
	// warned holds the positions already warned about: a retry.when of
	// defaults is checked once per step, and warned about once.
	warned map[hcl.Pos]bool
	// types holds the set steps' output types by their text, so that
	// equal ones are one value (as a decoded graph's are).
	types map[string]*graph.Type
	// docs holds the OpenAPI documents read when the compiler has no
	// load's cache (children nil).
	docs *docCache
}

// sharedType returns the type equal to t that an earlier step's output
// has, or t. Types are never changed once built, and a decoded graph
// shares equal types the same way.
func (c *compiler) sharedType(t *graph.Type) *graph.Type {
	key := t.String()
	if u, ok := c.types[key]; ok && u.Equal(t) {
		return u
	}
	if c.types == nil {
		c.types = map[string]*graph.Type{}
	}
	if _, ok := c.types[key]; !ok {
		c.types[key] = t
	}
	return t
}

// warnOnce adds warnings to the diagnostics, each position only once.
func (c *compiler) warnOnce(ws hcl.Diagnostics) {
	for _, w := range ws {
		if w.Subject != nil {
			if c.warned[w.Subject.Start] {
				continue
			}
			if c.warned == nil {
				c.warned = map[hcl.Pos]bool{}
			}
			c.warned[w.Subject.Start] = true
		}
		c.diags = append(c.diags, w)
	}
}

// deferredCheck is an expression check postponed by deferExpr.
type deferredCheck struct {
	e     *exprDecl
	sc    *scoper
	want  *graph.Type
	set   func(*graph.Expr)
	out   *graph.Expr
	diags hcl.Diagnostics
}

// newCompiler returns the compiler of w with its steps known by name.
func newCompiler(w *workflowDecl, children *childResolver) *compiler {
	c := &compiler{
		children: children,
		w:        w,
		steps:    make(map[string]*stepDecl, len(w.Steps)),
		edges:    make(map[string][]stepEdge, len(w.Steps)),
		switchOf: map[string]string{},
		skip:     map[any]bool{},
		built:    make(map[string]*graph.Step, len(w.Steps)),
	}
	c.cel = expr.NewCelGraph(func(name string) *graph.Type {
		if s := c.built[name]; s != nil {
			return expr.VisibleOutput(s)
		}
		return nil
	}, func() []string { return naming.NamesSorted(c.built) })
	for _, s := range w.Steps {
		c.steps[s.Name] = s
	}
	c.names = naming.NamesSorted(c.steps)
	return c
}

// compileWorkflowWith compiles a decoded workflow. The Graph is nil when the
// workflow has errors (decoding errors included: decodeDiags).
// children types its workflow steps (nil: they are not checked).
func compileWorkflowWith(w *workflowDecl, decodeDiags hcl.Diagnostics, children *childResolver) (*graph.Graph, hcl.Diagnostics) {
	c := newCompiler(w, children)
	c.collectEdges()
	// With a cycle the steps are still built and checked, so that every
	// other mistake is reported with it (language.md §16); the graph is
	// not made.
	order := c.order()
	c.buildHeader()
	for _, s := range order {
		st := c.buildStep(s)
		c.g.Steps = append(c.g.Steps, st)
		c.built[st.Name] = st
		delete(c.edges, s.Name)
		s.release()
	}
	c.runDeferred()
	c.buildOutputs()
	c.buildAlerts()
	c.buildSchedules()
	c.buildWebhooks()
	if c.diags.HasErrors() || decodeDiags.HasErrors() {
		return nil, c.diags
	}
	graph.Seal(c.g)
	c.warnAttemptCap()
	if err := graph.ValidateGraph(c.g); err != nil {
		c.diags = append(c.diags, errAt(w.NameRange, "Internal compiler error",
			"The compiled graph of this workflow is not valid (%v). This is a bug in flowrun; please report it with this file.", err))
		return nil, c.diags
	}
	return c.g, c.diags
}

func (c *compiler) errorf(rng hcl.Range, summary, detail string, args ...any) {
	c.diags = append(c.diags, errAt(rng, summary, detail, args...))
}

// stepNames lists the declared step names, sorted (shared: do not modify).
func (c *compiler) stepNames() []string { return c.names }

// unknownStep reports a static reference to an undeclared step.
func (c *compiler) unknownStep(r refDecl) {
	c.errorf(r.Range, "Unknown step", "No step named %q is declared in workflow %q.%s",
		r.Name, c.w.Name, naming.DidYouMean(r.Name, c.stepNames()))
}

// collectEdges resolves every step reference into edges: the steps each
// expression and template reads (steps.NAME), depends_on, and the switch
// that can choose a step.
func (c *compiler) collectEdges() {
	for _, s := range c.w.Steps {
		add := func(to string, rng hcl.Range) {
			if _, known := c.steps[to]; !known || to == s.Name {
				return // unknown names are reported by CheckExpr/CheckTemplate
			}
			c.edges[s.Name] = append(c.edges[s.Name], stepEdge{to: to, rng: rng})
		}
		exprRefs := func(e *exprDecl, allowSelf bool) {
			if e == nil {
				return
			}
			for _, n := range e.Parsed.StepRefs() {
				if n == s.Name && !allowSelf {
					c.selfReference(s, e.Range, e)
					continue
				}
				add(n, e.Range)
			}
		}
		// In an until step's action data and idempotency key, steps.SELF is
		// the previous iteration's result.
		dataRefs := func(v *dataNode) {
			v.templates(func(n *dataNode) {
				for _, name := range n.Tmpl.StepRefs() {
					if name == s.Name && s.Until != nil {
						continue
					}
					if name == s.Name {
						c.selfReference(s, n.Range, n.Tmpl)
						continue
					}
					add(name, n.Range)
				}
			})
		}
		exprRefs(s.When, false)
		exprRefs(s.Until, true)
		if s.Foreach != nil {
			exprRefs(s.Foreach.Items, false)
		}
		if s.Retry != nil {
			exprRefs(s.Retry.When, false)
		}
		dataRefs(s.IdempotencyKey)
		for _, d := range s.DependsOn {
			switch {
			case d.Name == s.Name:
				c.errorf(d.Range, "Self-reference", "A step cannot depend on itself: remove step.%s from depends_on.", d.Name)
			case c.steps[d.Name] == nil:
				c.unknownStep(d)
			default:
				add(d.Name, d.Range)
			}
		}
		if a := s.Action; a != nil {
			for _, v := range a.dataNodes() {
				dataRefs(v)
			}
			for _, cs := range a.Cases {
				exprRefs(cs.When, false)
			}
			c.switchTargets(s)
		}
		for _, cd := range s.Catch {
			exprRefs(cd.When, false)
			c.catchTargets(s, cd)
		}
	}
	c.sortEdges()
	if r := c.w.Defaults.Retry; r != nil && r.When != nil {
		if refs := r.When.Parsed.StepRefs(); len(refs) > 0 {
			c.errorf(r.When.Range, "Step reference in defaults",
				"The retry condition in defaults applies to every step, so it cannot read steps.%s. Move this condition into the retry block of the steps that need it.", refs[0])
			c.skip[r.When] = true
		}
	}
}

// selfReference reports a step reading its own result outside until.
func (c *compiler) selfReference(s *stepDecl, rng hcl.Range, what any) {
	if c.skip[what] {
		return
	}
	c.skip[what] = true
	c.errorf(rng, "Self-reference",
		"A step cannot read its own result (steps.%s) here. Only a step with until reads itself: in until, steps.%s.output is the latest iteration's output, and in its action the previous iteration's. Read another step here.", s.Name, s.Name)
}

// switchTargets checks a switch's targets and records that each target
// waits for the switch. A step may appear in several branches of one
// switch (it runs when any of them is taken), but can be chosen by one
// switch only.
func (c *compiler) switchTargets(s *stepDecl) {
	var refs []refDecl
	for _, cs := range s.Action.Cases {
		refs = append(refs, cs.Next...)
	}
	refs = append(refs, s.Action.Default...)
	for _, r := range refs {
		switch {
		case r.Name == s.Name:
			c.errorf(r.Range, "Switch targets itself",
				"A switch chooses which of the steps after it run; it cannot choose itself. Remove step.%s from this list.", r.Name)
		case c.steps[r.Name] == nil:
			c.unknownStep(r)
		default:
			if other, taken := c.switchOf[r.Name]; taken && other != s.Name {
				c.errorf(r.Range, "Step chosen by two switches",
					"Step %q is already a branch of the switch in step %q. A step can be chosen by one switch only: add a join step after both switches, or merge the switches.", r.Name, other)
				continue
			}
			c.switchOf[r.Name] = s.Name
			c.edges[r.Name] = append(c.edges[r.Name], stepEdge{to: s.Name, rng: r.Range})
		}
	}
}

// catchTargets checks a catch's targets and records that each waits for
// the step whose error the catch takes.
func (c *compiler) catchTargets(s *stepDecl, cd catchDecl) {
	for _, r := range cd.Next {
		switch {
		case r.Name == s.Name:
			c.errorf(r.Range, "Catch targets its own step",
				"A catch names the steps that run instead of step %q's dependents when it fails; it cannot name the step itself. To try the step again, give it a retry block.", s.Name)
		case c.steps[r.Name] == nil:
			c.unknownStep(r)
		default:
			c.edges[r.Name] = append(c.edges[r.Name], stepEdge{to: s.Name, rng: r.Range})
		}
	}
}

// order returns the steps in topological order, ties broken by name. When
// the steps have a dependency cycle, it reports the cycle and returns every
// step in an order that builds the steps of a cycle after the steps the
// cycle waits for, and each step of a cycle before the steps that wait for
// the cycle (see cyclicOrder).
func (c *compiler) order() []*stepDecl {
	names := c.stepNames() // sorted: a step's index orders it as its name
	index := make(map[string]int, len(names))
	for i, n := range names {
		index[n] = i
	}
	// Kahn's algorithm on "b must finish before a" (a needs b), over
	// indices: indeg[a] counts a's edges, and the steps that need b are
	// users[start[b]:start[b+1]].
	indeg := make([]int, len(names))
	start := make([]int, len(names)+1)
	for a, n := range names {
		indeg[a] = len(c.edges[n])
		for _, e := range c.edges[n] {
			if b, ok := index[e.to]; ok {
				start[b+1]++
			}
		}
	}
	for i := range names {
		start[i+1] += start[i]
	}
	users := make([]int, start[len(names)])
	fill := slices.Clone(start[:len(names)])
	for a, n := range names {
		for _, e := range c.edges[n] {
			if b, ok := index[e.to]; ok {
				users[fill[b]] = a
				fill[b]++
			}
		}
	}
	var ready indexHeap
	for i := range names {
		if indeg[i] == 0 {
			ready.push(i)
		}
	}
	out := make([]*stepDecl, 0, len(names))
	for len(ready) > 0 {
		n := ready.pop()
		out = append(out, c.steps[names[n]])
		for _, u := range users[start[n]:start[n+1]] {
			indeg[u]--
			if indeg[u] == 0 {
				ready.push(u)
			}
		}
	}
	if len(out) == len(names) {
		return out
	}
	c.reportCycles()
	return c.cyclicOrder()
}

// indexHeap is a min-heap of step indices.
type indexHeap []int

func (h *indexHeap) push(i int) {
	*h = append(*h, i)
	s := *h
	for k := len(s) - 1; k > 0; {
		p := (k - 1) / 2
		if s[p] <= s[k] {
			break
		}
		s[p], s[k] = s[k], s[p]
		k = p
	}
}

func (h *indexHeap) pop() int {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for k := 0; ; {
		m, l, r := k, 2*k+1, 2*k+2
		if l < len(s) && s[l] < s[m] {
			m = l
		}
		if r < len(s) && s[r] < s[m] {
			m = r
		}
		if m == k {
			break
		}
		s[k], s[m] = s[m], s[k]
		k = m
	}
	*h = s
	return top
}

// cyclicOrder orders the strongly connected components of the step graph
// topologically (ties broken by their smallest name), and the steps of a
// component by name. A step of a cycle is then built before some of the
// steps it needs: its scopes see those as any (see scoped), so that a cycle
// does not also make every reference along it an error.
func (c *compiler) cyclicOrder() []*stepDecl {
	comps := c.components()
	compOf := map[string]int{}
	for i, comp := range comps {
		for _, n := range comp {
			compOf[n] = i
		}
	}
	// Kahn's algorithm on the components; the heap holds the ready ones
	// by their smallest name, which comps is sorted by.
	indeg := make([]int, len(comps))
	users := make([][]int, len(comps))
	for i, comp := range comps {
		needs := map[int]bool{}
		for _, a := range comp {
			for _, b := range c.edges[a] {
				if j := compOf[b.to]; j != i && !needs[j] {
					needs[j] = true
					users[j] = append(users[j], i)
				}
			}
		}
		indeg[i] = len(needs)
	}
	ready := &stepNameHeap{}
	for i, comp := range comps {
		if indeg[i] == 0 {
			heap.Push(ready, comp[0])
		}
	}
	out := make([]*stepDecl, 0, len(c.steps))
	for ready.Len() > 0 {
		i := compOf[heap.Pop(ready).(string)]
		for _, n := range comps[i] {
			out = append(out, c.steps[n])
		}
		for _, u := range users[i] {
			indeg[u]--
			if indeg[u] == 0 {
				heap.Push(ready, comps[u][0])
			}
		}
	}
	return out
}

// reportCycles reports one cycle per strongly connected component of the
// step graph, starting at the component's smallest name.
func (c *compiler) reportCycles() {
	for _, comp := range c.components() {
		if len(comp) < 2 {
			continue
		}
		in := map[string]bool{}
		for _, n := range comp {
			in[n] = true
		}
		start := comp[0]
		// Breadth-first from start to the first step that needs start.
		parent := map[string]string{start: ""}
		queue := []string{start}
		var last string
		for len(queue) > 0 && last == "" {
			n := queue[0]
			queue = queue[1:]
			for _, e := range c.edges[n] {
				m := e.to
				if m == start {
					last = n
					break
				}
				if _, seen := parent[m]; !seen && in[m] {
					parent[m] = n
					queue = append(queue, m)
				}
			}
		}
		var path []string
		for n := last; n != ""; n = parent[n] {
			path = append([]string{n}, path...)
		}
		path = append(path, start)
		parts := make([]string, len(path))
		for i, n := range path {
			parts[i] = fmt.Sprintf("step %q", n)
		}
		c.errorf(c.edgeRange(path[0], path[1]), "Dependency cycle",
			"These steps wait for each other, so none of them can start: %s (each arrow reads \"waits for\"). Remove one of these references or depends_on entries.",
			strings.Join(parts, " → "))
	}
}

// components returns the strongly connected components of the step graph
// (Tarjan), each sorted by name, in order of their smallest name.
func (c *compiler) components() [][]string {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var comps [][]string
	next := 0
	var visit func(n string)
	visit = func(n string) {
		index[n], low[n] = next, next
		next++
		stack = append(stack, n)
		onStack[n] = true
		for _, e := range c.edges[n] {
			m := e.to
			if _, seen := index[m]; !seen {
				visit(m)
				low[n] = min(low[n], low[m])
			} else if onStack[m] {
				low[n] = min(low[n], index[m])
			}
		}
		if low[n] == index[n] {
			var comp []string
			for {
				m := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[m] = false
				comp = append(comp, m)
				if m == n {
					break
				}
			}
			sort.Strings(comp)
			comps = append(comps, comp)
		}
	}
	for _, n := range c.stepNames() {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	sort.Slice(comps, func(i, j int) bool { return comps[i][0] < comps[j][0] })
	return comps
}

// stepNameHeap is a min-heap of step names.
type stepNameHeap []string

func (h stepNameHeap) Len() int           { return len(h) }
func (h stepNameHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h stepNameHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *stepNameHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *stepNameHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

// buildHeader fills the workflow-level fields of the graph: inputs,
// secrets, key, deadline, concurrency, breakers and limits.
func (c *compiler) buildHeader() {
	w := c.w
	g := &graph.Graph{
		Workflow:    w.Name,
		Version:     w.Version,
		Description: w.Description,
		DeadlineMS:  w.Times.DeadlineMS,
		RetentionMS: w.Times.RetentionMS,
		Breakers:    w.Breakers,
		Limits:      w.Limits,
		Secrets:     w.Secrets,
		Steps:       []*graph.Step{},
	}
	for _, in := range w.Inputs {
		g.Inputs = append(g.Inputs, in.Input)
	}
	sort.Slice(g.Inputs, func(i, j int) bool { return g.Inputs[i].Name < g.Inputs[j].Name })
	sort.Slice(g.Secrets, func(i, j int) bool { return g.Secrets[i].Name < g.Secrets[j].Name })
	sort.Slice(g.Breakers, func(i, j int) bool { return g.Breakers[i].Name < g.Breakers[j].Name })
	c.g = g
	if w.Key != nil {
		g.Key = c.checkExpr(w.Key, c.graphScope(expr.SlotKey), graph.TypeString)
	}
	if cc := w.Concurrency; cc != nil {
		g.Concurrency = &graph.Concurrency{Limit: cc.Limit, OnConflict: cc.OnConflict}
		if cc.Key != nil {
			g.Concurrency.Key = c.checkExpr(cc.Key, c.graphScope(expr.SlotConcurrencyKey), graph.TypeString)
		}
	}
}

// checkExpr type-checks a control expression; nil when it fails.
func (c *compiler) checkExpr(e *exprDecl, sc *scoper, want *graph.Type) *graph.Expr {
	if e == nil || c.skip[e] {
		return nil
	}
	out, diags := checkExprDiags(e, sc, want)
	c.diags = append(c.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	return out
}

// checkExprDiags type-checks a control expression in the narrowest scope
// that holds its references, and again with everything visible when that
// fails, for messages that list what is there. It writes nothing to the
// compiler.
func checkExprDiags(e *exprDecl, sc *scoper, want *graph.Type) (*graph.Expr, hcl.Diagnostics) {
	out, diags := expr.CheckExpr(e.Parsed, sc.narrow(e.Parsed.StepRefs()), want)
	if diags.HasErrors() {
		if o, d := expr.CheckExpr(e.Parsed, sc.full(), want); d.HasErrors() {
			diags = d
		} else {
			out, diags = o, d
		}
	}
	return out, diags
}

// deferExpr checks e like checkExpr, later: set receives the result once
// every step is built. Only a check whose result no other step's type
// depends on may be deferred.
func (c *compiler) deferExpr(e *exprDecl, sc *scoper, want *graph.Type, set func(*graph.Expr)) {
	if e == nil || c.skip[e] {
		return
	}
	c.deferred = append(c.deferred, &deferredCheck{e: e, sc: sc, want: want, set: set})
}

// runDeferred runs the deferred checks: the steps' types are all known and
// nothing is written to the compiler while they run, so a large workflow's
// checks are spread over the processors (each goroutine takes the next
// check until none is left, and ends before runDeferred returns). Results
// and diagnostics are then recorded in the order the checks were deferred.
func (c *compiler) runDeferred() {
	checks := c.deferred
	c.deferred = nil
	run := func(d *deferredCheck) { d.out, d.diags = checkExprDiags(d.e, d.sc, d.want) }
	workers := min(runtime.GOMAXPROCS(0), len(checks)/graph.ParallelStepDecode)
	if workers < 2 {
		for _, d := range checks {
			run(d)
		}
	} else {
		var next atomic.Int64
		work := func() {
			for i := int(next.Add(1)) - 1; i < len(checks); i = int(next.Add(1)) - 1 {
				run(checks[i])
			}
		}
		var wg sync.WaitGroup
		for range workers - 1 {
			wg.Go(work)
		}
		work()
		wg.Wait()
	}
	for _, d := range checks {
		c.diags = append(c.diags, d.diags...)
		if !d.diags.HasErrors() {
			d.set(d.out)
		}
	}
}

// buildOutputs checks the workflow outputs against every step.
func (c *compiler) buildOutputs() {
	scope := c.graphScope(expr.SlotOutput)
	for _, o := range c.w.Outputs {
		v := c.checkData(o.Value, scope)
		if v == nil {
			v = &graph.Value{Lit: []byte("null"), Type: graph.TypeNull}
		}
		c.g.Outputs = append(c.g.Outputs, graph.Output{Name: o.Name, Value: v, Type: v.Type})
	}
	sort.Slice(c.g.Outputs, func(i, j int) bool { return c.g.Outputs[i].Name < c.g.Outputs[j].Name })
}

// buildAlerts checks the alerts' actions; they see every step, event and
// secrets.
func (c *compiler) buildAlerts() {
	for _, al := range c.w.Alerts {
		a := graph.Alert{Name: al.Name, On: al.On}
		if al.Action != nil {
			a.Action, _ = c.buildAction(al.Action, c.graphScope(expr.SlotAlert))
		}
		c.g.Alerts = append(c.g.Alerts, a)
	}
	sort.Slice(c.g.Alerts, func(i, j int) bool { return c.g.Alerts[i].Name < c.g.Alerts[j].Name })
}

// scoper gives the scope of one slot in two sizes. narrow sees only the
// given steps (those an expression references, which are all it can use):
// CEL environments are built per distinct scope, so a scope holding every
// ancestor would make compiling a long chain quadratic. full sees
// everything the slot may see, and is used to word messages after a
// failed check.
type scoper struct {
	full   func() *expr.Scope
	narrow func(refs []string) *expr.Scope
}

// view is a graph holding only the compiled steps named by refs, for
// narrowed scopes.
func (c *compiler) view(refs []string) *graph.Graph {
	v := &graph.Graph{Inputs: c.g.Inputs, Secrets: c.g.Secrets}
	for _, r := range refs {
		if s := c.built[r]; s != nil {
			v.Steps = append(v.Steps, s)
		}
	}
	return v
}

// stepScope is the scoper of one of a step's slots (see StepScope).
func (c *compiler) stepScope(st *graph.Step, slot string) *scoper {
	var cached *expr.Scope
	return &scoper{
		full: func() *expr.Scope {
			if cached == nil {
				cached = c.scoped(expr.StepScope(c.g, st, slot), st.Needs)
			}
			return cached
		},
		narrow: func(refs []string) *expr.Scope {
			sc := c.scoped(expr.StepScope(c.view(refs), st, slot), refs)
			sc.Graph = c.cel
			return sc
		},
	}
}

// scoped completes a scope of the compiler's: it knows every declared step,
// for messages about unknown ones. And a step of a dependency cycle (already
// reported) is built before some of the steps it needs (cyclicOrder): of
// needs, the steps it may see, those not built yet are seen as any rather
// than not at all, so that reading them is not reported again as reading
// an unknown step.
func (c *compiler) scoped(sc *expr.Scope, needs []string) *expr.Scope {
	sc.Declared = c.stepNames()
	if sc.Steps == nil {
		return sc
	}
	for _, n := range needs {
		if _, seen := sc.Steps[n]; !seen && c.built[n] == nil && c.steps[n] != nil {
			sc.Steps[n] = graph.TypeAny
		}
	}
	return sc
}

// graphScope is the scoper of a workflow-level slot (see GraphScope).
func (c *compiler) graphScope(slot string) *scoper {
	var cached *expr.Scope
	return &scoper{
		full: func() *expr.Scope {
			if cached == nil {
				cached = c.scoped(expr.GraphScope(c.g, slot), nil)
			}
			return cached
		},
		narrow: func(refs []string) *expr.Scope {
			sc := c.scoped(expr.GraphScope(c.view(refs), slot), nil)
			sc.Graph = c.cel
			return sc
		},
	}
}
