package expr

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
)

// Scope describes what one expression or template may see.
type Scope struct {
	// Inputs is the object type of `input` (nil: input not visible).
	Inputs *graph.Type
	// Steps are the steps visible as steps.NAME, with their output types
	// (for a foreach step, the list type). nil: `steps` not visible.
	Steps map[string]*graph.Type
	// Item is the type of `item` inside foreach (nil: item and index not
	// visible).
	Item *graph.Type
	// Iteration makes `iteration` (int, 0-based) visible: in an until
	// step's action, until and retry.when.
	Iteration bool
	// Error makes `error` visible (retry.when).
	Error bool
	// Event makes `event` visible (alert).
	Event bool
	// Schedule makes `schedule` visible (a schedule's inputs).
	Schedule bool
	// Webhook makes `body` and `headers` visible (a webhook's inputs and
	// key).
	Webhook bool
	// Secrets are the names visible as secrets.NAME (data templates only).
	// nil: `secrets` not visible; empty: visible, but none declared.
	Secrets []string
	// Where names the slot for messages: "when", "until", "items", ...
	Where string
	// Run makes `run` visible (everywhere but the run key and the
	// concurrency key, which are computed before the run exists).
	Run bool

	// graph, when set, holds the CEL environments of the graph the scope
	// belongs to, shared with the graph's other scopes (see celgraph.go).
	Graph *CelGraph
	// declared, when set, lists every step of the workflow, sorted, for
	// messages about a step that is unknown or not visible (nil: only the
	// visible steps are known).
	Declared []string
}

// Slots of a step, for StepScope.
const (
	SlotWhen           = "when"
	SlotData           = "data"
	SlotUntil          = "until"
	SlotItems          = "items"
	SlotRetryWhen      = "retry_when"
	SlotCaseWhen       = "case_when"
	SlotCatchWhen      = "catch_when"
	SlotCompensate     = "compensate"
	SlotIdempotencyKey = "idempotency_key"
)

// Slots of a workflow, for GraphScope.
const (
	SlotKey            = "key"
	SlotConcurrencyKey = "concurrency_key"
	SlotOutput         = "output"
	SlotAlert          = "alert"
	// SlotSchedule is a schedule block's inputs: only schedule is visible.
	SlotSchedule = "schedule"
	// SlotWebhookInputs and SlotWebhookKey are a webhook block's inputs
	// and key: only body and headers are visible.
	SlotWebhookInputs = "webhook_inputs"
	SlotWebhookKey    = "webhook_key"
)

// The types of the variables the interpreter fills in.
var (
	// RunType is the type of `run`.
	RunType = graph.ObjectOf(map[string]*graph.Type{
		"id": graph.TypeString, "workflow": graph.TypeString, "version": graph.TypeString, "key": graph.TypeString,
		"attempt": graph.TypeInt, "started_at": graph.TypeString,
	})
	// ErrorType is the type of `error` in retry.when and of
	// steps.NAME.error (null when the step did not fail). exit_code is
	// present only for exec errors that exited, status only for http errors
	// with a response (or raised by a fail step with a status): test with
	// has(error.status). type is always there (the problem type URI of the
	// kind unless a fail step gave one); title, detail and instance only
	// when a fail step gave them (spec/semantics.md §6).
	ErrorType = graph.ObjectOf(map[string]*graph.Type{
		"message": graph.TypeString, "kind": graph.TypeString, "exit_code": graph.TypeInt, "status": graph.TypeInt,
		"type": graph.TypeString, "title": graph.TypeString, "detail": graph.TypeString, "instance": graph.TypeString,
	})
	// ScheduleType is the type of `schedule` in a schedule's inputs: the
	// slot as RFC 3339 in the schedule's zone, its date there
	// (YYYY-MM-DD), and the schedule's name.
	ScheduleType = graph.ObjectOf(map[string]*graph.Type{
		"time": graph.TypeString, "date": graph.TypeString, "name": graph.TypeString,
	})
	// HeadersType is the type of `headers` in a webhook: the request's
	// header names in lower case, a header sent several times with its
	// values joined by ", ".
	HeadersType = graph.MapOf(graph.TypeString)
	// EventType is the type of `event` in an alert.
	EventType = graph.ObjectOf(map[string]*graph.Type{
		"kind": graph.TypeString, "message": graph.TypeString, "step": graph.TypeString,
	})
)

// StepResultType is the type of steps.NAME for a step whose output (as
// seen from the referring expression) has type output. When the step was
// skipped, output is null.
func StepResultType(output *graph.Type) *graph.Type {
	if output == nil {
		output = graph.TypeAny
	}
	return graph.ObjectOf(map[string]*graph.Type{
		"output": output, "status": graph.TypeString, "attempts": graph.TypeInt, "error": ErrorType,
	})
}

