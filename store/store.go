// Package store owns flowrun's durable state: the Store interface every
// backend implements, its parameter and row types, the run and step status
// types and the sentinel errors.
//
// The store is the single source of truth. Every change of a run's state is
// one call to TransitionCommit, which the backend applies in one database
// transaction, fenced by the run's lease so that a worker that lost its lease
// can never write over the one that took the run over.
//
// What every backend checks of a call's parameters before it writes is
// checked here, once (ScheduleFireParams.Check, SignalSendParams.Check,
// CheckOutputChunks): a refused call writes nothing on any backend.
//
// The store must not import lang or interp, must not read the wall clock
// (every time comes in a params struct), and must not interpret graphs: it
// keeps them as bytes with their workflow, version and hash.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors. Backends wrap them with context; test with errors.Is.
var (
	// ErrNotFound: no row matches (unknown run id, workflow version, ...).
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: a run id prefix matches more than one run.
	ErrAmbiguous = errors.New("ambiguous run id prefix")
	// ErrLeaseLost: the caller no longer holds the run's lease; another
	// worker owns it now. The transition was not applied.
	ErrLeaseLost = errors.New("run lease lost")
	// ErrVersionConflict: a (workflow, version) is already stored with a
	// different graph hash.
	ErrVersionConflict = errors.New("workflow version already stored with a different graph")
	// ErrVersionInUse: a version cannot be replaced (VersionPutParams.Replace)
	// while an unfinished run is bound to it; the error is a
	// *VersionInUseError naming the run.
	ErrVersionInUse = errors.New("workflow version is bound to an unfinished run")
	// ErrSchemaTooNew: the database was written by a newer flowrun.
	ErrSchemaTooNew = errors.New("database schema is newer than this flowrun")
	// ErrBusy: the database stayed locked past the busy timeout.
	ErrBusy = errors.New("database is busy")
	// ErrTimeout: a read ran past the store's query timeout and the
	// database stopped it (Postgres: statement_timeout). Nothing was
	// written; the same read may succeed when the database is less busy.
	ErrTimeout = errors.New("database query timed out")
	// ErrFull: the disk (or the server's) holding the database is full. The
	// write was rolled back; what was committed before is kept.
	ErrFull = errors.New("database disk is full")
	// ErrConflict: a state precondition failed (a signal for a run that is
	// not waiting for it, a cancel of a finished run, ...).
	ErrConflict = errors.New("conflict")
	// ErrKeyRace: a run key got a new run between a caller's read and its
	// insert (RunInsertBatchKeyed); nothing was written, and reading again
	// decides right.
	ErrKeyRace = errors.New("another start of the same run key came first")
	// ErrDuplicateDelivery: a run insert's webhook delivery id is already
	// recorded for that webhook (DeliveryRun finds the run it started).
	ErrDuplicateDelivery = errors.New("webhook delivery already recorded")
)

// RunStatus is the state of a run.
type RunStatus string

// Run statuses.
const (
	RunPending   RunStatus = "pending"
	RunRunning   RunStatus = "running"
	RunWaiting   RunStatus = "waiting" // parked: timer, signal, backoff, breaker, queue, child
	RunBlocked   RunStatus = "blocked" // a version decision is needed
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCanceled  RunStatus = "canceled"
)

// Terminal reports whether the status is final.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCanceled
}

// StepStatus is the state of a step (or of one foreach item or until
// iteration of it).
type StepStatus string

// Step statuses.
const (
	StepPending   StepStatus = "pending"
	StepRunning   StepStatus = "running"
	StepWaiting   StepStatus = "waiting"
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
	StepCanceled  StepStatus = "canceled"
)

// Terminal reports whether the status is final.
func (s StepStatus) Terminal() bool {
	return s == StepCompleted || s == StepFailed || s == StepSkipped || s == StepCanceled
}

// AttemptStatus is the state of one attempt of a step.
type AttemptStatus string

// Attempt statuses. An attempt that was running when its worker died is
// closed as interrupted when the run is resumed, and then re-executed.
const (
	AttemptRunning     AttemptStatus = "running"
	AttemptCompleted   AttemptStatus = "completed"
	AttemptFailed      AttemptStatus = "failed"
	AttemptInterrupted AttemptStatus = "interrupted"
	AttemptCanceled    AttemptStatus = "canceled"
)

