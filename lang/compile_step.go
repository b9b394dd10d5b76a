package lang

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/hashicorp/hcl/v2"
)

// This file builds one step of the graph from its declaration: defaults,
// edges, type-checked expressions and templates, and the output type.

// Output types of the actions (see the language brief).
var (
	execOutputType = graph.ObjectOf(map[string]*graph.Type{
		"exit_code": graph.TypeInt, "stdout": graph.TypeString, "stderr": graph.TypeString, "json": graph.TypeAny,
	})
	httpOutputType = graph.ObjectOf(map[string]*graph.Type{
		"status": graph.TypeInt, "headers": graph.MapOf(graph.TypeString), "body": graph.TypeAny,
	})
	sleepOutputType = graph.ObjectOf(map[string]*graph.Type{"woke_at": graph.TypeString})
)

// Built-in retry settings, used when neither the step's retry block nor
// the defaults' set a field.
const (
	defaultRetryAttempts   = 1
	defaultRetryBackoffMS  = 1000
	defaultRetryMultiplier = 2
)

// buildStep builds and checks one step. g.Steps holds every step it may
// read, with output types.
func (c *compiler) buildStep(sd *stepDecl) *graph.Step {
	st := &graph.Step{Name: sd.Name, Join: "all", OnError: "fail"}
	if sd.Join != "" {
		st.Join = sd.Join
	}
	if sd.OnError != "" {
		st.OnError = sd.OnError
	}
	st.Needs = edgeNames(c.edges[sd.Name])
	deps := map[string]bool{}
	for _, d := range sd.DependsOn {
		if c.steps[d.Name] != nil && d.Name != sd.Name && !deps[d.Name] {
			deps[d.Name] = true
			st.DependsOn = append(st.DependsOn, d.Name)
		}
	}
	sort.Strings(st.DependsOn)
	if sd.Action != nil {
		st.Action.Kind = sd.Action.Kind
	}

	// A when decides whether the step runs, not its output's type: it is
	// checked after every step is built, in parallel in a large workflow.
	c.deferExpr(sd.When, c.stepScope(st, expr.SlotWhen), graph.TypeBool, func(e *graph.Expr) { st.When = e })
	if f := sd.Foreach; f != nil {
		st.Foreach = &graph.Foreach{Concurrency: f.Concurrency, OnFailure: f.OnFailure}
		st.Foreach.Items = c.checkExpr(f.Items, c.stepScope(st, expr.SlotItems), graph.ListOf(graph.TypeAny))
	}

	if sd.Until != nil {
		// Set before the action is checked: its data sees iteration and
		// the previous iteration's result.
		st.Until = &graph.Until{IntervalMS: sd.IntervalMS, MaxIterations: graph.DefaultMaxIterations}
		if sd.MaxIterations > 0 {
			st.Until.MaxIterations = sd.MaxIterations
		}
	}
	st.OutputType = graph.TypeNull
	if sd.Action != nil {
		// The output type of every kind but set is fixed; an until step's
		// data sees its own previous iteration with it.
		st.OutputType = fixedOutputType(sd.Action.Kind)
		st.Action, st.OutputType = c.buildAction(sd.Action, c.stepScope(st, expr.SlotData))
		if sd.Action.Kind == graph.KindSwitch {
			st.Action.Switch = c.buildSwitch(sd.Action, c.stepScope(st, expr.SlotCaseWhen))
		}
	}

	switch {
	case sd.TimeoutMS > 0:
		st.TimeoutMS = sd.TimeoutMS
	case st.Action.Kind == graph.KindExec || st.Action.Kind == graph.KindHTTP:
		st.TimeoutMS = c.w.Defaults.TimeoutMS
		if st.TimeoutMS == 0 {
			st.TimeoutMS = graph.DefaultTimeoutMS
		}
	}
	st.Retry = c.buildRetry(sd.Retry, st)
	if b := sd.Breaker; b != nil {
		known := make([]string, 0, len(c.g.Breakers))
		for _, br := range c.g.Breakers {
			known = append(known, br.Name)
		}
		if naming.ContainsName(known, b.Name) {
			st.Breaker = b.Name
		} else {
			c.errorf(b.Range, "Unknown breaker", "No breaker named %q is declared in workflow %q: add a breaker %q { failures = 3, cooldown = \"30s\" } block.%s",
				b.Name, c.w.Name, b.Name, naming.DidYouMean(b.Name, known))
		}
	}
	if sd.Until != nil {
		st.Until.Cond = c.checkExpr(sd.Until, c.stepScope(st, expr.SlotUntil), graph.TypeBool)
	}
	c.buildCatch(sd, st)
	c.buildCompensate(sd, st)
	c.checkSettings(sd)
	c.checkLimits(sd, st)
	if sd.IdempotencyKey != nil {
		v := c.checkData(sd.IdempotencyKey, c.stepScope(st, expr.SlotIdempotencyKey))
		c.wantText(v, sd.IdempotencyKey, "idempotency_key")
		st.IdempotencyKey = v
	}
	return st
}

