package graph

import (
	"encoding/json"
	"sync/atomic"
)

// Graph is the compiled, immutable form of one workflow: the step graph with
// every default resolved, every reference turned into an edge, every CEL
// expression in canonical form with its checked type, and a hash per step.
//
// The Graph is what the store keeps and what the interpreter runs. It carries
// no source positions (those live in a SourceMap returned beside it by the
// compiler), so moving a block, reformatting a file or editing a comment does
// not change the canonical encoding or the hash.
//
// A Graph must not be modified after Compile or Decode returns it: several
// runs and goroutines share one.
type Graph struct {
	Workflow    string       `json:"workflow"`
	Version     string       `json:"version"`
	Description string       `json:"description,omitempty"`
	Inputs      []Input      `json:"inputs,omitempty"`  // sorted by name
	Secrets     []Secret     `json:"secrets,omitempty"` // sorted by name
	Key         *Expr        `json:"key,omitempty"`     // run identity; nil: hash of the inputs
	DeadlineMS  int64        `json:"deadline_ms,omitempty"`
	Concurrency *Concurrency `json:"concurrency,omitempty"`
	Breakers    []Breaker    `json:"breakers,omitempty"` // sorted by name
	Limits      Limits       `json:"limits"`
	// Steps in topological order, ties broken by name, so the order does
	// not depend on where the blocks stand in the file.
	Steps   []*Step  `json:"steps"`
	Outputs []Output `json:"outputs,omitempty"` // sorted by name
	Alerts  []Alert  `json:"alerts,omitempty"`  // sorted by name
	// Schedules start runs at their slots (schedule.go); sorted by name,
	// and left out of the encoding when there are none, so the graphs
	// stored before schedules existed keep their hashes.
	Schedules []Schedule `json:"schedules,omitempty"`
	// Webhooks start runs on signed HTTP requests (webhook.go); sorted by
	// name and left out of the encoding when there are none, as Schedules.
	Webhooks []Webhook `json:"webhooks,omitempty"`

	idx atomic.Pointer[index] // built on first use; see index.go
}

// Input is a declared workflow input.
type Input struct {
	Name string `json:"name"`
	Type *Type  `json:"type"`
	// Default is the canonical (compact) JSON of the default value; nil when
	// the input is required.
	Default json.RawMessage `json:"default,omitempty"`
}

// Secret is a value read from the environment when a run needs it. Its value
// is never stored, never printed and never visible outside data templates.
type Secret struct {
	Name string `json:"name"`
	Env  string `json:"env"`
}

// Concurrency is the workflow's instance lock or semaphore.
type Concurrency struct {
	Key        *Expr  `json:"key"`
	Limit      int    `json:"limit"`
	OnConflict string `json:"on_conflict"` // queue | skip | fail
}

// Breaker is a circuit breaker shared by every run and worker.
type Breaker struct {
	Name       string `json:"name"`
	Failures   int    `json:"failures"`
	CooldownMS int64  `json:"cooldown_ms"`
	// OnOpen is what a step does while the breaker is open: "" waits
	// (parks until the trial; the default, left out of the encoding so
	// graphs stored before on_open existed keep their hash), "fail" fails
	// the attempt at once with kind breaker_open.
	OnOpen string `json:"on_open,omitempty"`
}

// Limits bound a run. The compiler fills the defaults, so every field is set.
type Limits struct {
	Attempts    int   `json:"attempts"`     // step attempts per run (default 1000)
	OutputBytes int64 `json:"output_bytes"` // captured bytes per stream per attempt (default 1 MiB)
	Parallel    int   `json:"parallel"`     // steps of one run at once (default 16)
}

// Default limits, used when a workflow's limits block leaves a field out.
const (
	DefaultAttempts       = 1000
	DefaultOutputBytes    = 1 << 20
	DefaultParallel       = 16
	DefaultTimeoutMS      = 5 * 60 * 1000 // exec and http, when neither step nor defaults set one
	DefaultMaxIterations  = 100
	DefaultForeachWorkers = 1
)