// Version is a stored, immutable workflow graph.
type Version struct {
	Workflow  string    `json:"workflow"`
	Version   string    `json:"version"` // MAJOR.MINOR.PATCH
	Major     int       `json:"major"`
	Minor     int       `json:"minor"`
	Patch     int       `json:"patch"`
	Hash      string    `json:"hash"`       // hex SHA-256 of Graph
	Graph     []byte    `json:"graph"`      // canonical JSON
	CreatedAt time.Time `json:"created_at"` // when this revision was stored
	// Revision counts the graphs the version has had: 1 for the first,
	// one more for each replacement of a development version (MAJOR 0,
	// VersionPutParams.Replace). VersionGetByHash of a replaced graph
	// returns that revision, whose Hash differs from the version's current
	// one (VersionGet).
	Revision int `json:"revision"`
}

// VersionInUseError refuses to replace a version while an unfinished run
// is bound to it (VersionPutParams.Replace). It wraps ErrVersionInUse.
type VersionInUseError struct {
	Workflow, Version string
	Run               string    // the oldest unfinished run bound to it
	Status            RunStatus // that run's status
	Runs              int       // how many unfinished runs are bound to it
}

func (e *VersionInUseError) Error() string {
	return fmt.Sprintf("workflow %s version %s: %d unfinished run(s) bound to it, the oldest %s (%s)", e.Workflow, e.Version, e.Runs, e.Run, e.Status)
}

func (e *VersionInUseError) Unwrap() error { return ErrVersionInUse }

// Owner identifies a lease holder: the host, the process and a worker id
// unique within the process.
type Owner struct {
	Host   string
	PID    int
	Worker string
}

// String renders the owner as host/pid/worker, the form stored in the
// database.
func (o Owner) String() string { return o.Host + "/" + strconv.Itoa(o.PID) + "/" + o.Worker }

// Lease is held by a worker that claimed a run. Epoch increases with every
// claim, so a worker that lost its lease is fenced off even if it still
// believes it holds it.
type Lease struct {
	Owner string `json:"owner"`
	Epoch int64  `json:"epoch"`
}

// Run is one execution of a workflow version.
type Run struct {
	ID              string          `json:"id"`
	Workflow        string          `json:"workflow"`
	Version         string          `json:"version"`
	GraphHash       string          `json:"graph_hash"`
	Key             string          `json:"key"`
	Status          RunStatus       `json:"status"`
	Inputs          json.RawMessage `json:"inputs"`
	Outputs         json.RawMessage `json:"outputs"` // nil until completed
	Error           json.RawMessage `json:"error"`   // nil or {"kind","message","step"}
	CreatedAt       time.Time       `json:"created_at"`
	StartedAt       time.Time       `json:"started_at"`  // zero until first claimed
	FinishedAt      time.Time       `json:"finished_at"` // zero until terminal
	AvailableAt     time.Time       `json:"available_at"`
	DeadlineAt      time.Time       `json:"deadline_at"` // zero: none
	Lease           Lease           `json:"lease"`       // Owner "" when free
	LeaseExpiresAt  time.Time       `json:"lease_expires_at"`
	ParentRunID     string          `json:"parent_run_id"`
	ParentStepKey   string          `json:"parent_step_key"`
	RootRunID       string          `json:"root_run_id"` // the top of the parent chain (itself for a top-level run)
	AttemptsUsed    int             `json:"attempts_used"`
	CancelRequested bool            `json:"cancel_requested"`
	// Attempt is run.attempt: 1, plus one for each redrive (flowrun retry).
	Attempt int `json:"attempt"`
	// WorkDir is the directory of the workflow file the run was started
	// from: relative exec paths and the default exec dir resolve against
	// it. "" for runs stored before it was recorded (the worker's cwd).
	WorkDir string `json:"work_dir"`
	// WaitReason says why a waiting or blocked run is parked, for people:
	// "timer", "signal:approval", "retry", "breaker:payments", "child",
	// "queue", "version".
	WaitReason string    `json:"wait_reason"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Trace is the run's place in its OpenTelemetry trace, fixed when
	// the run is created (zero for runs stored before it was recorded).
	Trace Trace `json:"trace"`
}

// Trace is a run's trace: the trace it belongs to, the id of its root
// span, and the span its root span is a child of (a child run's parent
// run's root span; empty for a top-level run). Ids are lower-case hex
// (32 digits for the trace, 16 for spans) as W3C trace context writes
// them. The store keeps them as given and never reads them.
type Trace struct {
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id"`
}