// buildCatch checks a step's catch blocks and its join = "first".
func (c *compiler) buildCatch(sd *stepDecl, st *graph.Step) {
	if st.Join == "first" && len(st.Needs) < 2 {
		c.errorf(sd.Settings["join"], "Race with one dependency",
			"join = \"first\" starts the step when the first of its dependencies completes and cancels the others, so it needs two or more; step %q has %d. Remove join, or add the steps that race.", sd.Name, len(st.Needs))
	}
	if len(sd.Catch) == 0 {
		return
	}
	if why := cannotFail(sd, st); why != "" {
		c.errorf(sd.Catch[0].Range, "Catch on a step that cannot fail",
			"Step %q %s, so a catch on it would never run. Remove the catch, or put it on the step that can fail.", sd.Name, why)
	}
	scope := c.stepScope(st, expr.SlotCatchWhen)
	for _, cd := range sd.Catch {
		gc := graph.Catch{Next: []string{}}
		if cd.When != nil {
			if gc.When = c.checkExpr(cd.When, scope, graph.TypeBool); gc.When != nil {
				c.warnOnce(cd.When.Parsed.ErrorFieldWarnings(expr.CatchWhenFails))
			}
		}
		for _, r := range cd.Next {
			if c.steps[r.Name] != nil && r.Name != sd.Name && !naming.ContainsName(gc.Next, r.Name) {
				gc.Next = append(gc.Next, r.Name)
			}
		}
		sort.Strings(gc.Next)
		st.Catch = append(st.Catch, gc)
	}
}

