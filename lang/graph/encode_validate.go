package graph

// Structural validation of a Graph: what Decode checks before it hands a
// stored graph to the interpreter.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ValidateGraph checks that g is a well-formed graph: a workflow name and a
// MAJOR.MINOR.PATCH version; unique names; known kinds and modes (join,
// on_error, foreach.on_failure, concurrency.on_conflict, alert.on, action
// kinds, type kinds); exactly the action field named by Kind set; every
// Needs, DependsOn and switch target naming a step; DependsOn a subset of
// Needs; every switch target needing its switch step; steps in topological
// order (every need comes earlier); breaker references naming a breaker;
// child workflow pins valid; every value holding exactly one of lit,
// template, list or object. It returns every problem found, joined.
func ValidateGraph(g *Graph) error {
	if g == nil {
		return errors.New("the graph is nil")
	}
	v := &encValidator{}
	v.graph(g)
	if len(v.errs) == 0 {
		return nil
	}
	return fmt.Errorf("graph %q is not valid: %w", g.Workflow, errors.Join(v.errs...))
}

type encValidator struct {
	errs []error
	// typeOK holds the composite types found valid already: a graph shares
	// its types (Decode), and a valid type adds no error wherever it is.
	typeOK map[*Type]bool
}

// encWhere names the place of a problem, as "step \"x\" set.n" or
// "workflow key". It is a value and is only formatted when a problem is
// reported, so checking a valid graph builds no text.
type encWhere struct {
	what  string // "step", "input", ...; the whole text when not named
	name  string // quoted after what when named
	named bool
	sub   string // " when", " set.", ...
	key   string // after sub (the set value's name)
	kase  int    // > 0: " case N" after the rest
}

func encAt(what string) encWhere { return encWhere{what: what} }

func encNamed(what, name string) encWhere { return encWhere{what: what, name: name, named: true} }

// in returns the place sub (" when") within w.
func (w encWhere) in(sub string) encWhere {
	w.sub = sub
	return w
}

func (w encWhere) String() string {
	s := w.what
	if w.named {
		s = fmt.Sprintf("%s %q", w.what, w.name)
	}
	s += w.sub + w.key
	if w.kase > 0 {
		s = fmt.Sprintf("%s case %d", s, w.kase)
	}
	return s
}