// Step is one node of the graph.
type Step struct {
	Name string `json:"name" graph:"def,diff=-"`
	// Hash is the SHA-256 (hex) of the step's definition: everything that
	// decides what the step does and what it produces (Needs, Join, When,
	// Action, Foreach, Until, OnError, IdempotencyKey, OutputType), and not
	// its run policy (Timeout, Retry, Breaker). Two versions of a workflow
	// whose step has the same Hash, and whose upstream steps all have the
	// same Hash, would produce the same output for it; migration keeps
	// completed steps on that rule.
	Hash string `json:"hash" graph:"self,diff=-"`
	// Needs lists every step this one waits for, sorted: steps its
	// expressions reference, its depends_on, and the switch step that can
	// choose it.
	Needs []string `json:"needs,omitempty" graph:"def,set,diff=step:stepNeeds"`
	// DependsOn is the explicit depends_on list (sorted), kept apart from
	// Needs so that diff and graph can tell ordering edges from data edges.
	DependsOn []string `json:"depends_on,omitempty" graph:"def,set,diff=step:stepDependsOn"`
	Join      string   `json:"join" graph:"def,mode,diff=major:join"` // all | any
	When      *Expr    `json:"when,omitempty" graph:"def,diff=cel:major:when"`
	Action    Action   `json:"action" graph:"def,diff=fn:action"`
	// TimeoutMS is the per-attempt timeout with defaults applied; 0 means
	// none (actions that do not run code: set, switch, fail, sleep, wait and
	// workflow have their own waits).
	TimeoutMS      int64    `json:"timeout_ms,omitempty" graph:"run,diff=ms:patch:timeout"`
	Retry          *Retry   `json:"retry,omitempty" graph:"run,diff=fn:retry"` // nil: one attempt
	Breaker        string   `json:"breaker,omitempty" graph:"run,diff=or:patch:breaker:none"`
	Foreach        *Foreach `json:"foreach,omitempty" graph:"def,diff=fn:foreach"`
	Until          *Until   `json:"until,omitempty" graph:"def,diff=fn:until"`
	OnError        string   `json:"on_error" graph:"def,mode,diff=major:on_error"` // fail | continue
	IdempotencyKey *Value   `json:"idempotency_key,omitempty" graph:"def,diff=same:minor:idempotency key"`
	// OutputType is the type of steps.NAME.output (per item for foreach
	// steps, whose output is a list of it).
	OutputType *Type `json:"output_type" graph:"def,diff=step:stepOutputType"`
}

// Retry is a step's retry policy with defaults applied.
type Retry struct {
	Attempts   int     `json:"attempts"` // total attempts; 1 = no retry
	BackoffMS  int64   `json:"backoff_ms"`
	Multiplier float64 `json:"multiplier"`
	MaxDelayMS int64   `json:"max_delay_ms,omitempty"` // 0: no cap
	JitterMS   int64   `json:"jitter_ms,omitempty"`
	When       *Expr   `json:"when,omitempty"` // nil: retry every error
}

// Foreach runs the step's action once per element of Items.
type Foreach struct {
	Items       *Expr  `json:"items"`
	Concurrency int    `json:"concurrency"`
	OnFailure   string `json:"on_failure"` // fail | continue | dead_letter
}

// Until repeats the step's action until Cond is true.
type Until struct {
	Cond          *Expr `json:"cond"`
	IntervalMS    int64 `json:"interval_ms,omitempty"`
	MaxIterations int   `json:"max_iterations"`
}

// Action kinds. A step has at most one action; KindNone is a join point.
const (
	KindNone     = ""
	KindExec     = "exec"
	KindHTTP     = "http"
	KindSet      = "set"
	KindSleep    = "sleep"
	KindWait     = "wait"
	KindWorkflow = "workflow"
	KindFail     = "fail"
	KindSwitch   = "switch"
)

// Action is what a step does. Exactly the field named by Kind is set.
type Action struct {
	Kind     string          `json:"kind"`
	Exec     *ExecAction     `json:"exec,omitempty"`
	HTTP     *HTTPAction     `json:"http,omitempty"`
	Set      *SetAction      `json:"set,omitempty"`
	Sleep    *SleepAction    `json:"sleep,omitempty"`
	Wait     *WaitAction     `json:"wait,omitempty"`
	Workflow *WorkflowAction `json:"workflow,omitempty"`
	Fail     *FailAction     `json:"fail,omitempty"`
	Switch   *SwitchAction   `json:"switch,omitempty"`
}