// buildCompensate checks a step's compensate block: its action sees the
// step's own result and the run's error (semantics.md §14).
func (c *compiler) buildCompensate(sd *stepDecl, st *graph.Step) {
	cd := sd.Compensate
	if cd == nil || cd.Action == nil {
		return
	}
	switch cd.Action.Kind {
	case graph.KindExec, graph.KindHTTP, graph.KindWorkflow:
	default:
		return // reported when decoded
	}
	switch st.Action.Kind {
	case graph.KindNone, graph.KindSwitch, graph.KindFail:
		c.errorf(cd.Range, "Nothing to compensate",
			"A compensation undoes what a step did once it completed; step %q %s. Put the compensate block on the step whose side effect it undoes.",
			sd.Name, map[string]string{graph.KindNone: "has no action", graph.KindSwitch: "is a switch", graph.KindFail: "never completes"}[st.Action.Kind])
		return
	}
	comp := &graph.Compensate{OnCancel: cd.OnCancel, TimeoutMS: cd.TimeoutMS}
	st.Compensate = comp // the scope of its data reads the kind of its action
	// It reads the step and the steps before it: those that completed
	// when it did. A later step may not have run at all.
	visible := expr.StepScope(c.g, st, expr.SlotCompensate).Steps
	bad := false
	for _, v := range cd.Action.dataNodes() {
		v.templates(func(n *dataNode) {
			for _, name := range n.Tmpl.StepRefs() {
				if _, ok := visible[name]; !ok && !bad && c.steps[name] != nil {
					bad = true
					c.errorf(n.Range, "Step not visible",
						"A compensation of step %q reads that step and the steps it waits for, which completed before it; step %q does not come before %q and may not have run. Read it from a step after both, or pass what the compensation needs through step %q's output.", sd.Name, name, sd.Name, sd.Name)
				}
			}
		})
	}
	if bad {
		st.Compensate = nil
		return
	}
	comp.Action.Kind = cd.Action.Kind
	comp.Action, _ = c.buildAction(cd.Action, c.stepScope(st, expr.SlotCompensate))
	if comp.TimeoutMS == 0 && comp.Action.Kind != graph.KindWorkflow {
		comp.TimeoutMS = st.TimeoutMS
		if comp.TimeoutMS == 0 {
			comp.TimeoutMS = c.w.Defaults.TimeoutMS
		}
		if comp.TimeoutMS == 0 {
			comp.TimeoutMS = graph.DefaultTimeoutMS
		}
	}
	if cd.Retry != nil {
		tmp := *st
		tmp.Action = graph.Action{Kind: comp.Action.Kind}
		comp.Retry = c.buildRetry(cd.Retry, &tmp)
	}
}

// buildAuth checks an http block's auth: text values, no Authorization
// header beside it, and a warning for a credential that is not read from
// a secret.
func (c *compiler) buildAuth(a *actionDecl, scope *scoper) *graph.HTTPAuth {
	ad := a.Auth
	if ad == nil {
		return nil
	}
	if h := a.Headers; h != nil {
		for k, rng := range h.Keys {
			if strings.EqualFold(k, "Authorization") {
				c.errorf(rng, "Conflicting Authorization",
					"The auth block sets the Authorization header, so headers cannot set it too: remove %q from headers, or the auth block.", k)
			}
		}
	}
	au := &graph.HTTPAuth{}
	for _, f := range []struct {
		dst    **graph.Value
		n      *dataNode
		name   string
		secret bool
	}{{&au.Username, ad.Username, "username", false}, {&au.Password, ad.Password, "password", true}, {&au.Bearer, ad.Bearer, "bearer", true}} {
		if f.n == nil {
			continue
		}
		*f.dst = c.checkData(f.n, scope)
		c.wantText(*f.dst, f.n, f.name)
		if f.secret && !readsSecret(f.n) {
			c.diags = append(c.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Credential not from a secret",
				Detail:  fmt.Sprintf("This %s is written in the workflow, so it is stored with the version and shown by graph and plan, where anyone who can read them sees it. Declare a secret (secret \"token\" { env = \"API_TOKEN\" }) and write %s = \"{{ secrets.token }}\": a secret is read when the request is sent, and never stored or printed.", f.name, f.name),
				Subject: f.n.Range.Ptr()})
		}
	}
	return au
}

// readsSecret reports whether a data value reads secrets.* in one of its
// templates.
func readsSecret(n *dataNode) bool {
	found := false
	n.templates(func(t *dataNode) {
		found = found || len(t.Tmpl.SecretRefs()) > 0
	})
	return found
}

// cannotFail says why a step can never fail ("" when it can): a step
// without an action, a switch, a fail step (whose error is raised to
// end the run or to be caught by whoever runs it as a child), a sleep
// of a literal duration and a set of literal values, none with a when,
// foreach or until that could fail.
func cannotFail(sd *stepDecl, st *graph.Step) string {
	if sd.When != nil || sd.Foreach != nil || sd.Until != nil {
		return ""
	}
	switch st.Action.Kind {
	case graph.KindNone:
		return "has no action"
	case graph.KindSwitch:
		return "is a switch"
	case graph.KindFail:
		return "is a fail step, which raises its error for the run (or for a parent run that catches its child's failure)"
	case graph.KindSleep:
		if st.Action.Sleep.Until == nil {
			return "sleeps for a fixed duration"
		}
	case graph.KindSet:
		for _, nv := range st.Action.Set.Values {
			if nv.Value.Lit == nil {
				return ""
			}
		}
		return "sets only literal values"
	}
	return ""
}