// InputsType returns the object type of `input` for a graph's inputs.
func InputsType(g *graph.Graph) *graph.Type {
	fields := make(map[string]*graph.Type, len(g.Inputs))
	for _, in := range g.Inputs {
		fields[in.Name] = in.Type
	}
	return graph.ObjectOf(fields)
}

// VisibleOutput is the type of steps.NAME.output seen from another step:
// the list of the per-item outputs for a foreach step.
func VisibleOutput(s *graph.Step) *graph.Type {
	out := graph.StepOutput(s)
	if out == nil {
		out = graph.TypeAny
	}
	if s.Foreach != nil {
		return graph.ListOf(out)
	}
	return out
}

// itemType is the element type of a foreach step's items.
func itemType(s *graph.Step) *graph.Type {
	if s.Foreach == nil {
		return nil
	}
	if s.Foreach.Items != nil && s.Foreach.Items.Type != nil && s.Foreach.Items.Type.Kind == graph.KindList && s.Foreach.Items.Type.Elem != nil {
		return s.Foreach.Items.Type.Elem
	}
	return graph.TypeAny
}

func secretNames(g *graph.Graph) []string {
	names := make([]string, 0, len(g.Secrets))
	for _, s := range g.Secrets {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

// ancestors returns the steps s transitively needs that are already in g,
// with their visible output types. It works on partial graphs: a name not
// (yet) in g.Steps is left out.
func ancestors(g *graph.Graph, s *graph.Step) map[string]*graph.Type {
	byName := make(map[string]*graph.Step, len(g.Steps))
	for _, st := range g.Steps {
		byName[st.Name] = st
	}
	out := map[string]*graph.Type{}
	var visit func(names []string)
	visit = func(names []string) {
		for _, n := range names {
			st, ok := byName[n]
			if !ok {
				continue
			}
			if _, seen := out[n]; seen {
				continue
			}
			out[n] = VisibleOutput(st)
			visit(st.Needs)
		}
	}
	visit(s.Needs)
	return out
}

// StepScope returns what an expression in one of a step's slots sees (the
// table "What each slot sees" of spec/language.md):
//
//   - when, items, case_when: input, run and the step's ancestors (the
//     transitive closure of Needs);
//   - data (action values) and idempotency_key: the same, plus item and
//     index when the step has foreach, and iteration and the step itself
//     (its previous iteration's result, absent in iteration 0) when it has
//     until; the data of exec and http actions also sees secrets (not set,
//     sleep, fail or workflow, whose values are stored as outputs, errors or
//     child inputs, nor the idempotency key);
//   - until: the ancestors and the step itself (steps.SELF.output is the
//     latest iteration's output), plus item and index under foreach, and
//     iteration;
//   - retry_when: the ancestors, item and index under foreach, iteration
//     under until, and error;
//   - catch_when: the ancestors and error (the step's, once it failed).
//
// A foreach step seen from another step has output list(OutputType); seen
// from its until, OutputType (one item's). In its own action data and
// idempotency key the step's previous output is any: the output type is
// only known once the action is compiled, and the compiler and Load must
// see the same types.
//
// StepScope works on a partial graph: steps not yet in g.Steps are unknown.
// The step's Foreach, Until and Action.Kind must be set before it is called.
func StepScope(g *graph.Graph, s *graph.Step, slot string) *Scope {
	sc := &Scope{Inputs: InputsType(g), Run: true, Steps: ancestors(g, s), Where: slot}
	until := s.Until != nil
	self := graph.StepOutput(s)
	if self == nil {
		self = graph.TypeAny
	}
	switch slot {
	case SlotWhen, SlotItems, SlotCaseWhen:
	case SlotData, SlotIdempotencyKey:
		sc.Item = itemType(s)
		if slot == SlotData && (s.Action.Kind == graph.KindExec || s.Action.Kind == graph.KindHTTP) {
			sc.Secrets = secretNames(g)
		}
		if until {
			sc.Iteration = true
			sc.Steps[s.Name] = graph.TypeAny
		}
	case SlotUntil:
		sc.Item = itemType(s)
		sc.Iteration = true
		sc.Steps[s.Name] = self
	case SlotRetryWhen:
		sc.Item = itemType(s)
		sc.Iteration = until
		sc.Error = true
	case SlotCatchWhen:
		sc.Error = true
	case SlotCompensate:
		// The step's own result (it completed) and the run's error.
		sc.Error = true
		sc.Steps[s.Name] = VisibleOutput(s)
		if c := s.Compensate; c != nil && (c.Action.Kind == graph.KindExec || c.Action.Kind == graph.KindHTTP) {
			sc.Secrets = secretNames(g)
		}
	}
	return sc
}

// GraphScope returns what a workflow-level expression sees: key and
// concurrency_key only input (they are computed before the run starts);
// output input, run and every step; alert the same plus event and secrets;
// a schedule's inputs only schedule (they are the inputs of a run not yet
// started); a webhook's inputs and key only body and headers.
func GraphScope(g *graph.Graph, slot string) *Scope {
	switch slot {
	case SlotSchedule:
		return &Scope{Schedule: true, Where: slot}
	case SlotWebhookInputs, SlotWebhookKey:
		return &Scope{Webhook: true, Where: slot}
	}
	sc := &Scope{Inputs: InputsType(g), Where: slot}
	switch slot {
	case SlotOutput, SlotAlert:
		sc.Run = true
		sc.Steps = make(map[string]*graph.Type, len(g.Steps))
		for _, st := range g.Steps {
			sc.Steps[st.Name] = VisibleOutput(st)
		}
		if slot == SlotAlert {
			sc.Event = true
			sc.Secrets = secretNames(g)
		}
	}
	return sc
}

// key returns a text that is equal for scopes that declare the same
// variables with the same types, for caching environments.
func (s *Scope) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "input=%s;run=%t;item=%s;iteration=%t;error=%t;event=%t;", typeKey(s.Inputs), s.Run, typeKey(s.Item), s.Iteration, s.Error, s.Event)
	if s.Schedule {
		b.WriteString("schedule;")
	}
	if s.Webhook {
		b.WriteString("webhook;")
	}
	if s.Steps != nil {
		names := make([]string, 0, len(s.Steps))
		for n := range s.Steps {
			names = append(names, n)
		}
		sort.Strings(names)
		b.WriteString("steps{")
		for _, n := range names {
			fmt.Fprintf(&b, "%s:%s,", n, typeKey(s.Steps[n]))
		}
		b.WriteString("}")
	}
	if s.Secrets != nil {
		fmt.Fprintf(&b, "secrets%q", s.Secrets)
	}
	return b.String()
}