// RunSummary is a row of a run listing.
type RunSummary struct {
	ID         string    `json:"id"`
	Workflow   string    `json:"workflow"`
	Version    string    `json:"version"`
	Key        string    `json:"key"`
	Status     RunStatus `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
	FinishedAt time.Time `json:"finished_at"`
	// StepsTotal is the number of top-level steps of the run's graph (for a
	// version stored before it was recorded: of the steps started so
	// far); StepsDone those of them that settled (foreach items and until
	// iterations are counted in their step). Neither counts the engine's
	// own rows (GraphStep).
	StepsTotal int `json:"steps_total"`
	StepsDone  int `json:"steps_done"`
}

// Step is the current state of one step key of a run. The key is the step
// name, with "[i]" for a foreach item and "#n" for an until iteration
// (see StepKey).
type Step struct {
	RunID      string          `json:"run_id"`
	Key        string          `json:"key"`
	Step       string          `json:"step"`
	Index      int             `json:"index"`     // foreach item index, -1 when none
	Iteration  int             `json:"iteration"` // until iteration, -1 when none
	Status     StepStatus      `json:"status"`
	Attempts   int             `json:"attempts"`
	Output     json.RawMessage `json:"output"`
	Error      json.RawMessage `json:"error"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
	// WakeAt is when a waiting step becomes due (timer, backoff, breaker
	// cooldown, wait timeout); zero when it waits on something else.
	WakeAt time.Time `json:"wake_at"`
	// Detail is what a waiting step waits for, in words the CLI and TUI
	// show ("signal approval", "retry 2/4", "breaker payments").
	Detail string `json:"detail"`
	// State is step-private engine state (the drawn backoff, the item,
	// the child run id), JSON.
	State json.RawMessage `json:"state"`
}

// GraphStep reports whether a step row's name is a step of the run's
// graph. The engine keeps rows of its own beside them, named with a "~"
// that no step name can hold: a saga's controller ("~compensate") and
// each compensation ("NAME~compensate", semantics.md §14). Those rows are
// the run's as much as any, but a count of its steps leaves them out.
func GraphStep(name string) bool { return !strings.Contains(name, "~") }

// StepHead is a step key without its output, error and private state:
// what a rebuild reads of every key to find the few it must read whole.
type StepHead struct {
	Key       string
	Step      string
	Index     int
	Iteration int
	Status    StepStatus
}

// ItemTotal is how many foreach items of one step have one status, and
// the attempts they took together.
type ItemTotal struct {
	Step     string
	Status   StepStatus
	Items    int
	Attempts int
}

// StepItemsParams chooses a page of one foreach step's items.
type StepItemsParams struct {
	RunID string
	Step  string
	// Status keeps only the items of that status when set.
	Status StepStatus
	// From is the lowest item index returned.
	From int
	// Limit is how many rows at most; 0 or less is no limit.
	Limit int
}

// ParseStepKey splits a key made by StepKey into the step name, the item
// index and the iteration (-1 when none). Step names are identifiers, so
// the split is unambiguous; ok is false for a key StepKey cannot make.
func ParseStepKey(key string) (step string, index, iteration int, ok bool) {
	index, iteration = -1, -1
	step, rest := key, ""
	if i := strings.IndexAny(key, "[#"); i >= 0 {
		step, rest = key[:i], key[i:]
	}
	if step == "" {
		return "", -1, -1, false
	}
	num := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0 && strconv.Itoa(n) == s
	}
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "", -1, -1, false
		}
		if index, ok = num(rest[1:end]); !ok {
			return "", -1, -1, false
		}
		rest = rest[end+1:]
	}
	if strings.HasPrefix(rest, "#") {
		if iteration, ok = num(rest[1:]); !ok {
			return "", -1, -1, false
		}
		rest = ""
	}
	if rest != "" {
		return "", -1, -1, false
	}
	return step, index, iteration, true
}

// StepKey returns the key of a step, a foreach item (index >= 0) or an
// until iteration (iteration >= 0).
func StepKey(step string, index, iteration int) string {
	k := step
	if index >= 0 {
		k += "[" + strconv.Itoa(index) + "]"
	}
	if iteration >= 0 {
		k += "#" + strconv.Itoa(iteration)
	}
	return k
}

// Attempt is one execution of a step key's action.
type Attempt struct {
	RunID          string          `json:"run_id"`
	StepKey        string          `json:"step_key"`
	Attempt        int             `json:"attempt"` // 1-based
	Status         AttemptStatus   `json:"status"`
	Owner          string          `json:"owner"`
	StartedAt      time.Time       `json:"started_at"`
	FinishedAt     time.Time       `json:"finished_at"`
	Output         json.RawMessage `json:"output"`
	Error          json.RawMessage `json:"error"`
	IdempotencyKey string          `json:"idempotency_key"`
}

// Event is one entry of a run's append-only history.
type Event struct {
	ID      int64           `json:"id"` // increasing across the store
	RunID   string          `json:"run_id"`
	At      time.Time       `json:"at"`
	Kind    string          `json:"kind"` // claimed, step_started, step_completed, step_failed, retry_scheduled, ...
	StepKey string          `json:"step_key"`
	Data    json.RawMessage `json:"data"`
}

