package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// This file holds the store's schedules: the schedules a workflow version
// declares, activated when the version is applied, and the record of
// their fires. The store keeps a schedule's spec as text and never
// interprets it: every time it stores (the next slot, the slot fired) is
// computed by the caller (package schedule) and comes in a params struct.
//
// Exactly once: a fire is a row of schedule_fires, unique on (workflow,
// schedule, slot), inserted in the transaction that inserts the run it
// starts. Two workers firing the same slot both try the insert; the
// database lets one commit and refuses the other (ErrAlreadyFired), which
// then starts no run. Nothing checks first and inserts after.

// ErrAlreadyFired: the slot of a schedule is already recorded, fired or
// skipped. Nothing of the fire was written.
var ErrAlreadyFired = errors.New("schedule slot already fired or skipped")

// ErrNotTried: a fire of a batch was not tried because an earlier slot of
// the same schedule in the batch failed (other than ErrAlreadyFired), so
// that no slot is fired past one that is still due. Nothing of it was
// written; the slot stays due.
var ErrNotTried = errors.New("schedule slot not tried: an earlier slot of the schedule in the batch failed")

// ScheduleDef is a schedule as a version declares it.
type ScheduleDef struct {
	Name string
	// Kind is "cron" or "every"; Spec the cron expression or the interval
	// as written; Timezone the IANA name.
	Kind     string
	Spec     string
	Timezone string
	// Overlap, CatchUp and MaxCatchUp are the policies, as written
	// (package schedule parses them).
	Overlap    string
	CatchUp    string
	MaxCatchUp int
	// Jitter is the longest random delay of a fire's run.
	Jitter time.Duration
	// Inputs is the template of the inputs of the runs it starts, JSON.
	Inputs json.RawMessage
	// NextAt is the schedule's first slot after the activation's Now.
	NextAt time.Time
}

// SchedulesActivateParams make a version's schedules the workflow's
// active ones.
type SchedulesActivateParams struct {
	Workflow string
	// Version must be stored (ErrNotFound otherwise).
	Version string
	// WorkDir is where the runs the schedules start execute their
	// commands: the workflow file's directory when the version was applied.
	WorkDir   string
	Schedules []ScheduleDef
	Now       time.Time
}