// fixedOutputType is the output type of an action kind whose output does
// not depend on its attributes; nil for set.
func fixedOutputType(kind string) *graph.Type {
	switch kind {
	case graph.KindExec:
		return execOutputType
	case graph.KindHTTP, kindOpenAPI:
		return httpOutputType
	case kindEmit:
		return emitOutputType
	case graph.KindSleep:
		return sleepOutputType
	case graph.KindWait, graph.KindWorkflow:
		return graph.TypeAny
	case graph.KindSwitch:
		return graph.TypeString
	case graph.KindSet:
		return nil
	}
	return graph.TypeNull
}

// buildRetry merges the step's retry block over the defaults' field by
// field; nil when neither has one. The defaults' retry applies only to
// exec, http and workflow steps (the actions that can fail transiently); a
// step of another kind retries only when it has its own retry block.
func (c *compiler) buildRetry(own *retryDecl, st *graph.Step) *graph.Retry {
	def := c.w.Defaults.Retry
	switch st.Action.Kind {
	case graph.KindExec, graph.KindHTTP, graph.KindWorkflow:
	default:
		def = nil // the defaults' retry is for actions that can fail transiently
	}
	if own == nil && def == nil {
		return nil
	}
	if own == nil {
		own = &retryDecl{}
	}
	if def == nil {
		def = &retryDecl{}
	}
	r := &graph.Retry{Attempts: defaultRetryAttempts, BackoffMS: defaultRetryBackoffMS, Multiplier: defaultRetryMultiplier}
	pickInt := func(a, b *int, dst *int) {
		if a != nil {
			*dst = *a
		} else if b != nil {
			*dst = *b
		}
	}
	pick64 := func(a, b *int64, dst *int64) {
		if a != nil {
			*dst = *a
		} else if b != nil {
			*dst = *b
		}
	}
	pickInt(own.Attempts, def.Attempts, &r.Attempts)
	pick64(own.BackoffMS, def.BackoffMS, &r.BackoffMS)
	pick64(own.MaxDelayMS, def.MaxDelayMS, &r.MaxDelayMS)
	pick64(own.JitterMS, def.JitterMS, &r.JitterMS)
	if own.Multiplier != nil {
		r.Multiplier = *own.Multiplier
	} else if def.Multiplier != nil {
		r.Multiplier = *def.Multiplier
	}
	when := own.When
	if when == nil {
		when = def.When
	}
	r.When = c.checkExpr(when, c.stepScope(st, expr.SlotRetryWhen), graph.TypeBool)
	if r.When != nil {
		c.warnOnce(when.Parsed.ErrorFieldWarnings(expr.RetryWhenFails))
	}
	return r
}

// buildSwitch checks a switch's cases.
func (c *compiler) buildSwitch(a *actionDecl, scope *scoper) *graph.SwitchAction {
	sw := &graph.SwitchAction{Cases: []graph.SwitchCase{}}
	for _, cs := range a.Cases {
		sc := graph.SwitchCase{Next: []string{}}
		sc.When = c.checkExpr(cs.When, scope, graph.TypeBool)
		for _, r := range cs.Next {
			if c.steps[r.Name] != nil && !naming.ContainsName(sc.Next, r.Name) {
				sc.Next = append(sc.Next, r.Name)
			}
		}
		sort.Strings(sc.Next)
		sw.Cases = append(sw.Cases, sc)
	}
	for _, r := range a.Default {
		if c.steps[r.Name] != nil && !naming.ContainsName(sw.Default, r.Name) {
			sw.Default = append(sw.Default, r.Name)
		}
	}
	sort.Strings(sw.Default)
	return sw
}

