package lsp

import (
	"fmt"
	"strings"
	"sync"
)

// The documentation of every block and attribute, for hover and
// completion. One row each: Type and Default are the cells of the row
// for the attribute in spec/language.md's table of Section, word for word
// (TestDocsMatchSpec checks them there, and TestDocsMatchSchema checks
// that the rows are exactly the names lang's decoder accepts). Doc is one
// line of what the attribute is for; the spec section has the rest.
type docEntry struct {
	Key     string // docKey: "retry.attempts", "step" (a block), "version"
	Section string // the heading of spec/language.md that holds the row: "## 6.", "### 8.3"
	Type    string
	Default string
	Doc     string
}

var docs = []docEntry{
	// Blocks.
	{Key: "workflow", Section: "## 2.", Doc: "A workflow: its version, inputs, steps and outputs."},
	{Key: "input", Section: "## 3.", Doc: "A run input, typed; without a default it is required."},
	{Key: "secret", Section: "## 4.", Doc: "A secret read from the worker's environment when an action uses it; never stored or printed."},
	{Key: "concurrency", Section: "## 5.", Doc: "How many unfinished runs with the same key may hold a slot at once."},
	{Key: "defaults", Section: "## 6.", Doc: "Timeout and retry policy for the steps that set none."},
	{Key: "breaker", Section: "## 7.", Doc: "A circuit breaker shared by the workflow's runs; steps name it with breaker = breaker.NAME."},
	{Key: "limits", Section: "## 15.", Doc: "The run's limits: attempts, captured output bytes, parallel attempts."},
	{Key: "step", Section: "## 8.", Doc: "A step: settings and at most one action block."},
	{Key: "output", Section: "## 9.", Doc: "A run output, evaluated once when the run completes."},
	{Key: "alert", Section: "## 9.", Doc: "An exec or http action sent when a run ends badly."},
	{Key: "schedule", Section: "### 9.1", Doc: "Starts runs on a cron expression or at a fixed interval."},
	{Key: "retry", Section: "## 6.", Doc: "Retry policy; merged per attribute with defaults.retry."},
	{Key: "foreach", Section: "### 8.1", Doc: "Runs the action once per item of a list; the output is the list of item outputs."},
	{Key: "exec", Section: "#### 8.3", Doc: "Runs a program. Output: exit_code, stdout, stderr, json."},
	{Key: "http", Section: "#### 8.4", Doc: "Sends an HTTP request. Output: status, headers, body."},
	{Key: "set", Section: "#### 8.5", Doc: "Records values as the step's output; every attribute is an output field."},
	{Key: "sleep", Section: "#### 8.6", Doc: "Waits for a duration or until a time. Output: woke_at."},
	{Key: "wait", Section: "#### 8.6", Doc: "Waits for a signal (flowrun signal). Output: the signal's payload."},
	{Key: "step.workflow", Section: "#### 8.6", Doc: "Starts a child workflow and waits for it. Output: the child's outputs."},
	{Key: "fail", Section: "#### 8.6", Doc: "Raises an error (kind fail, with problem fields): the step fails, and the run unless a catch takes it."},
	{Key: "switch", Section: "#### 8.7", Doc: "Chooses which steps run: the first case whose when is true, else default."},
	{Key: "case", Section: "#### 8.7", Doc: "One branch of a switch."},
	{Key: "emit", Section: "#### 8.11", Doc: "Sends a CloudEvent over HTTP; its id is the step's idempotency key. Output: status, headers, body, event."},
	{Key: "emit.url", Section: "#### 8.11", Type: "string template", Default: "required", Doc: "Where the event is POSTed."},
	{Key: "emit.type", Section: "#### 8.11", Type: "string template", Default: "required", Doc: "The event's type, e.g. com.example.order.placed."},
	{Key: "emit.source", Section: "#### 8.11", Type: "string template", Default: "`flowrun/WORKFLOW`", Doc: "The event's source, a URI reference."},
	{Key: "emit.subject", Section: "#### 8.11", Type: "string template", Default: "none", Doc: "The event's subject."},
	{Key: "emit.data", Section: "#### 8.11", Type: "template or object/list", Default: "none", Doc: "The event's data: JSON, or text for a string."},
	{Key: "emit.mode", Section: "#### 8.11", Type: "string", Default: "`\"structured\"`", Doc: "structured: one application/cloudevents+json body; binary: ce- headers and the data as the body."},
	{Key: "emit.headers", Section: "#### 8.11", Type: "object of string templates", Default: "`{}`", Doc: "More request headers."},
	{Key: "emit.expect", Section: "#### 8.11", Type: "list of whole numbers", Default: "any 2xx", Doc: "The statuses that mean delivered."},
	{Key: "auth", Section: "#### 8.4", Doc: "Sets the Authorization header: bearer = TOKEN, or basic { username, password }; take them from secrets."},
	{Key: "basic", Section: "#### 8.4", Doc: "HTTP basic credentials: username and password."},
	{Key: "auth.bearer", Section: "#### 8.4", Type: "string template", Default: "–", Doc: "The bearer token, e.g. \"{{ secrets.api_token }}\"."},
	{Key: "basic.username", Section: "#### 8.4", Type: "string template", Default: "required (in `basic`)", Doc: "The user name."},
	{Key: "basic.password", Section: "#### 8.4", Type: "string template", Default: "required (in `basic`)", Doc: "The password, e.g. \"{{ secrets.api_password }}\"."},
	{Key: "compensate", Section: "### 8.1", Doc: "Undoes the step once it completed, when the run fails later (a saga): compensations run newest first."},
	{Key: "compensate.on_cancel", Section: "### 8.1", Type: "bool", Default: "`false`", Doc: "Compensate a canceled run too."},
	{Key: "compensate.timeout", Section: "### 8.1", Type: "duration", Default: "the step's timeout", Doc: "Per attempt of the compensation."},
	{Key: "catch", Section: "### 8.1", Doc: "Takes the step's error when its when holds; its next steps run instead of the step's dependents."},

	// workflow
	{Key: "version", Section: "## 2.", Type: "string", Default: "required", Doc: "The workflow's version, MAJOR.MINOR.PATCH; the bump must cover the changes against the stored version."},
	{Key: "description", Section: "## 2.", Type: "string", Default: "`\"\"`", Doc: "What the workflow does."},
	{Key: "key", Section: "## 2.", Type: "CEL string", Default: "hash of the inputs", Doc: "The run's identity: applying with the key of an unfinished run resumes it."},
	{Key: "deadline", Section: "## 2.", Type: "duration", Default: "none", Doc: "Bounds the whole run, counted from its creation."},
	{Key: "retention", Section: "## 2.", Type: "duration", Default: "the worker's or server's `--retention`, else kept", Doc: "How long the workflow's finished runs are kept before a worker or server deletes them."},
	{Key: "pass_env", Section: "## 2.", Type: "list of strings", Default: "`[]`", Doc: "Worker environment variables every exec program of the workflow takes."},
	// input
	{Key: "input.type", Section: "## 3.", Type: "type expression", Default: "required †", Doc: "The input's type: string, number, bool, list(T), map(T), object({...}), any."},
	{Key: "input.default", Section: "## 3.", Type: "literal", Default: "none: the input is required", Doc: "The value when the run is not given one."},
	{Key: "input.description", Section: "## 3.", Type: "string", Default: "`\"\"`", Doc: "Shown by plan and the TUI."},
	// secret
	{Key: "secret.env", Section: "## 4.", Type: "string", Default: "required", Doc: "The environment variable that holds the secret."},
	// concurrency
	{Key: "concurrency.key", Section: "## 5.", Type: "CEL string", Default: "required", Doc: "Runs with the same key share the slots."},
	{Key: "concurrency.limit", Section: "## 5.", Type: "number (whole)", Default: "`1` †", Doc: "How many runs hold a slot at once."},
	{Key: "concurrency.on_conflict", Section: "## 5.", Type: "string", Default: "`\"queue\"` †", Doc: "What a run that finds no slot does: queue, skip or fail."},
	// defaults
	{Key: "defaults.timeout", Section: "## 6.", Doc: "Per-attempt timeout of exec and http steps that set none."},
	// retry
	{Key: "retry.attempts", Section: "## 6.", Type: "number (whole)", Default: "`1` (no retry)", Doc: "Total attempts, the first included."},
	{Key: "retry.backoff", Section: "## 6.", Type: "duration", Default: "`\"1s\"` †", Doc: "The delay after the first failed attempt."},
	{Key: "retry.multiplier", Section: "## 6.", Type: "number", Default: "`2` †", Doc: "Each next delay is the previous one times this."},
	{Key: "retry.max_delay", Section: "## 6.", Type: "duration", Default: "none (no cap)", Doc: "The longest delay."},
	{Key: "retry.jitter", Section: "## 6.", Type: "duration", Default: "`\"0s\"`", Doc: "A uniform random extra delay up to this."},
	{Key: "retry.when", Section: "## 6.", Type: "CEL bool", Default: "retry every retryable error", Doc: "Retry only when this is true; sees error."},
	// breaker
	{Key: "breaker.failures", Section: "## 7.", Type: "number (whole)", Default: "required", Doc: "Consecutive failed attempts that open the breaker."},
	{Key: "breaker.cooldown", Section: "## 7.", Type: "duration", Default: "required", Doc: "How long the breaker stays open before one trial attempt."},
	{Key: "breaker.on_open", Section: "## 7.", Type: "string", Default: "`\"wait\"`", Doc: "wait: park the step until the trial; fail: fail the attempt at once."},
	// limits
	{Key: "limits.attempts", Section: "## 15.", Default: "1000", Doc: "Step attempts per run."},
	{Key: "limits.output_bytes", Section: "## 15.", Default: "1 MiB (1048576)", Doc: "Bytes kept per captured stream per attempt."},
	{Key: "limits.parallel", Section: "## 15.", Default: "16", Doc: "Attempts of one run in flight at once."},
	// step
	{Key: "step.depends_on", Section: "### 8.1", Type: "list of `step.X`", Default: "`[]`", Doc: "Steps this one waits for without reading their data."},
	{Key: "step.join", Section: "### 8.1", Type: "string", Default: "`\"all\"`", Doc: "all: run when every dependency settled; any: when one completed; first: when one completed, canceling the others (a race)."},
	{Key: "step.when", Section: "### 8.1", Type: "CEL bool", Default: "run", Doc: "The step is skipped when this is false."},
	{Key: "step.timeout", Section: "### 8.1", Type: "duration", Default: "`defaults.timeout`, else `5m`", Doc: "Per-attempt timeout."},
	{Key: "step.breaker", Section: "### 8.1", Type: "`breaker.X`", Default: "none", Doc: "The circuit breaker the step's attempts go through."},
	{Key: "step.until", Section: "### 8.1", Type: "CEL bool", Default: "none", Doc: "Repeat the action until this is true after an iteration."},
	{Key: "step.interval", Section: "### 8.1", Type: "duration", Default: "`\"0s\"`", Doc: "Delay between until iterations."},
	{Key: "step.max_iterations", Section: "### 8.1", Type: "number (whole)", Default: "`100`", Doc: "Most until iterations."},
	{Key: "step.on_error", Section: "### 8.1", Type: "string", Default: "`\"fail\"`", Doc: "fail: the run fails with the step; continue: later steps run and see the error."},
	{Key: "step.idempotency_key", Section: "### 8.1", Type: "template → string", Default: "`RUN_ID/STEP_KEY`", Doc: "The key the action carries so that a retried side effect happens once."},
	// foreach
	{Key: "foreach.items", Section: "### 8.1", Type: "CEL list", Default: "required", Doc: "The list to run the action over; item and index are visible in the action."},
	{Key: "foreach.concurrency", Section: "### 8.1", Type: "number (whole)", Default: "`1`", Doc: "Items in flight at once."},
	{Key: "foreach.on_failure", Section: "### 8.1", Type: "string", Default: "`\"fail\"`", Doc: "fail, continue, or dead_letter a failed item."},
	// exec
	{Key: "exec.command", Section: "#### 8.3", Type: "list of string templates; a string when `shell = true`", Default: "required", Doc: "The program and its arguments."},
	{Key: "exec.shell", Section: "#### 8.3", Type: "bool", Default: "`false`", Doc: "Run command as a /bin/sh -c script."},
	{Key: "exec.dir", Section: "#### 8.3", Type: "string template", Default: "the workflow file's directory †", Doc: "The working directory."},
	{Key: "exec.env", Section: "#### 8.3", Type: "object of string templates", Default: "`{}`", Doc: "The program's own environment variables."},
	{Key: "exec.pass_env", Section: "#### 8.3", Type: "list of strings", Default: "`[]`", Doc: "Worker variables this program takes, beyond the workflow's pass_env."},
	{Key: "exec.stdin", Section: "#### 8.3", Type: "string template", Default: "empty", Doc: "Text written to the program's standard input."},
	// http
	{Key: "http.method", Section: "#### 8.4", Type: "string", Default: "`\"GET\"` †", Doc: "The request method."},
	{Key: "http.url", Section: "#### 8.4", Type: "string template", Default: "required", Doc: "An absolute http or https URL; each {{ }} value is escaped for the part it lands in."},
	{Key: "http.query", Section: "#### 8.4", Type: "object of string templates", Default: "`{}`", Doc: "Query parameters added to the url."},
	{Key: "http.follow_redirects", Section: "#### 8.4", Type: "bool", Default: "`true`", Doc: "false: a 3xx response is the response."},
	{Key: "http.headers", Section: "#### 8.4", Type: "object of string templates", Default: "`{}`", Doc: "Request headers."},
	{Key: "http.body", Section: "#### 8.4", Type: "template or object/list", Default: "none", Doc: "The request body: an object or list is sent as JSON."},
	{Key: "http.expect", Section: "#### 8.4", Type: "list of whole numbers", Default: "any 2xx", Doc: "Statuses that count as success."},
	// openapi
	{Key: "openapi", Section: "#### 8.10", Doc: "Calls an operation of an OpenAPI document by its operationId; compiled to an http request. Output: status, headers, body typed by the document."},
	{Key: "openapi.document", Section: "#### 8.10", Type: "string (literal)", Default: "required", Doc: "The OpenAPI 3 document: a file relative to the workflow file's directory and inside it, or an http or https URL fetched when the workflow is compiled."},
	{Key: "openapi.operation", Section: "#### 8.10", Type: "string (literal)", Default: "required", Doc: "The operation's operationId."},
	{Key: "openapi.server", Section: "#### 8.10", Type: "string template", Default: "the document's first server", Doc: "The base URL the operation's path goes after."},
	{Key: "openapi.parameters", Section: "#### 8.10", Type: "object of templates", Default: "`{}`", Doc: "The operation's parameters by name; each goes where the document puts it (path, query, header)."},
	{Key: "openapi.body", Section: "#### 8.10", Type: "template or object/list", Default: "none", Doc: "The request body, checked against the operation's request schema."},
	{Key: "openapi.headers", Section: "#### 8.10", Type: "object of string templates", Default: "`{}`", Doc: "Request headers besides the header parameters."},
	{Key: "openapi.expect", Section: "#### 8.10", Type: "list of whole numbers", Default: "any 2xx", Doc: "Statuses that count as success."},
	{Key: "openapi.follow_redirects", Section: "#### 8.10", Type: "bool", Default: "`true`", Doc: "false: a 3xx response is the response."},
	// sleep, wait, workflow, fail
	{Key: "sleep.duration", Section: "#### 8.6", Type: "duration (literal)", Default: "–", Doc: "How long to sleep."},
	{Key: "sleep.until", Section: "#### 8.6", Type: "string template", Default: "–", Doc: "An RFC 3339 time to sleep until."},
	{Key: "wait.signal", Section: "#### 8.6", Type: "string (literal)", Default: "required", Doc: "The signal's name."},
	{Key: "wait.timeout", Section: "#### 8.6", Type: "duration", Default: "none: wait until the run's deadline †", Doc: "How long to wait for the signal."},
	{Key: "wait.type", Section: "#### 8.6", Type: "type (as an input's, §3)", Default: "`any`", Doc: "The type of the signal's data, which is the step's output."},
	{Key: "step.workflow.name", Section: "#### 8.6", Type: "string (literal)", Default: "required", Doc: "The child workflow's name."},
	{Key: "step.workflow.version", Section: "#### 8.6", Type: "string (literal)", Default: "required †", Doc: "The child's version pin: \"1\", \"1.2\" or \"1.2.3\"."},
	{Key: "step.workflow.input", Section: "#### 8.6", Type: "object of templates", Default: "`{}`", Doc: "The child's inputs."},
	{Key: "fail.message", Section: "#### 8.6", Type: "string template", Default: "required unless `error` is set", Doc: "The failure's message."},
	{Key: "fail.error", Section: "#### 8.6", Type: "template → error object", Default: "–", Doc: "An error raised again, e.g. \"{{ steps.charge.error }}\": its kind and fields are kept."},
	{Key: "fail.type", Section: "#### 8.6", Type: "string template", Default: "`urn:flowrun:error:fail`", Doc: "The problem type (RFC 9457), a URI reference."},
	{Key: "fail.status", Section: "#### 8.6", Type: "whole number or template", Default: "–", Doc: "An HTTP status, 100..599."},
	{Key: "fail.title", Section: "#### 8.6", Type: "string template", Default: "–", Doc: "The problem's title."},
	{Key: "fail.detail", Section: "#### 8.6", Type: "string template", Default: "–", Doc: "The problem's detail."},
	{Key: "fail.instance", Section: "#### 8.6", Type: "string template", Default: "–", Doc: "The problem's instance."},
	{Key: "catch.when", Section: "### 8.1", Type: "CEL bool", Default: "true", Doc: "Take the error only when this is true; sees error."},
	{Key: "catch.next", Section: "### 8.1", Type: "list of `step.X`", Default: "required", Doc: "The steps that run instead of the step's dependents."},
	// switch
	{Key: "switch.default", Section: "#### 8.7", Type: "list of `step.X`", Doc: "The steps to run when no case is taken."},
	{Key: "case.when", Section: "#### 8.7", Type: "CEL bool", Doc: "The case is taken when this is true (the first such case)."},
	{Key: "case.next", Section: "#### 8.7", Type: "list of `step.X`", Doc: "The steps this branch runs."},
	// output, alert
	{Key: "output.value", Section: "## 9.", Type: "literal or template", Default: "required", Doc: "The output's value."},
	{Key: "output.description", Section: "## 9.", Type: "string", Default: "`\"\"`", Doc: "What the output is."},
	{Key: "alert.on", Section: "## 9.", Type: "list of strings", Default: "required", Doc: "The run endings that send the alert: failed, timed_out, interrupted, dead_lettered."},
	// schedule
	{Key: "schedule.cron", Section: "### 9.1", Type: "string", Default: "–", Doc: "Five cron fields, or @hourly, @daily, @weekly, @monthly, @yearly."},
	{Key: "schedule.every", Section: "### 9.1", Type: "duration string", Default: "–", Doc: "A fixed interval, whole seconds."},
	{Key: "schedule.timezone", Section: "### 9.1", Type: "IANA name", Default: "`\"UTC\"`", Doc: "The zone the cron fields are read in."},
	{Key: "schedule.inputs", Section: "### 9.1", Type: "object of literals and templates", Default: "`{}`", Doc: "The inputs of each run; schedule.time, schedule.date, schedule.name are visible."},
	{Key: "schedule.overlap", Section: "### 9.1", Type: "string", Default: "`\"skip\"`", Doc: "What happens when the previous run is still going: skip, queue, cancel_previous, allow."},
	{Key: "schedule.catch_up", Section: "### 9.1", Type: "string", Default: "`\"latest\"`", Doc: "Slots missed while no worker ran: none, latest, all."},
	{Key: "schedule.max_catch_up", Section: "### 9.1", Type: "int", Default: "10 with `all`", Doc: "Most missed slots started with catch_up = \"all\"."},
	{Key: "webhook", Section: "### 9.2", Doc: "Lets another system start runs with a signed HTTP request to flowrun serve."},
	{Key: "webhook.secret", Section: "### 9.2", Type: "`secret.NAME`", Default: "required", Doc: "The secret whose value is the signing key."},
	{Key: "webhook.signature", Section: "### 9.2", Type: "string", Default: "`\"X-Hub-Signature-256\"`", Doc: "The header carrying sha256=<hex> of the body."},
	{Key: "webhook.inputs", Section: "### 9.2", Type: "object of literals and templates", Default: "`{}`", Doc: "The run's inputs; body and headers are visible."},
	{Key: "webhook.key", Section: "### 9.2", Type: "CEL string", Default: "the workflow's `key` over the inputs (§2)", Doc: "The run's key; sees body and headers."},
	{Key: "schedule.jitter", Section: "### 9.1", Type: "duration string", Default: "none", Doc: "A random delay up to this for each run."},
}

