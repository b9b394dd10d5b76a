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
//
//graph:gen root
type Graph struct {
	Workflow    string   `json:"workflow" graph:"diff=fn:renamed"`
	Version     string   `json:"version" graph:"diff=-"`
	Description string   `json:"description,omitempty" graph:"diff=same:patch:description"`
	Inputs      []Input  `json:"inputs,omitempty" graph:"sorted,diff=fn:inputs"`    // sorted by name
	Secrets     []Secret `json:"secrets,omitempty" graph:"sorted,diff=fn:secrets"`  // sorted by name
	Key         *Expr    `json:"key,omitempty" graph:"slot=key,diff=cel:minor:key"` // run identity; nil: hash of the inputs
	DeadlineMS  int64    `json:"deadline_ms,omitempty" graph:"diff=ms:patch:deadline"`
	// RetentionMS is how long the workflow's finished runs are kept before
	// a worker or server prunes them (0: the store's default).
	RetentionMS int64        `json:"retention_ms,omitempty" graph:"diff=ms:patch:retention"`
	Concurrency *Concurrency `json:"concurrency,omitempty" graph:"diff=fn:concurrency"`
	Breakers    []Breaker    `json:"breakers,omitempty" graph:"sorted,diff=fn:breakers"` // sorted by name
	Limits      Limits       `json:"limits" graph:"diff=fn:limits"`
	// Steps in topological order, ties broken by name, so the order does
	// not depend on where the blocks stand in the file.
	Steps   []*Step  `json:"steps" graph:"dec=steps,norm=steps,diff=fn:steps"`
	Outputs []Output `json:"outputs,omitempty" graph:"sorted,diff=fn:outputs"` // sorted by name
	Alerts  []Alert  `json:"alerts,omitempty" graph:"sorted,diff=fn:alerts"`   // sorted by name
	// Schedules start runs at their slots (schedule.go); sorted by name,
	// and left out of the encoding when there are none, so the graphs
	// stored before schedules existed keep their hashes.
	Schedules []Schedule `json:"schedules,omitempty" graph:"sorted,diff=fn:schedules"`
	// Webhooks start runs on signed HTTP requests (webhook.go); sorted by
	// name and left out of the encoding when there are none, as Schedules.
	Webhooks []Webhook `json:"webhooks,omitempty" graph:"sorted,diff=fn:webhooks"`

	idx atomic.Pointer[index] // built on first use; see index.go
}

// Input is a declared workflow input.
//
//graph:gen
type Input struct {
	Name string `json:"name" graph:"diff=-"`
	Type *Type  `json:"type" graph:"diff=type:major:type"`
	// Default is the canonical (compact) JSON of the default value; nil when
	// the input is required.
	Default json.RawMessage `json:"default,omitempty" graph:"diff=fn:inputDefault"`
}

// Secret is a value read from the environment when a run needs it. Its value
// is never stored, never printed and never visible outside data templates.
//
//graph:gen
type Secret struct {
	Name string `json:"name" graph:"diff=-"`
	Env  string `json:"env" graph:"diff=patch:environment variable"`
}

// Concurrency is the workflow's instance lock or semaphore.
//
//graph:gen diff=parts
type Concurrency struct {
	Key        *Expr  `json:"key" graph:"slot=concurrency_key,diff=cel:key"`
	Limit      int    `json:"limit" graph:"diff=limit"`
	OnConflict string `json:"on_conflict" graph:"diff=on_conflict"` // queue | skip | fail
}

// Breaker is a circuit breaker shared by every run and worker.
//
//graph:gen diff=parts
type Breaker struct {
	Name       string `json:"name" graph:"diff=-"`
	Failures   int    `json:"failures" graph:"diff=failures"`
	CooldownMS int64  `json:"cooldown_ms" graph:"diff=ms:cooldown"`
	// OnOpen is what a step does while the breaker is open: "" waits
	// (parks until the trial; the default, left out of the encoding so
	// graphs stored before on_open existed keep their hash), "fail" fails
	// the attempt at once with kind breaker_open.
	OnOpen string `json:"on_open,omitempty" graph:"diff=or:on_open:wait"`
}