// Signal is a named message for a run.
type Signal struct {
	ID         int64           `json:"id"`
	RunID      string          `json:"run_id"`
	Name       string          `json:"name"`
	Payload    json.RawMessage `json:"payload"`
	CreatedAt  time.Time       `json:"created_at"`
	ConsumedBy string          `json:"consumed_by"` // step key that consumed it; "" while pending
}

// VersionPutParams stores a workflow version.
type VersionPutParams struct {
	Workflow            string
	Version             string
	Major, Minor, Patch int
	Hash                string
	Graph               []byte
	// Steps is the number of top-level steps of the graph: a run
	// summary's StepsTotal.
	Steps int
	// SignalTypes is the caller's JSON of the graph's typed waits
	// (interp: each signal name and the steps that wait for it with a
	// type), returned as stored by VersionSignalTypes; nil records
	// nothing (unknown). A version stored without it gets it when the
	// same graph is stored again.
	SignalTypes json.RawMessage
	Now         time.Time
	// WorkDir, when not empty, is recorded as the directory the version
	// was applied from (the workflow file's directory), replacing the one
	// recorded before: runs started later without a directory of their
	// own (through the API or a webhook) execute there. See VersionWorkDir.
	WorkDir string
	// Replace, when the version is stored with another hash, replaces its
	// graph in place as the next revision instead of failing with
	// ErrVersionConflict: the replaced graph stays readable by its hash
	// (VersionGetByHash, with its own Revision). In the same transaction
	// it checks that no unfinished run is bound to the version, else
	// nothing is written and the error is a *VersionInUseError. The
	// caller decides when a version may be replaced (interp: MAJOR 0).
	Replace bool
	// Source, when not nil, is the text of the file the graph was
	// compiled from, named SourceName, kept with the graph's hash for
	// people to read (VersionSource); a graph stored again with a source
	// keeps the newest.
	Source     []byte
	SourceName string
}

// RunInsertParams creates a run.
type RunInsertParams struct {
	ID            string
	Workflow      string
	Version       string
	GraphHash     string
	Key           string
	Inputs        json.RawMessage
	Now           time.Time
	AvailableAt   time.Time
	DeadlineAt    time.Time
	ParentRunID   string
	ParentStepKey string
	RootRunID     string // "" for a top-level run: the run's own id
	// WorkDir is recorded as Run.WorkDir.
	WorkDir string
	// Trace is recorded as Run.Trace.
	Trace  Trace
	Events []EventWrite
	// Delivery, when set, records the webhook delivery that starts the
	// run, in the run's transaction: a delivery id already recorded for
	// the webhook fails the insert with ErrDuplicateDelivery and writes
	// nothing. The record goes with the run when it is pruned.
	Delivery *Delivery
}

// Delivery is a webhook request's delivery id (spec/language.md §9.2).
type Delivery struct {
	Webhook string
	ID      string
}

// QueueStats are the runs due and not leased at an instant (RunQueue).
type QueueStats struct {
	Due int `json:"due"`
	// Oldest is when the first of the due runs became claimable: the
	// earliest of their available_at, or of the expiry of the lease a
	// gone worker left on one when that came later (a run taken over is
	// due since its lease expired, not since it started); zero when none
	// is due.
	Oldest time.Time `json:"oldest"`
}

// RunListParams filters a run listing, newest first.
type RunListParams struct {
	Status   RunStatus // "" for all
	Workflow string    // "" for all
	Limit    int       // 0: no limit
	// BeforeID pages: only runs older than this id.
	BeforeID string
	// IDPrefix keeps the runs whose id starts with it (byte for byte):
	// the candidates of an ambiguous run reference, and the nearest of
	// one that matches nothing. "" for all.
	IDPrefix string
	// Statuses keeps the runs with any of these statuses (and Status, when
	// both are set, is one more). Empty: all.
	Statuses []RunStatus
	// Key keeps the runs with this run key; "" for all.
	Key string
	// Since keeps the runs created at or after it; zero for all.
	Since time.Time
	// Until keeps the runs created before it; zero for all.
	Until time.Time
	// TopLevel keeps the runs that are no other run's child.
	TopLevel bool
	// Text keeps the runs whose id, key or error (its JSON text) holds
	// it, ignoring case; "" for all. It reads every run the other filters
	// keep: a search, not a listing.
	Text string
}