// docIndex maps each key to its row, built when the language server first
// needs it rather than when any flowrun process starts (a package-level
// sync.OnceValue would itself be work at start-up).
func docIndex() map[string]*docEntry {
	docIndexOnce.Do(func() {
		docIndexMap = make(map[string]*docEntry, len(docs))
		for i := range docs {
			docIndexMap[docs[i].Key] = &docs[i]
		}
	})
	return docIndexMap
}

var (
	docIndexOnce sync.Once
	docIndexMap  map[string]*docEntry
)

// blockKey is the docs key of the block at path (block types, outermost
// first): its type, except a step's child workflow action.
func blockKey(path []string) string {
	if len(path) == 0 {
		return ""
	}
	last := path[len(path)-1]
	if last == "workflow" && len(path) > 1 {
		return "step.workflow"
	}
	return last
}

// attrKey is the docs key of attribute attr of the block at path.
func attrKey(path []string, attr string) string {
	b := blockKey(path)
	if b == "workflow" {
		return attr
	}
	return b + "." + attr
}

// docText renders an entry for hover and completion.
func (d *docEntry) text(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**", name)
	if d.Type != "" {
		fmt.Fprintf(&b, ": %s", d.Type)
	}
	if d.Default != "" {
		fmt.Fprintf(&b, " (default: %s)", d.Default)
	}
	fmt.Fprintf(&b, "\n\n%s\n\nspec/language.md %s", d.Doc, strings.TrimLeft(d.Section, "# "))
	return b.String()
}