// Schedule is a stored schedule of a workflow.
type Schedule struct {
	Workflow string `json:"workflow"`
	Name     string `json:"name"`
	// Version is the version that declared it, the last one activated.
	Version    string          `json:"version"`
	Kind       string          `json:"kind"`
	Spec       string          `json:"spec"`
	Timezone   string          `json:"timezone"`
	Overlap    string          `json:"overlap"`
	CatchUp    string          `json:"catch_up"`
	MaxCatchUp int             `json:"max_catch_up"`
	Jitter     time.Duration   `json:"jitter"`
	Inputs     json.RawMessage `json:"inputs"`
	WorkDir    string          `json:"work_dir"`
	Paused     bool            `json:"paused"`
	// Active is false once a later version of the workflow dropped it.
	Active bool `json:"active"`
	// Since: no slot at or before it is due. It is when the schedule was
	// activated with its current timing (kind, spec, time zone), or
	// resumed.
	Since time.Time `json:"since"`
	// NextAt is the earliest slot not yet fired or skipped, as the last
	// writer computed it: ScheduleDue returns the schedule from then on.
	NextAt time.Time `json:"next_at"`
	// LastSlot is the newest slot fired or skipped by the scheduler (not
	// by a manual trigger); zero when none. The slots due at now are
	// those after max(LastSlot, Since).
	LastSlot time.Time `json:"last_slot"`
	// LastRunID and LastFiredAt are of the newest fire that started a run
	// (a manual trigger too).
	LastRunID   string    `json:"last_run_id"`
	LastFiredAt time.Time `json:"last_fired_at"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// ScheduleListParams filter a schedule listing, by workflow and name.
type ScheduleListParams struct {
	Workflow string // "" for all
	// Inactive lists the schedules dropped by later versions too.
	Inactive bool
}

// SchedulePauseParams pause or resume a schedule. A resume makes the
// slots up to Now not due (Since = Now) and sets NextAt, the first slot
// after Now; a pause keeps both.
type SchedulePauseParams struct {
	Workflow string
	Name     string
	Paused   bool
	NextAt   time.Time
	Now      time.Time
}

// ScheduleDueParams ask for the active, unpaused schedules whose NextAt is
// at or before Now, earliest first.
type ScheduleDueParams struct {
	Now   time.Time
	Limit int // < 1: 1
}

// FireStatus says what became of a slot.
type FireStatus string

// Fire statuses.
const (
	FireFired   FireStatus = "fired"
	FireSkipped FireStatus = "skipped"
)

// ScheduleFire is the record of one slot of a schedule.
type ScheduleFire struct {
	Workflow string
	Schedule string
	Slot     time.Time
	Status   FireStatus
	// Reason says why a slot was skipped ("overlap", or the caller's:
	// "catch_up", ...), or
	// "manual" for a fired trigger; "" for a slot fired on time.
	Reason  string
	RunID   string // the run a fired slot started
	FiredAt time.Time
	Jitter  time.Duration
}

// Overlap policies the store carries out in a fire (ScheduleFireParams).
const (
	// OverlapSkip: while a run of the schedule is unfinished, the slot is
	// recorded skipped (reason "overlap") and no run starts.
	OverlapSkip = "skip"
	// OverlapCancelPrevious: the schedule's unfinished runs are canceled
	// (with their descendants, as RunCancel does) in the fire's
	// transaction, and the slot's run starts.
	OverlapCancelPrevious = "cancel_previous"
)

// ScheduleFireParams fire a slot. In one transaction the schedule's
// cursor advances, its unfinished runs are found (under the schedule's
// row lock, so concurrent fires of one schedule see each other's runs),
// the overlap policy is applied, the fire is recorded (ErrAlreadyFired
// when the slot is) and the run is inserted. The fire applies only while
// the schedule is active, at Version, and (unless Manual) not paused with
// the slot after Since; otherwise nothing is written and the error wraps
// ErrConflict (ErrNotFound for an unknown schedule).
type ScheduleFireParams struct {
	Workflow string
	Name     string
	Slot     time.Time
	Version  string
	// Overlap is the schedule's policy: OverlapSkip and
	// OverlapCancelPrevious are carried out here; any other value
	// ("allow", "queue") starts the run whatever else is unfinished, and
	// the caller reads the unfinished runs from the result.
	Overlap string
	// Jitter is the delay drawn for the slot, recorded with the fire; the
	// run's AvailableAt is the caller's (slot plus jitter).
	Jitter time.Duration
	// Run is the run to start; its Workflow and Version must be the
	// schedule's.
	Run RunInsertParams
	// NextAt is the schedule's first slot after Slot; NextAt and LastSlot
	// only move forward.
	NextAt time.Time
	// Manual is a trigger by a person: allowed while paused, recorded with
	// reason "manual", and moves neither NextAt nor LastSlot.
	Manual bool
	// KeyHeld, when set and the run has a key, is asked, in the fire's
	// transaction (on PostgreSQL under the key's lock, as
	// RunInsertKeyed takes it), about the newest run with that key: true
	// says that run holds the key (language.md §2), and the slot is
	// recorded skipped with reason "key" (KeyHeldReason) and starts
	// nothing.
	KeyHeld func(newest Run) (bool, error)
	Now     time.Time
}

// KeyHeldReason is the reason of a slot skipped because run holds its key.
func KeyHeldReason(run string) string { return "key: run " + run + " holds the run key" }

// SkipForKey makes f a slot skipped because run holds its key.
func (f *ScheduleFire) SkipForKey(run string) {
	f.Status, f.Reason, f.RunID, f.Jitter = FireSkipped, KeyHeldReason(run), "", 0
}

// ScheduleFireResult is what a fire did.
type ScheduleFireResult struct {
	// Fire is the slot's record: fired, or skipped with reason "overlap".
	Fire ScheduleFire
	// Run is the run started (zero when the slot was skipped).
	Run Run
	// Unfinished are the schedule's runs that were unfinished when the
	// fire looked (before a cancel_previous canceled them), oldest slot
	// first.
	Unfinished []string
}

// ScheduleFireOutcome is what became of one fire of a batch
// (ScheduleFireBatch): Err nil and Result as ScheduleFire returns it, or
// the error ScheduleFire would have returned (ErrAlreadyFired when the
// slot was recorded by another fire), or ErrNotTried.
type ScheduleFireOutcome struct {
	Result ScheduleFireResult
	Err    error
}

// ScheduleSkipParams record slots as skipped, each unless it is already
// recorded, and advance the schedule's cursor as ScheduleFire does.
type ScheduleSkipParams struct {
	Workflow string
	Name     string
	Slots    []time.Time
	Reason   string
	NextAt   time.Time
	Now      time.Time
}

// ScheduleFireListParams filter the fires listed, newest slot first: of
// one schedule, or the one of a run.
type ScheduleFireListParams struct {
	Workflow string
	Name     string
	RunID    string // set: the fire that started this run (Workflow and Name unused)
	Limit    int    // < 1: no limit
}

// Schedules is the part of Store that keeps schedules and their fires.
type Schedules interface {
	// SchedulesActivate makes p.Schedules the workflow's active schedules,
	// in one transaction: each is stored (a new one, or one whose timing
	// changed or that was inactive, starts at Now and NextAt; one whose
	// timing is unchanged keeps its cursor, so re-applying a file loses no
	// due slot), and the workflow's schedules the version does not declare
	// stop (Active false). Paused stays as it was. It returns the
	// workflow's active schedules by name.
	SchedulesActivate(ctx context.Context, p SchedulesActivateParams) ([]Schedule, error)
	// ScheduleGet returns one schedule, active or not, or ErrNotFound.
	ScheduleGet(ctx context.Context, workflow, name string) (Schedule, error)
	// ScheduleList lists schedules by workflow and name.
	ScheduleList(ctx context.Context, p ScheduleListParams) ([]Schedule, error)
	// SchedulePause pauses or resumes a schedule; ErrNotFound when unknown.
	SchedulePause(ctx context.Context, p SchedulePauseParams) (Schedule, error)
	// ScheduleDue returns the due schedules, earliest NextAt first, in
	// one indexed query.
	ScheduleDue(ctx context.Context, p ScheduleDueParams) ([]Schedule, error)
	// ScheduleFire fires a slot and starts its run, exactly once, or
	// records it skipped under its overlap policy.
	ScheduleFire(ctx context.Context, p ScheduleFireParams) (ScheduleFireResult, error)
	// ScheduleFireBatch fires many slots in one transaction, one commit:
	// each fire as ScheduleFire does it (the same rows, the same
	// exactly-once on the slot's primary key), in a savepoint of its own,
	// so that a fire that fails (a slot another worker recorded, a
	// schedule that changed, a run that cannot be inserted) writes nothing
	// and loses none of the others. The fires are done in (workflow,
	// schedule, slot) order, which is also the order the schedules' row
	// locks are taken in; once a fire of a schedule fails (not
	// ErrAlreadyFired) its later slots in the batch are ErrNotTried. It
	// returns an outcome per fire, in the order of ps; its error is the
	// transaction's own (nothing of the batch was written).
	ScheduleFireBatch(ctx context.Context, ps []ScheduleFireParams) ([]ScheduleFireOutcome, error)
	// ScheduleSkip records skipped slots and returns how many it recorded
	// (a slot already recorded is left as it is).
	ScheduleSkip(ctx context.Context, p ScheduleSkipParams) (int, error)
	// ScheduleFireList lists fires, newest slot first.
	ScheduleFireList(ctx context.Context, p ScheduleFireListParams) ([]ScheduleFire, error)
}

// Check refuses a fire whose run is not of the schedule's workflow and
// version, or that lacks a slot: a caller's mistake, before any write.
func (p ScheduleFireParams) Check() error {
	switch {
	case p.Slot.IsZero():
		return errors.New("a fire needs its slot")
	case p.Run.Workflow != p.Workflow || p.Run.Version != p.Version:
		return errors.New("a fire's run must be of the schedule's workflow and version")
	}
	return nil
}

// FireOrder returns the indexes of ps in the order a batch fires them:
// by workflow, schedule and slot (stable, so a slot given twice keeps its
// order), for the backends.
func FireOrder(ps []ScheduleFireParams) []int {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := &ps[a], &ps[b]
		if c := cmp.Compare(pa.Workflow, pb.Workflow); c != 0 {
			return c
		}
		if c := cmp.Compare(pa.Name, pb.Name); c != 0 {
			return c
		}
		return pa.Slot.Compare(pb.Slot)
	})
	return idx
}

// FireRefused says, for the backends, why a fire did not apply to the
// schedule as it now is (sc): it wraps ErrConflict.
func FireRefused(sc Schedule, p ScheduleFireParams) error {
	why := "it changed"
	switch {
	case !sc.Active:
		why = "it is no longer active (a later version dropped it)"
	case sc.Version != p.Version:
		why = "it now belongs to version " + sc.Version + ", not " + p.Version
	case !p.Manual && sc.Paused:
		why = "it is paused"
	case !p.Manual && !p.Slot.After(sc.Since):
		why = "the slot is not after " + sc.Since.UTC().Format(time.RFC3339Nano) + ", when it was activated or resumed"
	}
	return fmt.Errorf("schedule %s/%s was not fired: %s: %w", sc.Workflow, sc.Name, why, ErrConflict)
}

// LastSlot is the latest of slots (the zero time for none).
func LastSlot(slots []time.Time) time.Time {
	var last time.Time
	for _, s := range slots {
		if s.After(last) {
			last = s
		}
	}
	return last
}

// NewFire is the record of a fire, for the backends: skipped with reason
// "overlap" when the policy is OverlapSkip and runs are unfinished, fired
// otherwise.
func NewFire(p ScheduleFireParams, unfinished bool) ScheduleFire {
	f := ScheduleFire{Workflow: p.Workflow, Schedule: p.Name, Slot: p.Slot, Status: FireFired, RunID: p.Run.ID,
		FiredAt: p.Now, Jitter: p.Jitter}
	switch {
	case p.Overlap == OverlapSkip && unfinished:
		f.Status, f.Reason, f.RunID, f.Jitter = FireSkipped, "overlap", "", 0
	case p.Manual:
		f.Reason = "manual"
	}
	return f
}
