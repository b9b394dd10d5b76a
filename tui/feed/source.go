// Package feed is flowtui's window on a flowrun database, read through the
// engine: it loads the runs once, then follows the store incrementally
// through the events appended since the last event id it saw, refreshing
// only the runs those events touch. A run's graph comes from the engine's
// graph cache (interp.Engine.Graph), the one its runs use: feed keeps no
// graphs of its own.
//
// feed must not import bubbletea or render anything, and must not write to
// the store: the root carries actions (cancel, retry, signal, decisions,
// dead letters) out through Source.Engine, after a confirm.
package feed

import (
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// Source is what flowtui reads from and acts through.
type Source struct {
	// Engine reads the store, hands out stored graphs from its cache and
	// carries actions out; the dead letters, breakers and version plans
	// flowtui shows are its own types.
	Engine *interp.Engine
	// By names who acts, for the version_decided event of a decision made
	// in flowtui: "tui", or "tui (user ann)".
	By string
}

// store is the engine's store, read for the runs, steps and events.
func (s *Source) store() store.Store { return s.Engine.Store() }