// buildAction builds a step's or an alert's action with its data checked
// in scope, and returns its output type. A switch's cases are built by
// buildSwitch.
func (c *compiler) buildAction(a *actionDecl, scope *scoper) (graph.Action, *graph.Type) {
	act := graph.Action{Kind: a.Kind}
	switch a.Kind {
	case graph.KindExec:
		x := &graph.ExecAction{Shell: a.Shell, PassEnv: mergePassEnv(c.w.PassEnv, a.PassEnv)}
		x.Command = c.checkData(a.Command, scope)
		c.wantCommand(x.Command, a.Command, a.Shell)
		x.Dir = c.checkData(a.Dir, scope)
		c.wantText(x.Dir, a.Dir, "dir")
		x.Env = c.checkData(a.Env, scope)
		c.wantTextMap(x.Env, a.Env, "env")
		x.Stdin = c.checkData(a.Stdin, scope)
		c.wantText(x.Stdin, a.Stdin, "stdin")
		act.Exec = x
		return act, execOutputType
	case graph.KindHTTP:
		h := &graph.HTTPAction{Method: a.Method, Expect: a.Expect, NoRedirects: a.NoRedirects}
		h.URL = c.checkData(a.URL, scope)
		c.wantText(h.URL, a.URL, "url")
		c.checkURL(h.URL, a.URL)
		h.Query = c.checkData(a.Query, scope)
		c.wantTextMap(h.Query, a.Query, "query")
		h.Headers = c.checkData(a.Headers, scope)
		c.wantTextMap(h.Headers, a.Headers, "headers")
		h.Body = c.checkData(a.Body, scope)
		h.Auth = c.buildAuth(a, scope)
		act.HTTP = h
		return act, httpOutputType
	case graph.KindSet:
		s := &graph.SetAction{Values: make(graph.NamedValues, 0, len(a.Values))}
		fields := map[string]*graph.Type{}
		for _, nv := range a.Values {
			v := c.checkData(nv.Node, scope)
			if v == nil {
				// Its value did not parse (reported): the field stays,
				// of type any.
				fields[nv.Name] = graph.TypeAny
				continue
			}
			s.Values = append(s.Values, graph.NamedValue{Name: nv.Name, Value: v})
			fields[nv.Name] = v.Type
		}
		act.Set = s
		return act, c.sharedType(graph.ObjectOf(fields))
	case graph.KindSleep:
		s := &graph.SleepAction{DurationMS: a.DurationMS}
		s.Until = c.checkData(a.SleepUntil, scope)
		c.wantText(s.Until, a.SleepUntil, "until")
		act.Sleep = s
		return act, sleepOutputType
	case graph.KindWait:
		act.Wait = &graph.WaitAction{Signal: a.Signal, TimeoutMS: a.TimeoutMS, Type: a.WaitType}
		if a.WaitType != nil {
			return act, a.WaitType
		}
		return act, graph.TypeAny
	case graph.KindWorkflow:
		wf := &graph.WorkflowAction{Name: a.Workflow, Version: a.Pin}
		wf.Input = c.checkData(a.Input, scope)
		if wf.Input != nil && !kindIn(wf.Input.Type, graph.KindObject, graph.KindMap, graph.KindAny) {
			c.errorf(a.Input.Range, "Incorrect value type",
				"The child workflow's input must be an object of input values, like input = { sku = \"{{ input.sku }}\" }, but this value is a %s.", wf.Input.Type)
		}
		act.Workflow = wf
		return act, c.checkChild(a, wf.Input)
	case graph.KindFail:
		f := &graph.FailAction{Message: c.checkData(a.Message, scope)}
		c.wantText(f.Message, a.Message, "message")
		f.Error = c.checkData(a.Raise, scope)
		if f.Error != nil && !kindIn(f.Error.Type, graph.KindObject, graph.KindMap, graph.KindAny) {
			c.errorf(a.Raise.Range, "Incorrect value type",
				"error raises an error again, so it must be an error object, like error = \"{{ steps.charge.error }}\", but this value is a %s.", f.Error.Type)
		} else if f.Error != nil && f.Error.Type.Kind == graph.KindObject && f.Error.Type.Fields["kind"] == nil && f.Error.Type.Fields["message"] == nil {
			// An object of known fields with neither kind nor message, such
			// as a step's output where its error was meant, would raise an
			// error that says nothing.
			c.errorf(a.Raise.Range, "Incorrect value type",
				"error raises an error again, so it must be an error object, with a kind or a message, like error = \"{{ steps.charge.error }}\", but this value is %s. Did you mean the step's error rather than its output?", f.Error.Type)
		}
		for _, t := range []struct {
			v    **graph.Value
			n    *dataNode
			name string
		}{{&f.Type, a.ProblemType, "type"}, {&f.Title, a.Title, "title"}, {&f.Detail, a.Detail, "detail"}, {&f.Instance, a.Instance, "instance"}} {
			*t.v = c.checkData(t.n, scope)
			c.wantText(*t.v, t.n, t.name)
		}
		f.Status = c.checkData(a.Status, scope)
		if f.Status != nil && !kindIn(f.Status.Type, graph.KindInt, graph.KindNumber, graph.KindAny) {
			c.errorf(a.Status.Range, "Incorrect value type",
				"status is an HTTP status, a whole number like status = 409, but this value is a %s.", f.Status.Type)
		}
		act.Fail = f
		return act, graph.TypeNull
	case graph.KindSwitch:
		return act, graph.TypeString
	case kindOpenAPI:
		return c.buildOpenAPI(a, scope)
	case kindEmit:
		return c.buildEmit(a, scope)
	}
	return act, graph.TypeNull
}

