// Package feed is flowtui's window on the store: it loads the runs once,
// then follows the store incrementally through the events appended since the
// last event id it saw, refreshing only the runs those events touch. It also
// holds the small interfaces through which the interface acts (cancel,
// retry, signal) and through which dead letters, breakers and version
// decisions plug in as their store APIs arrive.
//
// feed must not import bubbletea or render anything, and must not write to
// the store except through the Actions, DeadLetters and Decider it is given.
package feed

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Actions are the changes flowtui can ask for. EngineActions implements them
// over interp's public API.
type Actions interface {
	Cancel(ctx context.Context, runID string) error
	Retry(ctx context.Context, runID string) error
	Signal(ctx context.Context, runID, name string, payload json.RawMessage) error
}

// EngineActions carries Actions out through an interp.Engine.
type EngineActions struct{ Engine *interp.Engine }

// Cancel cancels a run and its descendants.
func (a EngineActions) Cancel(ctx context.Context, runID string) error {
	_, err := a.Engine.Cancel(ctx, runID)
	return err
}

// Retry redrives a failed or canceled run from its failed steps.
func (a EngineActions) Retry(ctx context.Context, runID string) error {
	_, err := a.Engine.Retry(ctx, runID, "")
	return err
}

// Signal delivers a named signal with a JSON payload.
func (a EngineActions) Signal(ctx context.Context, runID, name string, payload json.RawMessage) error {
	_, err := a.Engine.Signal(ctx, runID, name, payload)
	return err
}

// DeadLetter is a foreach item that failed after its retries under
// on_failure = "dead_letter" (the fields of `flowrun dlq list --json`).
type DeadLetter struct {
	ID        int64
	RunID     string
	Step      string
	Index     int
	Item      json.RawMessage
	Error     json.RawMessage
	CreatedAt time.Time
}

// DeadLetters lists and works dead letters. The store keeps none yet; the
// dead-letter issue provides an implementation, and until then flowtui says
// that dead letters are not available.
type DeadLetters interface {
	DeadLetterList(ctx context.Context) ([]DeadLetter, error)
	DeadLetterRetry(ctx context.Context, id int64) error
	DeadLetterDrop(ctx context.Context, id int64) error
}

// Breaker is the shared state of one circuit breaker.
type Breaker struct {
	Name string
	// State is "closed", "open" or "half-open".
	State    string
	Failures int
	OpenedAt time.Time
	// CooldownUntil is when an open breaker lets a trial through.
	CooldownUntil time.Time
}

// Breakers lists breaker states. The store keeps none yet; the breaker
// issue provides an implementation.
type Breakers interface {
	BreakerList(ctx context.Context) ([]Breaker, error)
}

// Choice is a version decision for a blocked run.
type Choice string

// The choices of the versioning brief.
const (
	ChoiceOld     Choice = "old"     // resume on the bound graph
	ChoiceNew     Choice = "new"     // cancel, start a fresh run of the new version
	ChoiceMigrate Choice = "migrate" // move to the new graph, keeping unchanged completed steps
)

// Decider carries out a version decision on a blocked run, as it was
// shown bound to version from: a run decided by someone else since (or
// at the same moment) is refused with a sentence naming that decision.
// Without a Decider, flowtui shows the decision screen (diff, kept and
// re-run steps) but says that deciding is not available.
type Decider interface {
	Decide(ctx context.Context, runID, from string, choice Choice) error
}

// ErrUnavailable is returned for a feature whose store API does not exist
// in this build.
var ErrUnavailable = errors.New("not available in this build of flowrun")

// Source is everything flowtui reads from and acts through. Only Store is
// required; a nil Actions makes the interface read-only, and nil
// DeadLetters, Breakers or Decider make those views say they are not
// available.
type Source struct {
	Store       store.Store
	Actions     Actions
	DeadLetters DeadLetters
	Breakers    Breakers
	Decider     Decider

	graphs graphCache
}