// Limits bound a run. The compiler fills the defaults, so every field is set.
//
//graph:gen diff=parts
type Limits struct {
	Attempts    int   `json:"attempts" graph:"diff=attempts"`         // step attempts per run (default 1000)
	OutputBytes int64 `json:"output_bytes" graph:"diff=output_bytes"` // captured bytes per stream per attempt (default 1 MiB)
	Parallel    int   `json:"parallel" graph:"diff=parallel"`         // steps of one run at once (default 16)
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
//
//graph:gen slab flush share=shareDependsOn hash scope diffctx=stepDiff
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
	Needs []string `json:"needs,omitempty" graph:"def,set,diff=whole:stepNeeds"`
	// DependsOn is the explicit depends_on list (sorted), kept apart from
	// Needs so that diff and graph can tell ordering edges from data edges.
	DependsOn []string `json:"depends_on,omitempty" graph:"def,set,diff=whole:stepDependsOn"`
	Join      string   `json:"join" graph:"def,mode,diff=major:join"` // all | any
	When      *Expr    `json:"when,omitempty" graph:"def,slot=when,diff=cel:major:when"`
	Action    Action   `json:"action" graph:"def,slot=data,diff=fn:action"`
	// TimeoutMS is the per-attempt timeout with defaults applied; 0 means
	// none (actions that do not run code: set, switch, fail, sleep, wait and
	// workflow have their own waits).
	TimeoutMS      int64    `json:"timeout_ms,omitempty" graph:"run,diff=ms:patch:timeout"`
	Retry          *Retry   `json:"retry,omitempty" graph:"run,diff=fn:retry"` // nil: one attempt
	Breaker        string   `json:"breaker,omitempty" graph:"run,diff=or:patch:breaker:none"`
	Foreach        *Foreach `json:"foreach,omitempty" graph:"def,diff=fn:foreach"`
	Until          *Until   `json:"until,omitempty" graph:"def,diff=fn:until"`
	OnError        string   `json:"on_error" graph:"def,mode,diff=major:on_error"` // fail | continue
	IdempotencyKey *Value   `json:"idempotency_key,omitempty" graph:"def,slot=idempotency_key,diff=same:minor:idempotency key"`
	// OutputType is the type of steps.NAME.output (per item for foreach
	// steps, whose output is a list of it).
	OutputType *Type `json:"output_type" graph:"def,diff=whole:stepOutputType"`
	// Catch are the step's catch blocks, tried in order when the step
	// fails: the first whose When holds takes the error, and its Next run
	// instead of the step's dependents. Nil (left out of the encoding)
	// when there are none.
	Catch []Catch `json:"catch,omitempty" graph:"def,diff=whole:stepCatch"`
	// Compensate undoes the step once it completed, when the run fails
	// later (a saga; spec/semantics.md §14). Nil (left out of the
	// encoding) when the step has none. Not part of the step's
	// definition: it changes what a failure does, not what the step
	// produces.
	Compensate *Compensate `json:"compensate,omitempty" graph:"run,diff=whole:stepCompensate"`
}

// Compensate is a step's compensation: an action run, as a step of its
// own, when the run fails after the step completed.
//
//graph:gen diff=whole
type Compensate struct {
	Action Action `json:"action" graph:"slot=compensate"`
	// OnCancel: a canceled run is compensated too. Left out when false.
	OnCancel  bool   `json:"on_cancel,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"` // per attempt (exec, http, workflow)
	Retry     *Retry `json:"retry,omitempty"`      // nil: one attempt
}

// Catch is one catch block of a step.
//
//graph:gen diff=whole
type Catch struct {
	When *Expr    `json:"when,omitempty" graph:"slot=catch_when"` // nil: any error
	Next []string `json:"next" graph:"set"`
}