// checkData type-checks a data value; nil when n is nil. A value whose
// templates fail to check is returned with type any (the graph is not
// sealed then).
func (c *compiler) checkData(n *dataNode, scope *scoper) *graph.Value {
	if n == nil {
		return nil
	}
	switch {
	case n.IsLit:
		return &graph.Value{Lit: literalJSON(n.Lit), Type: typeOfLiteral(n.Lit)}
	case n.Tmpl != nil:
		if c.skip[n.Tmpl] {
			return &graph.Value{Type: graph.TypeAny}
		}
		t, typ, diags := expr.CheckTemplate(n.Tmpl, scope.narrow(n.Tmpl.StepRefs()))
		if diags.HasErrors() {
			// Check again with everything visible, for messages that list it.
			if t2, typ2, d := expr.CheckTemplate(n.Tmpl, scope.full()); d.HasErrors() {
				diags = d
			} else {
				t, typ, diags = t2, typ2, d
			}
		}
		c.diags = append(c.diags, diags...)
		if diags.HasErrors() || t == nil {
			return &graph.Value{Type: graph.TypeAny}
		}
		return &graph.Value{Template: t, Type: typ}
	case n.IsList:
		v := &graph.Value{List: make([]*graph.Value, 0, len(n.List))}
		elems := make([]*graph.Type, 0, len(n.List))
		for _, e := range n.List {
			ev := c.checkData(e, scope)
			v.List = append(v.List, ev)
			elems = append(elems, ev.Type)
		}
		v.Type = graph.ListOf(literalCommonType(elems))
		return v
	default:
		v := &graph.Value{Object: make(map[string]*graph.Value, len(n.Object))}
		fields := make(map[string]*graph.Type, len(n.Object))
		for _, k := range naming.NamesSorted(n.Object) {
			ev := c.checkData(n.Object[k], scope)
			v.Object[k] = ev
			fields[k] = ev.Type
		}
		v.Type = graph.ObjectOf(fields)
		return v
	}
}

func kindIn(t *graph.Type, kinds ...graph.TypeKind) bool {
	if t == nil {
		return true
	}
	for _, k := range kinds {
		if t.Kind == k {
			return true
		}
	}
	return false
}