// RunClaimParams claims runs that are due and not leased (or whose lease
// expired), in one statement.
type RunClaimParams struct {
	Owner    string
	Now      time.Time
	LeaseFor time.Duration
	Limit    int
	// RunID restricts the claim to one run; RootRunID to a run and its
	// descendants (what apply works on). Both empty: any run.
	RunID     string
	RootRunID string
	// Own, with RunID, also claims the run while its lease is the
	// owner's own and unexpired: a worker that stopped working on a run
	// after a store error takes it back as soon as the store answers,
	// instead of waiting out its own lease. The epoch increases as in any
	// claim, and the engine rebuilds the run from the store.
	Own bool
}

// RunHeartbeatParams extends the leases of runs the owner holds.
type RunHeartbeatParams struct {
	Owner    string
	Leases   map[string]int64 // run id → epoch
	Now      time.Time
	LeaseFor time.Duration
}

// Heartbeat is the result for one run of a heartbeat.
type Heartbeat struct {
	RunID           string
	Lost            bool // the lease was taken over; stop working on the run
	CancelRequested bool
}

// LeaseExpireParams frees the leases of owners known to be dead (a process
// on this host whose pid is gone), so their runs can be claimed at once.
type LeaseExpireParams struct {
	Owners []string
	Now    time.Time
}

// EventListParams pages through events.
type EventListParams struct {
	RunID   string // "" for all runs
	AfterID int64
	Limit   int // 0: no limit
}

// SignalSendParams delivers a signal and wakes the run.
type SignalSendParams struct {
	RunID   string
	Name    string
	Payload json.RawMessage
	Now     time.Time
}

// Check says, for the backends, what makes p no signal to store: a signal
// needs a name.
func (p SignalSendParams) Check() error {
	if p.Name == "" {
		return errors.New("the signal has no name")
	}
	return nil
}

// RunCancelParams asks for a run (and its descendants) to be canceled. A run
// that is not leased is ended at once; a leased one is flagged and its
// worker ends it at its next heartbeat.
type RunCancelParams struct {
	RunID string
	Now   time.Time
	// Keep names the runs of the tree (the run itself or any of its
	// descendants) left unfinished even when nobody holds them: flagged
	// and due now, for a runner to end each after the compensations it
	// runs on a cancel. The others that nobody holds end at once.
	Keep []string
}

// Transition is one atomic change of a run's state. Everything in it is
// applied in one database transaction, or nothing is.
type Transition struct {
	RunID string
	// Lease fences the write: it applies only while the run's lease is
	// still (Owner, Epoch). A zero Lease is only for runs nobody holds.
	Lease    Lease
	Run      *RunUpdate
	Steps    []StepWrite
	Attempts []AttemptWrite
	Events   []EventWrite
	// Expect, when set, makes the transition a compare-and-set: it applies
	// only while the run's row still has this status, version and graph
	// hash (a version decision, which people may take at the same time).
	// When it does not hold, nothing of the transition is written and its
	// result's Err wraps ErrConflict.
	Expect *RunExpect
	// Children are runs to create (child workflows), in the same commit
	// as the step that starts them.
	Children []RunInsertParams
	// Runs are top-level runs to create in the same commit (the run that
	// replaces one decided "new"): unlike Children, they get no parent.
	Runs []RunInsertParams
	// CancelTrees are runs canceled with their descendants in the same
	// commit, as RunCancel cancels them (the child runs of a run decided
	// "new", or of steps a migration resets); a finished run is skipped.
	CancelTrees []string
	// DropSteps are the steps (by name) that the graph the run is rebound
	// to (Run.Version, a migration) no longer has. Their rows stay, with
	// their status and history, but are marked dropped, applied after
	// Steps: a run summary's StepsDone no longer counts them, as its
	// StepsTotal (the bound version's step count) does not. A step row
	// written again later (a migration to a graph that has the step
	// again) counts again. The engine's own rows (GraphStep) are never
	// marked.
	DropSteps []string
	// ConsumeSignals marks signals as consumed by a step key.
	ConsumeSignals []SignalConsume
	// Wake sets available_at = Now on these runs (a parent whose child just
	// finished), if they are waiting.
	Wake []string
	// FireSkipped, when not empty, records the schedule fire that started
	// this run (if a schedule started it) as skipped with this reason: the
	// run ended without running because a concurrency block skipped it.
	// The fire keeps its run id.
	FireSkipped string
	// Breakers are the outcomes of attempts of steps that use a breaker,
	// applied to the shared breaker state in this same commit (resilience.go).
	Breakers []BreakerWrite
	// DeadLetters are foreach items set aside under on_failure =
	// "dead_letter", stored in this same commit (resilience.go).
	DeadLetters []DeadLetterWrite
	// Alerts are alert deliveries queued in the outbox in this same commit,
	// so an occurrence is never lost or queued twice (resilience.go).
	Alerts []AlertWrite
	// Output are chunks of live output (output.go) stored in this same
	// commit: the last of an attempt's output, with the attempt's end.
	Output []OutputChunkWrite
	Now    time.Time
}