// writeVarsKey writes key without the visible steps to b: equal for scopes
// that declare the same variables with the same types, but for the type of
// steps. It writes without fmt: every check of a long workflow asks for it.
func (s *Scope) writeVarsKey(b *strings.Builder) {
	for _, f := range [...]struct {
		name string
		val  string
	}{
		{"input=", typeKey(s.Inputs)}, {";run=", strconv.FormatBool(s.Run)}, {";item=", typeKey(s.Item)},
		{";iteration=", strconv.FormatBool(s.Iteration)}, {";error=", strconv.FormatBool(s.Error)},
		{";event=", strconv.FormatBool(s.Event)}, {";steps=", strconv.FormatBool(s.Steps != nil)},
	} {
		b.WriteString(f.name)
		b.WriteString(f.val)
	}
	b.WriteString(";")
	if s.Schedule {
		b.WriteString("schedule;")
	}
	if s.Webhook {
		b.WriteString("webhook;")
	}
	if s.Secrets != nil {
		fmt.Fprintf(b, "secrets%q", s.Secrets)
	}
}

// stepNames returns the visible step names, sorted.
func (s *Scope) stepNames() []string {
	names := make([]string, 0, len(s.Steps))
	for n := range s.Steps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// maxListedSteps is how many step names a message lists at most.
const maxListedSteps = 20

// unknownStep explains a reference steps.NAME to a step the scope does not
// see: a step the workflow does not declare (with the nearest declared name,
// as a suggestion, when there is one), or a declared step this slot cannot
// read.
func (s *Scope) unknownStep(name string) string {
	visible := "No step is visible here."
	if len(s.Steps) > 0 {
		visible = "The steps visible here are " + naming.QuoteList(s.stepNames()) + "."
	}
	known := s.Declared
	if known == nil {
		known = s.stepNames()
	}
	if naming.ContainsName(known, name) {
		return fmt.Sprintf("Step %q cannot be read in %s. %s An expression can only read steps that finish before it is evaluated.",
			name, s.where(), visible)
	}
	if near := naming.NearestName(name, known); near != "" {
		return fmt.Sprintf("There is no step %q. Did you mean %q?", name, near)
	}
	switch {
	case s.Declared != nil && len(s.Declared) == 0:
		return fmt.Sprintf("There is no step %q: this workflow declares no steps.", name)
	case len(s.Declared) > maxListedSteps:
		return fmt.Sprintf("There is no step %q in this workflow. Check the name.", name)
	case s.Declared != nil:
		return fmt.Sprintf("There is no step %q: the workflow's steps are %s. Check the name.", name, naming.QuoteList(s.Declared))
	}
	return fmt.Sprintf("There is no step %q that %s can read. %s Check the name: an expression can only read steps that finish before it is evaluated.",
		name, s.what(), visible)
}

// VisibleNames lists the variables the scope declares: for messages, and
// for an editor's completion of expression roots.
func (s *Scope) VisibleNames() []string {
	var names []string
	if s.Inputs != nil {
		names = append(names, "input")
	}
	if s.Run {
		names = append(names, "run")
	}
	if s.Steps != nil {
		names = append(names, "steps")
	}
	if s.Item != nil {
		names = append(names, "item", "index")
	}
	if s.Iteration {
		names = append(names, "iteration")
	}
	if s.Error {
		names = append(names, "error")
	}
	if s.Event {
		names = append(names, "event")
	}
	if s.Schedule {
		names = append(names, "schedule")
	}
	if s.Webhook {
		names = append(names, "body", "headers")
	}
	if s.Secrets != nil {
		names = append(names, "secrets")
	}
	return names
}

// where renders the slot for messages.
func (s *Scope) where() string {
	switch s.Where {
	case "":
		return "this expression"
	case SlotData:
		return "a data value"
	case SlotRetryWhen:
		return "retry.when"
	case SlotCaseWhen:
		return "case.when"
	case SlotCatchWhen:
		return "catch.when"
	case SlotCompensate:
		return "a compensation"
	case SlotConcurrencyKey:
		return "concurrency.key"
	case SlotSchedule:
		return "a schedule's inputs"
	case SlotWebhookInputs:
		return "a webhook's inputs"
	case SlotWebhookKey:
		return "webhook.key"
	default:
		return s.Where
	}
}

// what names the expression for messages: "the when expression", or
// "the expression" when the slot is not known.
func (s *Scope) what() string {
	switch s.Where {
	case "":
		return "the expression"
	case SlotData:
		return "this data value's expression" // not "the a data value expression"
	case SlotSchedule, SlotWebhookInputs:
		return "this input's expression"
	}
	return "the " + s.where() + " expression"
}

// notVisible explains why a flowrun variable cannot be used in the scope,
// or returns "" when it can.
func (s *Scope) notVisible(name string) string {
	w := s.where()
	switch name {
	case "input":
		if s.Inputs == nil {
			return fmt.Sprintf("input is not visible in %s.", w)
		}
	case "run":
		if !s.Run {
			return fmt.Sprintf("run is not visible in %s: the run key and the concurrency key are computed from the inputs before the run exists. Use input here.", w)
		}
	case "steps":
		if s.Steps == nil {
			return fmt.Sprintf("steps are not visible in %s: it is computed from the inputs before any step runs. Use input here.", w)
		}
	case "item", "index":
		if s.Item == nil {
			return fmt.Sprintf("%s is only visible in a step with a foreach block (in its data values, idempotency_key, until and retry.when), not in %s.", name, w)
		}
	case "iteration":
		if !s.Iteration {
			return fmt.Sprintf("iteration is only visible in a step with until (in its action, until and retry.when), not in %s.", w)
		}
	case "error":
		if !s.Error {
			return fmt.Sprintf("error is only visible in retry.when, catch's when and a compensate block, not in %s. Use steps.NAME.error to read a finished step's error.", w)
		}
	case "event":
		if !s.Event {
			return fmt.Sprintf("event is only visible in an alert, not in %s.", w)
		}
	case "schedule":
		if !s.Schedule {
			return fmt.Sprintf("schedule is only visible in a schedule block's inputs, not in %s.", w)
		}
	case "body", "headers":
		if !s.Webhook {
			return fmt.Sprintf("%s is only visible in a webhook block's inputs and key, not in %s.", name, w)
		}
	case "secrets":
		if s.Secrets == nil {
			return fmt.Sprintf("secrets are only visible in the data of exec and http actions and in alerts, not in %s, so that a secret never becomes part of a key, a condition or a stored value. Pass the secret to the exec or http step that needs it.", w)
		}
	}
	return ""
}

// flowVars are the names of the variables flowrun may declare.
var flowVars = map[string]bool{
	"input": true, "run": true, "steps": true, "item": true, "index": true,
	"iteration": true, "error": true, "event": true, "secrets": true, "schedule": true,
	"body": true, "headers": true,
}