// ExecAction runs a program.
type ExecAction struct {
	Command *Value `json:"command"` // a list of strings; a shell script when Shell
	Shell   bool   `json:"shell,omitempty"`
	Dir     *Value `json:"dir,omitempty"`
	Env     *Value `json:"env,omitempty"` // object of strings
	Stdin   *Value `json:"stdin,omitempty"`
	// PassEnv names the variables of the worker's environment the program
	// gets beyond the base list (semantics.md §11): the workflow's pass_env
	// and the action's own, sorted, without duplicates, none starting with
	// ReservedEnvPrefix. Nil (left out of the encoding, so graphs stored
	// before pass_env existed keep their hash) when there are none.
	PassEnv []string `json:"pass_env,omitempty"`
}

// HTTPAction makes one HTTP request.
type HTTPAction struct {
	Method  string `json:"method"` // upper case
	URL     *Value `json:"url"`
	Headers *Value `json:"headers,omitempty"` // object of strings
	Body    *Value `json:"body,omitempty"`    // an object or list is sent as JSON
	Expect  []int  `json:"expect,omitempty"`  // nil: any 2xx
	// Query holds parameters added to the URL's query (object of strings;
	// a null value adds nothing). Absent from the JSON when nil, so graphs
	// without it keep their hash.
	Query *Value `json:"query,omitempty"`
	// NoRedirects: a 3xx response is the response (follow_redirects =
	// false). Absent from the JSON when false.
	NoRedirects bool `json:"no_redirects,omitempty"`
}

// SetAction computes named values.
type SetAction struct {
	Values NamedValues `json:"values"`
}

// SleepAction is a durable timer.
type SleepAction struct {
	DurationMS int64  `json:"duration_ms,omitempty"`
	Until      *Value `json:"until,omitempty"` // RFC 3339 template
}

// WaitAction waits for a named signal.
type WaitAction struct {
	Signal    string `json:"signal"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
	// Type is the type the signal's data must have (nil: any): the step's
	// output type, checked where the data is read at compile time and
	// against the data when the signal is sent.
	Type *Type `json:"type,omitempty"`
}

// WorkflowAction starts a child run and waits for it.
type WorkflowAction struct {
	Name    string `json:"name"`
	Version string `json:"version"` // "1", "1.2" or "1.2.3"
	Input   *Value `json:"input,omitempty"`
}

// FailAction ends the run as failed.
type FailAction struct {
	Message *Value `json:"message"`
}

// SwitchAction picks the branch to run; the others are skipped.
type SwitchAction struct {
	Cases   []SwitchCase `json:"cases"`
	Default []string     `json:"default,omitempty"`
}

// SwitchCase is one branch of a switch.
type SwitchCase struct {
	When *Expr    `json:"when"`
	Next []string `json:"next"`
}

// Output is a workflow output.
type Output struct {
	Name  string `json:"name"`
	Value *Value `json:"value"`
	Type  *Type  `json:"type"`
}

// Alert sends a notification when a run ends abnormally.
type Alert struct {
	Name   string   `json:"name"`
	On     []string `json:"on"` // failed | interrupted | dead_lettered | timed_out
	Action Action   `json:"action"`
}

// Expr is a CEL control expression (when, until, items, key, retry.when,
// case.when).
type Expr struct {
	// CEL is the expression in canonical form (parsed and unparsed by cel-go),
	// so that spacing inside the expression does not change the hash.
	CEL  string `json:"cel"`
	Type *Type  `json:"type"` // the checked result type
}

// Value is a data attribute: a literal, a template, or a list or object with
// templates somewhere inside. A subtree without templates is always folded
// into Lit, so List and Object are never empty.
type Value struct {
	Lit      json.RawMessage   `json:"lit,omitempty"`
	Template *Template         `json:"template,omitempty"`
	List     []*Value          `json:"list,omitempty"`
	Object   map[string]*Value `json:"object,omitempty"`
	Type     *Type             `json:"type"` // the static type of the value
}

// Template is a string with {{ expr }} parts. A template that is exactly one
// {{ expr }} yields the expression's typed value; any other is text.
type Template struct {
	Parts []TemplatePart `json:"parts"`
}

// TemplatePart is literal text or one expression.
type TemplatePart struct {
	Text string `json:"text,omitempty"`
	Expr *Expr  `json:"expr,omitempty"`
}