// RunExpect is the state a Transition's Expect requires of the run's row.
type RunExpect struct {
	Status    RunStatus
	Version   string
	GraphHash string
}

// RunUpdate changes run columns. Nil pointers leave a column as it is.
type RunUpdate struct {
	Status       *RunStatus
	Version      *string // rebind to another version (PATCH move, migrate)
	GraphHash    *string
	Outputs      json.RawMessage
	Error        json.RawMessage
	AvailableAt  *time.Time
	FinishedAt   *time.Time
	DeadlineAt   *time.Time
	AttemptsUsed *int
	WaitReason   *string
	// Attempt sets run.attempt (a redrive increments it).
	Attempt *int
	// Release frees the lease (the run is parked or finished).
	Release bool
	// ClearCancel resets the cancel request (after the cancel was carried out).
	ClearCancel bool
}

// ItemOutputs is the Output a foreach step's row is written with in place
// of the list of its items' outputs, so that a foreach whose output no
// expression of its run reads never holds that list: StepList and StepGet
// return, for a row written with it, the JSON list of the outputs of the
// step's item keys (NAME[i]) in index order, null for an item that did not
// complete, assembled by the database when the row is read. It is not JSON,
// so no output a step produces is ever taken for it; StepWrite.Output is
// the only place it may appear, and only on a foreach step's own key whose
// items all have rows.
var ItemOutputs = json.RawMessage(ItemOutputsText)

// ItemOutputsText is ItemOutputs as the text stored in the output column.
const ItemOutputsText = "<flowrun: the outputs of the foreach items>"

// StepWrite upserts the state of one step key.
type StepWrite struct {
	Key        string
	Step       string
	Index      int
	Iteration  int
	Status     StepStatus
	Attempts   int
	Output     json.RawMessage
	Error      json.RawMessage
	StartedAt  time.Time
	FinishedAt time.Time
	WakeAt     time.Time
	Detail     string
	State      json.RawMessage
}

// AttemptWrite inserts an attempt, or updates it when (run, step key,
// attempt) exists.
type AttemptWrite struct {
	StepKey        string
	Attempt        int
	Status         AttemptStatus
	Owner          string
	StartedAt      time.Time
	FinishedAt     time.Time
	Output         json.RawMessage
	Error          json.RawMessage
	IdempotencyKey string
}

// EventWrite appends an event.
type EventWrite struct {
	Kind    string
	StepKey string
	Data    json.RawMessage
}

// SignalConsume records that a step key consumed a signal.
type SignalConsume struct {
	SignalID int64
	StepKey  string
}

// TransitionResult says what became of one transition of a batch.
type TransitionResult struct {
	RunID string
	// Err is nil when applied; ErrLeaseLost when fenced off. Other errors
	// fail the whole batch and are returned by TransitionCommit itself.
	Err error
	// EventIDs of the events appended, in order.
	EventIDs []int64
}