// isText reports whether values of t can be sent as text: strings, and
// numbers and bools (written as JSON), or any (checked at run time).
func isText(t *graph.Type) bool {
	return kindIn(t, graph.KindString, graph.KindNumber, graph.KindInt, graph.KindBool, graph.KindAny)
}

func (c *compiler) wantText(v *graph.Value, n *dataNode, attr string) {
	if v == nil || isText(v.Type) {
		return
	}
	c.errorf(n.Range, "Incorrect value type",
		"The argument %q must be text (a string, or a number or bool written as text), but this value is a %s.", attr, v.Type)
}

// wantTextMap checks an object or map of text values (env, headers).
func (c *compiler) wantTextMap(v *graph.Value, n *dataNode, attr string) {
	if v == nil || v.Type.Kind == graph.KindAny {
		return
	}
	ok := false
	switch v.Type.Kind {
	case graph.KindMap:
		ok = isText(v.Type.Elem)
	case graph.KindObject:
		ok = true
		for _, ft := range v.Type.Fields {
			ok = ok && isText(ft)
		}
	}
	if !ok {
		c.errorf(n.Range, "Incorrect value type",
			"The argument %q must be an object of text values, like %s = { NAME = \"value\" }, but this value is a %s.", attr, attr, v.Type)
	}
}

// wantCommand checks exec's command: an argument list of text values, or
// with shell = true one text value (the script).
func (c *compiler) wantCommand(v *graph.Value, n *dataNode, shell bool) {
	if v == nil {
		return
	}
	t := v.Type
	if shell {
		if t.Kind == graph.KindList {
			c.errorf(n.Range, "Shell command is a list",
				"With shell = true, command is one string run by /bin/sh -c, like command = \"ls -l | wc -l\". Join the list into one string, or remove shell = true to run an argument list without a shell.")
		} else if !isText(t) {
			c.wantText(v, n, "command")
		}
		return
	}
	switch t.Kind {
	case graph.KindAny:
		return
	case graph.KindList:
		// A list of mixed types has elements of type any: each written
		// element is checked on its own (a list or object template among
		// strings is an error, language.md §8.3), with the caret on it.
		if isText(t.Elem) && (t.Elem.Kind != graph.KindAny || v.List == nil) {
			return
		}
		for i, e := range v.List {
			if e != nil && !isText(e.Type) {
				r := n.Range
				if i < len(n.List) && n.List[i] != nil {
					r = n.List[i].Range
				}
				c.errorf(r, "Incorrect value type",
					"Each argument of command must be text (a string, or a number or bool written as text), but one is a %s.", e.Type)
				return
			}
		}
		if v.List == nil && !isText(t.Elem) {
			c.errorf(n.Range, "Incorrect value type",
				"Each argument of command must be text, but this list holds %s values.", t.Elem)
		}
	case graph.KindString, graph.KindNumber, graph.KindInt, graph.KindBool:
		c.errorf(n.Range, "Command is a string",
			"command is an argument list, run without a shell: write command = [\"prog\", \"arg\"], or set shell = true to run this string with /bin/sh -c.")
	default:
		c.errorf(n.Range, "Incorrect value type",
			"command must be a list of arguments, like command = [\"prog\", \"arg\"], but this value is a %s.", t)
	}
}

// dataNodes lists the action's data attributes, for reference collection.
func (a *actionDecl) dataNodes() []*dataNode {
	out := []*dataNode{a.Command, a.Dir, a.Env, a.Stdin, a.URL, a.Headers, a.Body, a.SleepUntil, a.Input, a.Message,
		a.Raise, a.ProblemType, a.Status, a.Title, a.Detail, a.Instance}
	if ad := a.Auth; ad != nil {
		out = append(out, ad.Username, ad.Password, ad.Bearer)
	}
	out = append(out, a.EventType, a.Source, a.Subject, a.Data)
	for _, nv := range a.Values {
		out = append(out, nv.Node)
	}
	if a.OpenAPI != nil {
		out = append(out, a.OpenAPI.Params)
	}
	return out
}
