package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// This file holds the store's resilience state: circuit breakers, dead
// letters, concurrency slots and the alert outbox. Their writes that belong
// to a run's step transition (a breaker's count, a dead letter, an alert)
// ride in the Transition, so they commit with the step change that causes
// them; the rest are methods of Resilience.

// BreakerState is the state of a circuit breaker.
type BreakerState string

// Breaker states. A breaker nobody has written is closed.
const (
	BreakerClosed   BreakerState = "closed"
	BreakerOpen     BreakerState = "open"
	BreakerHalfOpen BreakerState = "half-open"
)

// Breaker is the shared state of one circuit breaker, keyed by its name
// across every workflow, run and process of the store.
type Breaker struct {
	Name  string       `json:"name"`
	State BreakerState `json:"state"`
	// Failures counts consecutive failed attempts since the last success.
	Failures int `json:"failures"`
	// OpenedAt is when the breaker last opened; OpenUntil when its
	// cooldown ends and a trial may run (zero while closed).
	OpenedAt  time.Time `json:"opened_at"`
	OpenUntil time.Time `json:"open_until"`
	// TrialRunID and TrialStepKey name the attempt that holds the trial of
	// a half-open breaker, until TrialUntil; after that another may take it.
	TrialRunID   string    `json:"trial_run_id"`
	TrialStepKey string    `json:"trial_step_key"`
	TrialUntil   time.Time `json:"trial_until"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// BreakerOutcome is what an attempt of a step that uses a breaker did.
type BreakerOutcome string

// Breaker outcomes.
const (
	// BreakerSuccess closes the breaker and resets its count.
	BreakerSuccess BreakerOutcome = "success"
	// BreakerFailure counts a failure; at the threshold (or when the
	// failed attempt was the half-open trial) the breaker opens.
	BreakerFailure BreakerOutcome = "failure"
	// BreakerRelease gives the trial back without a verdict (the trial
	// attempt was canceled or interrupted).
	BreakerRelease BreakerOutcome = "release"
)

// BreakerWrite applies an attempt's outcome to a breaker, in the commit of
// the attempt. The store computes the new state from the stored one, so
// concurrent runs count together, appends breaker_opened or breaker_closed
// to the transition's run when the state changes, and on close makes the
// runs parked on the breaker (wait reason "breaker:NAME") due now.
type BreakerWrite struct {
	Name    string
	Outcome BreakerOutcome
	StepKey string
	// Threshold is the number of consecutive failures that opens the
	// breaker; Cooldown how long it then stays open (the step's graph).
	Threshold int
	Cooldown  time.Duration
}

// BreakerAcquireParams ask whether a step key may start an attempt under a
// breaker now.
type BreakerAcquireParams struct {
	Name    string
	RunID   string
	StepKey string
	Now     time.Time
	// TrialFor bounds how long a granted trial is held if its attempt never
	// reports: then another attempt may take the trial. A trial whose
	// holder's lease lapsed (its process died) is free before that
	// (AcquireBreaker).
	TrialFor time.Duration
}

// DeadLetterStatus is the state of a dead letter.
type DeadLetterStatus string

// Dead letter statuses.
const (
	DeadLetterOpen    DeadLetterStatus = "open"
	DeadLetterRetried DeadLetterStatus = "retried" // re-executed successfully
	DeadLetterDropped DeadLetterStatus = "dropped" // closed unexecuted
)

// DeadLetter is a foreach item that failed after its retries under
// on_failure = "dead_letter".
type DeadLetter struct {
	ID      int64            `json:"id"`
	RunID   string           `json:"run_id"`
	Step    string           `json:"step"`     // the step name
	StepKey string           `json:"step_key"` // the item's key, NAME[i]
	Index   int              `json:"index"`
	Item    json.RawMessage  `json:"item"`
	Error   json.RawMessage  `json:"error"`
	Status  DeadLetterStatus `json:"status"`
	// Output is the output of the retry that closed it.
	Output    json.RawMessage `json:"output"`
	CreatedAt time.Time       `json:"created_at"`
	ClosedAt  time.Time       `json:"closed_at"`
	// ClaimOwner is the process retrying the letter (DeadLetterClaim),
	// until ClaimUntil; after that the claim has lapsed (its process
	// died) and another may take it. Empty when nobody retries it.
	ClaimOwner string    `json:"claim_owner,omitempty"`
	ClaimUntil time.Time `json:"claim_until"`
}

// DeadLetterClaimParams lease an open dead letter to Owner for LeaseFor:
// a dlq retry holds its letter while it runs, and renews the lease as a
// worker renews a run's.
type DeadLetterClaimParams struct {
	ID       int64
	Owner    string
	Now      time.Time
	LeaseFor time.Duration
	// Gone names a holder the caller knows is dead (a process of its own
	// host that no longer exists): its claim is taken over before it
	// lapses, as a dead owner's run leases are reclaimed at once.
	Gone string
}

// Check is the fence of a DeadLetterClaim of d (both backends; now is the
// store's clock for leases): another process's live claim refuses it
// (*LetterHeldError); the caller's own claim, a lapsed one and Gone's are
// taken over.
func (p DeadLetterClaimParams) Check(d DeadLetter, now time.Time) error {
	if d.ClaimOwner != "" && d.ClaimOwner != p.Owner && d.ClaimOwner != p.Gone && d.ClaimUntil.After(now) {
		return &LetterHeldError{ID: d.ID, Owner: d.ClaimOwner, Until: d.ClaimUntil}
	}
	return nil
}

// LetterHeldError is the refusal of a dead letter that another process is
// retrying: its claim is held by Owner until Until (the store's clock: the
// database's on PostgreSQL).
type LetterHeldError struct {
	ID    int64
	Owner string
	Until time.Time
}

func (e *LetterHeldError) Error() string {
	return fmt.Sprintf("dead letter %d is being retried by %s", e.ID, e.Owner)
}

// DeadLetterWrite stores a dead letter in a transition.
type DeadLetterWrite struct {
	Step    string
	StepKey string
	Index   int
	Item    json.RawMessage
	Error   json.RawMessage
}

// DeadLetterListParams filter a dead letter listing, oldest first.
type DeadLetterListParams struct {
	RunID string // "" for all runs
	// All lists closed letters too; by default only open ones.
	All bool
}

// DeadLetterUpdateParams close a dead letter (Status retried or dropped),
// or record a failed retry of an open one (Status open, Error the new
// error), with Events appended to the letter's run in the same commit.
//
// Owner, when set, is the claim's holder ending its retry: the update is
// refused with ErrLeaseLost when the letter is no longer claimed by it.
// Without Owner (a drop) it is refused with *LetterHeldError while another
// process's claim is live. Either way the claim is released.
type DeadLetterUpdateParams struct {
	ID     int64
	Owner  string
	Status DeadLetterStatus
	Output json.RawMessage
	Error  json.RawMessage
	Events []EventWrite
	Now    time.Time
}

// LetterClaimCheck is the fence of a DeadLetterUpdate of d (both
// backends; now is the store's clock for leases): with an owner, the letter
// must still be claimed by it (else ErrLeaseLost); without one, no other
// process may hold a live claim (else *LetterHeldError).
func LetterClaimCheck(d DeadLetter, owner string, now time.Time) error {
	if owner != "" {
		if d.ClaimOwner != owner {
			return fmt.Errorf("dead letter %d is no longer claimed by %s: %w", d.ID, owner, ErrLeaseLost)
		}
		return nil
	}
	if d.ClaimOwner != "" && d.ClaimUntil.After(now) {
		return &LetterHeldError{ID: d.ID, Owner: d.ClaimOwner, Until: d.ClaimUntil}
	}
	return nil
}

// SlotAcquireParams ask for a slot of a concurrency key for a run. The
// request is queued in (run creation time, run id) order; it is granted
// when fewer than Limit unfinished runs hold the key and no earlier
// unfinished run of the key waits for it. Slots of finished runs count for
// nothing, whichever way the run ended.
type SlotAcquireParams struct {
	Workflow     string
	Key          string
	Limit        int
	RunID        string
	RunCreatedAt time.Time
	Now          time.Time
}

// Slot is the answer to a slot request.
type Slot struct {
	Held bool
	// Queued is true when the request was first queued by this call.
	Queued bool
	// Holders is the number of unfinished runs holding the key.
	Holders int
}

// AlertWrite queues one alert delivery in a transition.
type AlertWrite struct {
	Alert   string // the alert block's name
	Event   string // failed | interrupted | dead_lettered | timed_out
	StepKey string
	Message string
}

// AlertStatus is the state of an alert delivery.
type AlertStatus string

// Alert delivery statuses.
const (
	AlertPending AlertStatus = "pending"
	AlertSent    AlertStatus = "sent"
	AlertFailed  AlertStatus = "failed" // gave up after its retries
)

// AlertDelivery is one queued alert of the outbox.
type AlertDelivery struct {
	ID        int64
	RunID     string
	Alert     string
	Event     string
	StepKey   string
	Message   string
	Status    AlertStatus
	Attempts  int // deliveries tried, including the one in progress
	LastError string
	CreatedAt time.Time
	NextAt    time.Time // when a pending delivery is due
	SentAt    time.Time
}

// AlertClaimParams lease due pending deliveries to an owner.
type AlertClaimParams struct {
	Owner     string
	Now       time.Time
	LeaseFor  time.Duration
	Limit     int
	RootRunID string // "" for all runs
}

// AlertFinishParams record the end of a delivery attempt, fenced by the
// claim's owner: Status sent, failed (no more tries), or pending again at
// NextAt; Events are appended to the alert's run in the same commit.
type AlertFinishParams struct {
	ID        int64
	Owner     string
	Status    AlertStatus
	LastError string
	NextAt    time.Time
	Events    []EventWrite
	Now       time.Time
}

// Resilience is the part of Store that keeps breakers, dead letters,
// concurrency slots and the alert outbox.
type Resilience interface {
	// BreakerAcquire says whether the step key may start an attempt under
	// the breaker: yes while it is closed; no while it is open and cooling
	// down; when the cooldown is over (or a trial's holder is gone) the
	// caller gets the single trial: the breaker becomes half-open, held by
	// the step key, and breaker_half_open is appended to the run. A holder
	// asking again gets its trial again. The breaker as it now is comes
	// back either way.
	BreakerAcquire(ctx context.Context, p BreakerAcquireParams) (Breaker, bool, error)
	// BreakerList returns every breaker that was ever written, by name.
	BreakerList(ctx context.Context) ([]Breaker, error)

	// DeadLetterList lists dead letters oldest first.
	DeadLetterList(ctx context.Context, p DeadLetterListParams) ([]DeadLetter, error)
	// DeadLetterOpenCount counts the open dead letters (the partial index
	// dead_letters_open), for metrics read at every scrape.
	DeadLetterOpenCount(ctx context.Context) (int, error)
	// DeadLetterGet returns one dead letter, or ErrNotFound.
	DeadLetterGet(ctx context.Context, id int64) (DeadLetter, error)
	// DeadLetterClaim leases an open letter to p.Owner for a retry, or
	// renews the owner's lease: ErrNotFound for an unknown id, ErrConflict
	// for a closed letter, *LetterHeldError while another owner's lease is
	// live. A lease that lapsed (its process died) is taken over.
	DeadLetterClaim(ctx context.Context, p DeadLetterClaimParams) (DeadLetter, error)
	// DeadLetterUpdate closes a dead letter or records a failed retry:
	// ErrNotFound for an unknown id, ErrConflict for a closed letter,
	// and the claim's refusals (DeadLetterUpdateParams.Owner).
	DeadLetterUpdate(ctx context.Context, p DeadLetterUpdateParams) (DeadLetter, error)

	// SlotAcquire queues and, when it can, grants a concurrency slot, in
	// one statement. A run's slot is given back when the run ends (the
	// store does it in the run's final commit, and in RunCancel), and the
	// next run queued on the key is made due.
	SlotAcquire(ctx context.Context, p SlotAcquireParams) (Slot, error)

	// AlertClaim leases due pending alert deliveries to the owner and
	// counts the attempt, oldest first.
	AlertClaim(ctx context.Context, p AlertClaimParams) ([]AlertDelivery, error)
	// AlertFinish records a delivery attempt's end; ErrLeaseLost when the
	// owner no longer holds the delivery.
	AlertFinish(ctx context.Context, p AlertFinishParams) error
	// AlertList returns the alert deliveries of a run (all runs for ""),
	// oldest first.
	AlertList(ctx context.Context, runID string) ([]AlertDelivery, error)
	// AlertNextDue returns the earliest time a pending delivery (of a run
	// tree when rootRunID is set) can be claimed; ok is false when none.
	AlertNextDue(ctx context.Context, rootRunID string) (at time.Time, ok bool, err error)
}

// ApplyBreaker computes a breaker's next state from its stored state b
// (the zero Breaker when none is stored) and an attempt's outcome, for the
// backends. event is "breaker_opened", "breaker_closed" or "" when the
// state did not change; woke says whether runs parked on the breaker should
// be made due (it closed, or its trial was given back).
func ApplyBreaker(b Breaker, w BreakerWrite, runID string, now time.Time) (nb Breaker, event string, woke bool) {
	nb = b
	nb.Name = w.Name
	if nb.State == "" {
		nb.State = BreakerClosed
	}
	nb.UpdatedAt = now
	isTrial := b.State == BreakerHalfOpen && b.TrialRunID == runID && b.TrialStepKey == w.StepKey
	clearTrial := func() { nb.TrialRunID, nb.TrialStepKey, nb.TrialUntil = "", "", time.Time{} }
	switch w.Outcome {
	case BreakerSuccess:
		if nb.State != BreakerClosed {
			event, woke = "breaker_closed", true
		}
		nb.State, nb.Failures, nb.OpenUntil = BreakerClosed, 0, time.Time{}
		clearTrial()
	case BreakerFailure:
		nb.Failures++
		if isTrial || (nb.State == BreakerClosed && nb.Failures >= max(w.Threshold, 1)) {
			nb.State, nb.OpenedAt, nb.OpenUntil = BreakerOpen, now, now.Add(w.Cooldown)
			clearTrial()
			event = "breaker_opened"
		}
	case BreakerRelease:
		if isTrial {
			clearTrial()
			woke = true
		}
	}
	return nb, event, woke
}

// AcquireBreaker decides a BreakerAcquire on the stored state b, for the
// backends: whether the attempt may start, the new state, and whether it
// changed (then it must be written; event is "breaker_half_open" when the
// breaker just left open). holderLive says whether the holder of a
// half-open breaker's trial is live, which both backends decide alike: the
// trial's run holds a lease (the worker or apply running the attempt
// heartbeats it), or, for a dlq retry, an open dead letter of the trial's
// step key is claimed. A trial whose holder died so lapses with its lease,
// as the run's attempt does, and not only at TrialUntil.
func AcquireBreaker(b Breaker, p BreakerAcquireParams, holderLive bool) (nb Breaker, ok, changed bool, event string) {
	nb = b
	nb.Name = p.Name
	if nb.State == "" {
		nb.State = BreakerClosed
	}
	take := func() {
		nb.State, nb.TrialRunID, nb.TrialStepKey, nb.TrialUntil = BreakerHalfOpen, p.RunID, p.StepKey, p.Now.Add(p.TrialFor)
		nb.UpdatedAt = p.Now
		ok, changed = true, true
	}
	switch nb.State {
	case BreakerClosed:
		return nb, true, false, ""
	case BreakerOpen:
		if p.Now.Before(nb.OpenUntil) {
			return nb, false, false, ""
		}
		take()
		return nb, ok, changed, "breaker_half_open"
	default: // half-open
		if nb.TrialRunID == p.RunID && nb.TrialStepKey == p.StepKey {
			return nb, true, false, ""
		}
		if nb.TrialRunID == "" || !p.Now.Before(nb.TrialUntil) || !holderLive {
			take()
		}
		return nb, ok, changed, ""
	}
}