func (v *encValidator) add(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

// oneOf checks a mode string against its allowed values.
func (v *encValidator) oneOf(where encWhere, what, got string, allowed ...string) {
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	v.add("%s: %s %q is not valid; use %s", where, what, got, encQuoteList(allowed))
}

func encQuoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

func (v *encValidator) graph(g *Graph) {
	if g.Workflow == "" {
		v.add("the workflow name is empty")
	}
	if _, err := ParseVersion(g.Version); err != nil {
		v.add("workflow version: %w", err)
	}
	names := map[string]bool{}
	for _, in := range g.Inputs {
		where := encNamed("input", in.Name)
		v.unique(names, "input", in.Name)
		v.typ(where, in.Type)
		if in.Default != nil && !json.Valid(in.Default) {
			v.add("%s: the default is not valid JSON", where)
		}
	}
	names = map[string]bool{}
	for _, s := range g.Secrets {
		v.unique(names, "secret", s.Name)
		if s.Env == "" {
			v.add("secret %q: the environment variable name is empty", s.Name)
		}
	}
	v.expr(encAt("workflow key"), g.Key)
	if c := g.Concurrency; c != nil {
		v.expr(encAt("concurrency key"), c.Key)
		if c.Key == nil {
			v.add("concurrency: the key is missing")
		}
		if c.Limit < 1 {
			v.add("concurrency: limit %d is not valid; use 1 or more", c.Limit)
		}
		v.oneOf(encAt("concurrency"), "on_conflict", c.OnConflict, "queue", "skip", "fail")
	}
	breakers := map[string]bool{}
	for _, b := range g.Breakers {
		v.unique(breakers, "breaker", b.Name)
		if b.Failures < 1 {
			v.add("breaker %q: failures %d is not valid; use 1 or more", b.Name, b.Failures)
		}
		if b.OnOpen != "" && b.OnOpen != "fail" {
			v.add("breaker %q: on_open %q is not valid; leave it out (wait) or use \"fail\"", b.Name, b.OnOpen)
		}
	}
	v.steps(g, breakers)
	names = map[string]bool{}
	for _, o := range g.Outputs {
		where := encNamed("output", o.Name)
		v.unique(names, "output", o.Name)
		if o.Value == nil {
			v.add("%s: the value is missing", where)
		}
		v.value(where, o.Value)
		v.typ(where, o.Type)
	}
	names = map[string]bool{}
	for _, a := range g.Alerts {
		where := encNamed("alert", a.Name)
		v.unique(names, "alert", a.Name)
		for _, on := range a.On {
			v.oneOf(where, "on", on, "failed", "interrupted", "dead_lettered", "timed_out")
		}
		v.action(where, &a.Action, nil, "")
	}
	names = map[string]bool{}
	for _, s := range g.Schedules {
		v.schedule(names, s)
	}
	names = map[string]bool{}
	secrets := map[string]bool{}
	for _, s := range g.Secrets {
		secrets[s.Name] = true
	}
	for _, w := range g.Webhooks {
		v.webhook(names, secrets, w)
	}
}

func (v *encValidator) unique(seen map[string]bool, what, name string) {
	if name == "" {
		v.add("a %s has an empty name", what)
		return
	}
	if seen[name] {
		v.add("%s %q is declared more than once", what, name)
	}
	seen[name] = true
}

// encStepAt is what the checks need of the steps of one name: the index of
// the first (a need on it is met by every later step) and the last (whose
// needs a switch target's check reads).
type encStepAt struct {
	first int
	last  *Step
}

func (v *encValidator) steps(g *Graph, breakers map[string]bool) {
	all := make(map[string]encStepAt, len(g.Steps))
	for i, s := range g.Steps {
		if s == nil {
			v.add("step %d is null", i)
			continue
		}
		at, dup := all[s.Name]
		if dup {
			v.add("step %q is declared more than once", s.Name)
			at.last = s
		} else {
			at = encStepAt{first: i, last: s}
		}
		if s.Name == "" {
			v.add("step %d has an empty name", i)
		}
		all[s.Name] = at
	}
	for i, s := range g.Steps {
		if s == nil {
			continue
		}
		where := encNamed("step", s.Name)
		for _, d := range s.Needs {
			at, known := all[d]
			switch {
			case !known:
				v.add("%s needs %q, which is not a step of the workflow", where, d)
			case d == s.Name:
				v.add("%s needs itself", where)
			case at.first >= i:
				// No step of that name comes before this one.
				v.add("%s needs %q, which comes later in the step order: the needs form a cycle, or the steps are not in topological order", where, d)
			}
		}
		if len(s.DependsOn) > 0 {
			v.dependsOn(where, s)
		}
		v.oneOf(where, "join", s.Join, "all", "any", "first")
		v.oneOf(where, "on_error", s.OnError, "fail", "continue")
		v.expr(where.in(" when"), s.When)
		v.action(where, &s.Action, all, s.Name)
		if s.TimeoutMS < 0 {
			v.add("%s: timeout %dms is negative", where, s.TimeoutMS)
		}
		if r := s.Retry; r != nil {
			if r.Attempts < 1 {
				v.add("%s: retry attempts %d is not valid; use 1 or more", where, r.Attempts)
			}
			v.expr(where.in(" retry.when"), r.When)
		}
		if s.Breaker != "" && !breakers[s.Breaker] {
			v.add("%s uses breaker %q, which is not declared", where, s.Breaker)
		}
		if f := s.Foreach; f != nil {
			if f.Items == nil {
				v.add("%s: foreach items are missing", where)
			}
			v.expr(where.in(" foreach.items"), f.Items)
			if f.Concurrency < 1 {
				v.add("%s: foreach concurrency %d is not valid; use 1 or more", where, f.Concurrency)
			}
			v.oneOf(where.in(" foreach"), "on_failure", f.OnFailure, "fail", "continue", "dead_letter")
		}
		if u := s.Until; u != nil {
			if u.Cond == nil {
				v.add("%s: the until condition is missing", where)
			}
			v.expr(where.in(" until"), u.Cond)
			if u.MaxIterations < 1 {
				v.add("%s: max_iterations %d is not valid; use 1 or more", where, u.MaxIterations)
			}
		}
		v.value(where.in(" idempotency_key"), s.IdempotencyKey)
		v.typ(where.in(" output"), s.OutputType)
		for _, c := range s.Catch {
			v.expr(where.in(" catch.when"), c.When)
			for _, t := range c.Next {
				if ts := all[t].last; ts == nil || !slices.Contains(ts.Needs, s.Name) {
					v.add("%s: catch target %q is not a step that lists it in its needs", where, t)
				}
			}
		}
	}
}

// dependsOn checks that every depends_on of s is among its needs.
func (v *encValidator) dependsOn(where encWhere, s *Step) {
	if len(s.Needs) > 16 {
		needs := make(map[string]bool, len(s.Needs))
		for _, d := range s.Needs {
			needs[d] = true
		}
		for _, d := range s.DependsOn {
			if !needs[d] {
				v.add("%s depends on %q but does not list it in needs", where, d)
			}
		}
		return
	}
	for _, d := range s.DependsOn {
		if !slices.Contains(s.Needs, d) {
			v.add("%s depends on %q but does not list it in needs", where, d)
		}
	}
}

// encKinds are the action kinds in the order their blocks are checked.
var encKinds = [...]string{KindExec, KindHTTP, KindSet, KindSleep, KindWait, KindWorkflow, KindFail, KindSwitch}

// encHolds reports whether a holds the block of kind k, and whether k is an
// action kind at all.
func encHolds(a *Action, k string) (set, known bool) {
	switch k {
	case KindExec:
		return a.Exec != nil, true
	case KindHTTP:
		return a.HTTP != nil, true
	case KindSet:
		return a.Set != nil, true
	case KindSleep:
		return a.Sleep != nil, true
	case KindWait:
		return a.Wait != nil, true
	case KindWorkflow:
		return a.Workflow != nil, true
	case KindFail:
		return a.Fail != nil, true
	case KindSwitch:
		return a.Switch != nil, true
	}
	return false, false
}

// action checks an action of step self; steps is nil for alert actions
// (which may not switch).
func (v *encValidator) action(where encWhere, a *Action, steps map[string]encStepAt, self string) {
	own, known := encHolds(a, a.Kind)
	if !known && a.Kind != KindNone {
		v.add("%s: action kind %q is not known; use exec, http, set, sleep, wait, workflow, fail or switch", where, a.Kind)
		return
	}
	for _, k := range encKinds {
		if set, _ := encHolds(a, k); set && k != a.Kind {
			v.add("%s: the action is of kind %q but also holds a %s block", where, a.Kind, k)
		}
	}
	if a.Kind != KindNone && !own {
		v.add("%s: the action is of kind %q but its %s block is missing", where, a.Kind, a.Kind)
		return
	}
	switch a.Kind {
	case KindExec:
		if a.Exec.Command == nil {
			v.add("%s: exec command is missing", where)
		}
		v.value(where.in(" exec.command"), a.Exec.Command)
		v.value(where.in(" exec.dir"), a.Exec.Dir)
		v.value(where.in(" exec.env"), a.Exec.Env)
		v.value(where.in(" exec.stdin"), a.Exec.Stdin)
		for _, name := range a.Exec.PassEnv {
			if !ValidEnvName(name) || strings.HasPrefix(name, ReservedEnvPrefix) {
				v.add("%s: exec pass_env %q is not a variable a program can take from the worker's environment", where, name)
			}
		}
	case KindHTTP:
		if a.HTTP.Method == "" || a.HTTP.Method != strings.ToUpper(a.HTTP.Method) {
			v.add("%s: http method %q is not valid; use an upper-case method such as \"GET\"", where, a.HTTP.Method)
		}
		if a.HTTP.URL == nil {
			v.add("%s: http url is missing", where)
		}
		v.value(where.in(" http.url"), a.HTTP.URL)
		v.value(where.in(" http.headers"), a.HTTP.Headers)
		v.value(where.in(" http.body"), a.HTTP.Body)
		v.value(where.in(" http.query"), a.HTTP.Query)
		if e := a.HTTP.Emit; e != nil {
			if e.Type == nil || e.Source == nil {
				v.add("%s: an emitted event needs a type and a source", where)
			}
			v.value(where.in(" emit.type"), e.Type)
			v.value(where.in(" emit.source"), e.Source)
			v.value(where.in(" emit.subject"), e.Subject)
			v.value(where.in(" emit.data"), e.Data)
		}
		if au := a.HTTP.Auth; au != nil {
			if (au.Bearer == nil) == (au.Username == nil || au.Password == nil) {
				v.add("%s: http auth needs either a bearer token or a username and a password", where)
			}
			v.value(where.in(" http.auth.username"), au.Username)
			v.value(where.in(" http.auth.password"), au.Password)
			v.value(where.in(" http.auth.bearer"), au.Bearer)
		}
	case KindSet:
		for i, e := range a.Set.Values {
			k, val := e.Name, e.Value
			if i > 0 && a.Set.Values[i-1].Name >= k {
				v.add("%s: set value %q is out of order or repeated; the values are sorted by name, each once", where, k)
			}
			if val == nil {
				v.add("%s: set value %q is null", where, k)
			}
			at := where.in(" set.")
			at.key = k
			v.value(at, val)
		}
	case KindSleep:
		if a.Sleep.DurationMS < 0 || (a.Sleep.DurationMS > 0 && a.Sleep.Until != nil) {
			v.add("%s: sleep needs either a duration that is not negative or until, not both", where)
		}
		v.value(where.in(" sleep.until"), a.Sleep.Until)
	case KindWait:
		if a.Wait.Signal == "" {
			v.add("%s: the wait signal name is empty", where)
		}
		v.typ(where.in(" wait.type"), a.Wait.Type)
	case KindWorkflow:
		if a.Workflow.Name == "" {
			v.add("%s: the child workflow name is empty", where)
		}
		if _, err := ParsePin(a.Workflow.Version); err != nil {
			v.add("%s: child workflow version: %w", where, err)
		}
		v.value(where.in(" workflow.input"), a.Workflow.Input)
	case KindFail:
		f := a.Fail
		if f.Message == nil && f.Error == nil {
			v.add("%s: fail message is missing", where)
		}
		v.value(where.in(" fail.message"), f.Message)
		v.value(where.in(" fail.error"), f.Error)
		v.value(where.in(" fail.type"), f.Type)
		v.value(where.in(" fail.status"), f.Status)
		v.value(where.in(" fail.title"), f.Title)
		v.value(where.in(" fail.detail"), f.Detail)
		v.value(where.in(" fail.instance"), f.Instance)
	case KindSwitch:
		v.switchTargets(where, a.Switch, steps, self)
	}
}

func (v *encValidator) switchTargets(where encWhere, sw *SwitchAction, steps map[string]encStepAt, self string) {
	if steps == nil {
		v.add("%s: switch is only allowed as a step action", where)
		return
	}
	check := func(target string) {
		t := steps[target].last
		if t == nil {
			v.add("%s: switch target %q is not a step of the workflow", where, target)
			return
		}
		for _, d := range t.Needs {
			if d == self {
				return
			}
		}
		v.add("%s: switch target %q does not list the switch step in its needs", where, target)
	}
	for i, c := range sw.Cases {
		if c.When == nil {
			v.add("%s: switch case %d has no condition", where, i+1)
		}
		at := where
		at.kase = i + 1
		v.expr(at, c.When)
		for _, t := range c.Next {
			check(t)
		}
	}
	for _, t := range sw.Default {
		check(t)
	}
}

func (v *encValidator) expr(where encWhere, e *Expr) {
	if e == nil {
		return
	}
	if strings.TrimSpace(e.CEL) == "" {
		v.add("%s: the expression is empty", where)
	}
	v.typ(where, e.Type)
}

func (v *encValidator) value(where encWhere, val *Value) {
	if val == nil {
		return
	}
	n := 0
	if val.Lit != nil {
		n++
		if !json.Valid(val.Lit) {
			v.add("%s: the literal is not valid JSON", where)
		}
	}
	if val.Template != nil {
		n++
		for _, p := range val.Template.Parts {
			v.expr(where, p.Expr)
		}
	}
	if val.List != nil {
		n++
		for _, e := range val.List {
			v.value(where, e)
		}
	}
	if val.Object != nil {
		n++
		// In key order, so that the errors of a graph always read the same.
		for _, k := range slices.Sorted(maps.Keys(val.Object)) {
			v.value(where, val.Object[k])
		}
	}
	if n != 1 {
		v.add("%s: a value must hold exactly one of lit, template, list or object, it holds %d", where, n)
	}
	v.typ(where, val.Type)
}

func (v *encValidator) typ(where encWhere, t *Type) {
	if t == nil {
		return
	}
	switch t.Kind {
	case KindString, KindNumber, KindInt, KindBool, KindAny, KindNull:
	case KindList, KindMap, KindObject:
		if v.typeOK[t] {
			return
		}
		errs := len(v.errs)
		if t.Kind == KindObject {
			for _, k := range slices.Sorted(maps.Keys(t.Fields)) {
				f := t.Fields[k]
				v.typ(where, f)
			}
		} else {
			if t.Elem == nil {
				v.add("%s: type %s has no element type", where, t.Kind)
			}
			v.typ(where, t.Elem)
		}
		if len(v.errs) == errs {
			if v.typeOK == nil {
				v.typeOK = map[*Type]bool{}
			}
			v.typeOK[t] = true
		}
	default:
		v.add("%s: type kind %q is not known", where, t.Kind)
	}
}