// Store is the durable state of flowrun. Every method takes a context first;
// every write is one transaction. Implementations are safe for concurrent
// use by many goroutines and, through the database, by many processes.
type Store interface {
	// VersionPut stores a workflow version. Storing the same version with
	// the same hash again is a no-op; with another hash, ErrVersionConflict,
	// or with Replace a new revision of the version (VersionPutParams).
	VersionPut(ctx context.Context, p VersionPutParams) (Version, error)
	// VersionGet returns one stored version, or ErrNotFound.
	VersionGet(ctx context.Context, workflow, version string) (Version, error)
	// VersionGetByHash returns the version of a workflow with that graph
	// hash: a current revision first, else a replaced one (its Revision).
	// VersionSource returns the source file a graph was stored with
	// (VersionPutParams.Source): its name and text, or ErrNotFound.
	VersionSource(ctx context.Context, workflow, hash string) (name string, src []byte, err error)
	VersionGetByHash(ctx context.Context, workflow, hash string) (Version, error)
	// VersionSignalTypes returns the VersionPutParams.SignalTypes stored
	// with the version of a workflow with that graph hash (a current
	// revision first, else a replaced one) without reading its graph: nil
	// when none was recorded, ErrNotFound when no version has that hash.
	VersionSignalTypes(ctx context.Context, workflow, hash string) (json.RawMessage, error)
	// VersionList returns every stored version of a workflow, oldest
	// first by semantic version. An empty workflow lists all workflows.
	VersionList(ctx context.Context, workflow string) ([]Version, error)
	// VersionWorkDir returns the directory recorded when the version was
	// last applied with one (VersionPutParams.WorkDir): "" when none was,
	// ErrNotFound for a version not stored.
	VersionWorkDir(ctx context.Context, workflow, version string) (string, error)
	// VersionHeads is VersionList without the graphs (Graph is nil): what
	// a claim reads to bind a run to its version, without reading every
	// stored graph (megabytes for a long workflow).
	VersionHeads(ctx context.Context, workflow string) ([]Version, error)

	// RunInsert creates a pending run with its first events.
	RunInsert(ctx context.Context, p RunInsertParams) (Run, error)
	// RunInsertKeyed creates the run of p unless the newest run of its
	// workflow with its key is one the key still names: keep is called
	// with that run (when there is one) and returns true to answer it
	// instead (created false), or an error to write nothing. The read, the
	// decision and the insert are one transaction that no other start of
	// the same workflow and key can interleave with (SQLite: its one
	// writer; Postgres: a transaction lock on the key), so however many
	// processes start one key at once, they agree on one run. An empty
	// key inserts as RunInsert does.
	RunInsertKeyed(ctx context.Context, p RunInsertParams, keep func(newest Run) (bool, error)) (Run, bool, error)
	// RunInsertBatchKeyed is RunInsertBatch for runs that have keys:
	// seen maps each key the batch must be alone with to the id of the
	// newest run of the workflow with that key as the caller read it (""
	// for none). In the inserting transaction, serialized with every other
	// start of those keys as RunInsertKeyed is, a key whose newest run is
	// no longer that one fails the batch with ErrKeyRace and nothing is
	// written: the caller reads and decides again.
	RunInsertBatchKeyed(ctx context.Context, workflow string, ps []RunInsertParams, seen map[string]string) error
	// RunInsertBatch creates pending runs, each as RunInsert does, in one
	// database transaction: every run is created, or none (a failing one
	// fails the batch, naming its index).
	RunInsertBatch(ctx context.Context, ps []RunInsertParams) error
	// DeliveryRun returns the id of the run a webhook delivery started
	// (RunInsertParams.Delivery), or ErrNotFound.
	DeliveryRun(ctx context.Context, workflow, webhook, deliveryID string) (string, error)
	// RunGet returns a run by full id, or ErrNotFound.
	RunGet(ctx context.Context, id string) (Run, error)
	// RunGetHead is RunGet without the run's inputs (Inputs nil), for a
	// caller that does not read them: a run's inputs may be large (a
	// foreach's item list), and a read of them costs their size several
	// times over while it lasts.
	RunGetHead(ctx context.Context, id string) (Run, error)
	// RunFind resolves a full id or a unique prefix: ErrNotFound,
	// ErrAmbiguous.
	RunFind(ctx context.Context, idOrPrefix string) (Run, error)
	// RunGetByKey returns the newest run of a workflow with the key.
	RunGetByKey(ctx context.Context, workflow, key string) (Run, error)
	// RunsByKeys returns, for each of keys that any run of the workflow
	// has, the newest such run (as RunGetByKey would), in one read: a batch
	// start looks up all its keys at once. Empty keys match nothing.
	RunsByKeys(ctx context.Context, workflow string, keys []string) (map[string]Run, error)
	// RunList lists runs newest first.
	RunList(ctx context.Context, p RunListParams) ([]RunSummary, error)
	// RunChildren lists the runs whose parent is the run.
	RunChildren(ctx context.Context, runID string) ([]Run, error)
	// RunClaim leases due runs to the owner, atomically, in one statement.
	RunClaim(ctx context.Context, p RunClaimParams) ([]Run, error)
	// RunHeartbeat extends leases and reports lost leases and cancel
	// requests.
	RunHeartbeat(ctx context.Context, p RunHeartbeatParams) ([]Heartbeat, error)
	// RunLeaseOwners lists the distinct lease owners of runs whose lease
	// has not expired, for dead-process detection.
	RunLeaseOwners(ctx context.Context, now time.Time) ([]string, error)
	// LeaseExpire frees the leases of dead owners.
	LeaseExpire(ctx context.Context, p LeaseExpireParams) (int, error)
	// RunCancel requests the cancel of a run and its descendants.
	RunCancel(ctx context.Context, p RunCancelParams) (Run, error)
	// RunNextAvailable returns the earliest available_at of runs that are
	// not terminal and not blocked, restricted like RunClaimParams, for a
	// worker deciding how long to sleep. ok is false when there is none.
	RunNextAvailable(ctx context.Context, rootRunID string) (at time.Time, ok bool, err error)
	// RunQueue counts the runs a claim at now could take (not terminal,
	// not blocked, available_at at or before now, no lease or an expired
	// one) and returns the earliest available_at among them, for metrics
	// read at every scrape: one aggregate over the claim index.
	RunQueue(ctx context.Context, now time.Time) (QueueStats, error)

	// TransitionCommit applies transitions in one database transaction
	// (one commit for the batch). A transition whose lease is lost is
	// skipped with ErrLeaseLost in its result; the others apply.
	TransitionCommit(ctx context.Context, ts []Transition) ([]TransitionResult, error)

	// StepList returns every step key of a run.
	StepList(ctx context.Context, runID string) ([]Step, error)
	// StepHeads returns every step key of a run without its output, error
	// and state, in no particular order: a rebuild of a long run reads
	// these, then only the keys whose rows it still needs (StepGet).
	StepHeads(ctx context.Context, runID string) ([]StepHead, error)
	// StepTops returns the step keys of a run other than its foreach
	// items (the steps' own rows and their until iterations), in the
	// order StepList gives them: with StepItemTotals and StepItems, a view
	// of a run that folds its foreach steps without reading every item.
	StepTops(ctx context.Context, runID string) ([]Step, error)
	// StepItemTotals counts the foreach item rows of a run by step and
	// status, with their attempts summed, without reading the rows: in no
	// particular order, none for a run without items (or an unknown run).
	StepItemTotals(ctx context.Context, runID string) ([]ItemTotal, error)
	// StepItems returns item rows of one foreach step by index, from
	// p.From, at most p.Limit of them, only those of p.Status when set.
	StepItems(ctx context.Context, p StepItemsParams) ([]Step, error)
	// StepGet returns one step key of a run, or ErrNotFound when the run
	// has no row for it (the step has not begun, or the run is unknown).
	StepGet(ctx context.Context, runID, key string) (Step, error)
	// AttemptList returns the attempts of a run (of one step key when
	// stepKey is not empty), in order.
	AttemptList(ctx context.Context, runID, stepKey string) ([]Attempt, error)
	// EventList pages through events in id order.
	EventList(ctx context.Context, p EventListParams) ([]Event, error)

	// SignalSend stores a signal and wakes its run. ErrNotFound for an
	// unknown run, ErrConflict for a finished one.
	SignalSend(ctx context.Context, p SignalSendParams) (Signal, error)
	// SignalList returns a run's signals; pending only when pendingOnly.
	SignalList(ctx context.Context, runID string, pendingOnly bool) ([]Signal, error)

	// RunPrune deletes finished run trees that ended before p.Before, with
	// their steps, attempts, events, signals, dead letters, slots,
	// alerts and output chunks (retention; see RunPruneParams for what is never touched).
	RunPrune(ctx context.Context, p RunPruneParams) (PruneResult, error)

	// Resilience: breakers, dead letters, concurrency slots, alerts.
	Resilience

	// Schedules: the schedules of the workflows and their fires.
	Schedules

	// OutputStore: the live output of exec steps (output.go).
	OutputStore

	// Tokens: the API's bearer tokens, and the readiness probe.
	Tokens
	// Workers: the registry of worker processes.
	Workers

	// Close releases the database.
	Close() error
}