// Retry is a step's retry policy with defaults applied.
//
//graph:gen diff=parts
type Retry struct {
	Attempts   int     `json:"attempts" graph:"diff=attempts"` // total attempts; 1 = no retry
	BackoffMS  int64   `json:"backoff_ms" graph:"diff=ms:backoff"`
	Multiplier float64 `json:"multiplier" graph:"diff=multiplier"`
	MaxDelayMS int64   `json:"max_delay_ms,omitempty" graph:"diff=ms:max_delay"` // 0: no cap
	JitterMS   int64   `json:"jitter_ms,omitempty" graph:"diff=ms:jitter"`
	When       *Expr   `json:"when,omitempty" graph:"slot=retry_when,diff=cel:when"` // nil: retry every error
}

// Foreach runs the step's action once per element of Items.
//
//graph:gen
type Foreach struct {
	Items       *Expr  `json:"items" graph:"slot=items,diff=cel:major:foreach items"`
	Concurrency int    `json:"concurrency" graph:"diff=minor:foreach concurrency"`
	OnFailure   string `json:"on_failure" graph:"mode,diff=minor:foreach on_failure"` // fail | continue | dead_letter
}

// Until repeats the step's action until Cond is true.
//
//graph:gen
type Until struct {
	Cond          *Expr `json:"cond" graph:"slot=until,diff=cel:major:until"`
	IntervalMS    int64 `json:"interval_ms,omitempty" graph:"diff=ms:minor:until interval"`
	MaxIterations int   `json:"max_iterations" graph:"diff=minor:until max_iterations"`
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
//
//graph:gen diff=whole
type Action struct {
	Kind     string          `json:"kind" graph:"mode"`
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
//
//graph:gen diff=whole
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
	PassEnv []string `json:"pass_env,omitempty" graph:"set"`
}

// HTTPAction makes one HTTP request.
//
//graph:gen diff=whole
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
	// Auth sets the Authorization header from credentials (nil: none;
	// left out of the encoding then).
	Auth *HTTPAuth `json:"auth,omitempty"`
	// Emit makes the request a CloudEvent (an emit block): the engine
	// builds the body or the ce- headers from it when it sends (nil: a
	// plain request; left out of the encoding then).
	Emit *EmitSpec `json:"emit,omitempty"`
	// OpenAPI names the document operation the request was compiled from
	// (an openapi action, language.md §8.10); nil for an http action.
	// Nothing at run time reads it: the method, URL, query, headers and
	// body above are the whole request. Absent from the JSON when nil, so
	// graphs without it keep their hash.
	OpenAPI *OpenAPIRef `json:"openapi,omitempty"`
}

// OpenAPIRef is the OpenAPI operation an http action was compiled from.
//
//graph:gen diff=whole
type OpenAPIRef struct {
	// Document is the document's path as the workflow wrote it, relative
	// to the workflow file's directory, with "/" separators.
	Document string `json:"document"`
	// SHA256 is the hex SHA-256 of the document's bytes: a changed
	// document changes the graph (and its hash) even when the request
	// compiled from it is the same.
	SHA256    string `json:"sha256"`
	Operation string `json:"operation"` // the operationId
}

// HTTPAuth is an http action's credentials: basic (Username and Password)
// or bearer (Bearer), text templates meant to read secrets.
//
//graph:gen diff=whole
type HTTPAuth struct {
	Username *Value `json:"username,omitempty"`
	Password *Value `json:"password,omitempty"`
	Bearer   *Value `json:"bearer,omitempty"`
}

// EmitSpec is the CloudEvent (spec 1.0) an emit block sends: its type,
// source, subject and data; the engine gives it its id (the step's
// idempotency key) and time (its clock) when it sends it.
//
//graph:gen diff=whole
type EmitSpec struct {
	Type    *Value `json:"type"`
	Source  *Value `json:"source"`
	Subject *Value `json:"subject,omitempty"`
	Data    *Value `json:"data,omitempty"`
	// Binary sends the attributes as ce- headers and the data as the
	// body (mode = "binary"); false: one application/cloudevents+json
	// body (structured). Left out when false.
	Binary bool `json:"binary,omitempty"`
}

// SetAction computes named values.
//
//graph:gen slab diff=whole
type SetAction struct {
	Values NamedValues `json:"values"`
}

// SleepAction is a durable timer.
//
//graph:gen diff=whole
type SleepAction struct {
	DurationMS int64  `json:"duration_ms,omitempty"`
	Until      *Value `json:"until,omitempty"` // RFC 3339 template
}

// WaitAction waits for a named signal.
//
//graph:gen diff=whole
type WaitAction struct {
	Signal    string `json:"signal"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
	// Type is the type the signal's data must have (nil: any): the step's
	// output type, checked where the data is read at compile time and
	// against the data when the signal is sent.
	Type *Type `json:"type,omitempty"`
}

// WorkflowAction starts a child run and waits for it.
//
//graph:gen diff=whole
type WorkflowAction struct {
	Name    string `json:"name"`
	Version string `json:"version"` // "1", "1.2" or "1.2.3"
	Input   *Value `json:"input,omitempty"`
}

// FailAction raises an error: the step fails with kind "fail" and the
// problem fields (RFC 9457) given, and the run with it unless a catch of
// the step takes it.
//
//graph:gen diff=whole
type FailAction struct {
	Message *Value `json:"message"` // nil only when Error gives it
	// Error is a whole error raised again (an object such as
	// steps.X.error): its fields are the base the others override. Nil
	// when not set, as are the fields below; each is left out of the
	// encoding then, so graphs stored before them keep their hashes.
	Error    *Value `json:"error,omitempty"`
	Type     *Value `json:"type,omitempty"`   // a URI reference naming the kind of problem
	Status   *Value `json:"status,omitempty"` // a whole number, 100..599
	Title    *Value `json:"title,omitempty"`
	Detail   *Value `json:"detail,omitempty"`
	Instance *Value `json:"instance,omitempty"`
}

// SwitchAction picks the branch to run; the others are skipped.
//
//graph:gen diff=whole
type SwitchAction struct {
	Cases   []SwitchCase `json:"cases"`
	Default []string     `json:"default,omitempty" graph:"set"`
}

// SwitchCase is one branch of a switch.
//
//graph:gen diff=whole
type SwitchCase struct {
	When *Expr    `json:"when" graph:"slot=case_when"`
	Next []string `json:"next" graph:"set"`
}

// Output is a workflow output.
//
//graph:gen
type Output struct {
	Name  string `json:"name" graph:"diff=-"`
	Value *Value `json:"value" graph:"slot=output,diff=whole:outputValue"`
	Type  *Type  `json:"type" graph:"diff=type:major:type"`
}

// Alert sends a notification when a run ends abnormally.
//
//graph:gen diff=whole
type Alert struct {
	Name   string   `json:"name"`
	On     []string `json:"on" graph:"set"` // failed | interrupted | dead_lettered | timed_out
	Action Action   `json:"action" graph:"slot=alert"`
}

// Expr is a CEL control expression (when, until, items, key, retry.when,
// case.when).
//
//graph:gen slab diff=whole
type Expr struct {
	// CEL is the expression in canonical form (parsed and unparsed by cel-go),
	// so that spacing inside the expression does not change the hash.
	CEL  string `json:"cel"`
	Type *Type  `json:"type"` // the checked result type
}

// Value is a data attribute: a literal, a template, or a list or object with
// templates somewhere inside. A subtree without templates is always folded
// into Lit, so List and Object are never empty.
//
//graph:gen slab stack diff=whole
type Value struct {
	Lit      json.RawMessage   `json:"lit,omitempty"`
	Template *Template         `json:"template,omitempty"`
	List     []*Value          `json:"list,omitempty"`
	Object   map[string]*Value `json:"object,omitempty"`
	Type     *Type             `json:"type"` // the static type of the value
}

// Template is a string with {{ expr }} parts. A template that is exactly one
// {{ expr }} yields the expression's typed value; any other is text.
//
//graph:gen slab diff=whole
type Template struct {
	Parts []TemplatePart `json:"parts"`
}

// TemplatePart is literal text or one expression.
//
//graph:gen stack diff=whole
type TemplatePart struct {
	Text string `json:"text,omitempty"`
	Expr *Expr  `json:"expr,omitempty"`
}