// Capabilities a Store may have beyond the Store interface. The engine
// uses each when the store has it and does without otherwise; both
// backends have all three, and storetest checks them (Run skips a
// capability the store under test lacks, and says so).

// TransitionClaimer is a store that claims runs in the database
// transaction of a batch of transitions, so a busy worker's claims cost no
// commit of their own.
type TransitionClaimer interface {
	// TransitionCommitClaim claims runs like RunClaim and applies the
	// transitions like TransitionCommit, in one database transaction. The
	// claim comes first, so it never takes a run that a transition of the
	// batch releases. A Limit below 1 claims nothing. If the batch fails,
	// neither the claim nor the transitions apply.
	TransitionCommitClaim(ctx context.Context, ts []Transition, p RunClaimParams) ([]TransitionResult, []Run, error)
}

// CancelPoller is a store that reads the pending cancel requests of given
// runs cheaply, so a cancel made by another process reaches a worker before
// its next heartbeat.
type CancelPoller interface {
	// RunCancelRequested returns those of ids whose cancel was requested
	// and has not yet been carried out, in no particular order.
	RunCancelRequested(ctx context.Context, ids []string) ([]string, error)
}

// WorkWaiter is a store that tells of commits that may concern workers
// (SQLite: inotify on the write-ahead log; Postgres: LISTEN/NOTIFY).
type WorkWaiter interface {
	// WaitForWork blocks until another connection may have made work
	// available and returns nil, or returns ctx.Err() when ctx ends first.
	// The first call only starts watching and returns nil at once; a
	// commit seen while nobody waits makes the next call return at once.
	// Any other error means the store cannot tell: the caller polls.
	WaitForWork(ctx context.Context) error
}
