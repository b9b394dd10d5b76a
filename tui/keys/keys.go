// Package keys holds every key binding of flowtui in one place, so a key
// means the same thing on every screen and the help bar is built from the
// same bindings the components match against.
//
// keys must not hold state or render anything beyond the help texts.
package keys

import (
	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is the set of bindings.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Open, Back, Quit, Help                  key.Binding
	Runs, DeadLetters, Breakers, Schedules  key.Binding
	// Pause, Unpause and Trigger act on a schedule.
	Pause, Unpause, Trigger key.Binding

	FilterStatus, FilterWorkflow, Sort key.Binding
	// Search filters the list as you type; Jump opens the : command line.
	Search, Jump key.Binding
	// Focus moves between the run view's step list and log pane; Follow
	// keeps the log's last line in view; NextMatch finds a search again.
	Focus, Follow, NextMatch key.Binding
	// Toggle and All act in the status menu.
	Toggle, All key.Binding

	Cancel, Retry, Signal, Decide, Drop key.Binding

	Yes, No key.Binding
	// Submit sends a typed form; Next moves between its fields.
	Submit, Next key.Binding
	// Old, New and Migrate choose in the version decision.
	Old, New, Migrate key.Binding
}

// Default returns the key map flowtui uses. It is built when a screen asks
// for it, not when any flowrun process starts.
func Default() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),

		Open: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back: key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		Quit: key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help: key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more keys")),

		Runs:        key.NewBinding(key.WithKeys("1"), key.WithHelp("1", "runs")),
		DeadLetters: key.NewBinding(key.WithKeys("2"), key.WithHelp("2", "dead letters")),
		Breakers:    key.NewBinding(key.WithKeys("3"), key.WithHelp("3", "breakers")),
		Schedules:   key.NewBinding(key.WithKeys("4"), key.WithHelp("4", "schedules")),

		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Unpause: key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "unpause")),
		Trigger: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "trigger")),

		FilterStatus:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "status menu")),
		FilterWorkflow: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "workflow filter")),
		Sort:           key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "sort")),
		Search:         key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		Jump:           key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "jump")),
		Toggle:         key.NewBinding(key.WithKeys(" ", "x"), key.WithHelp("space", "toggle")),
		Focus:          key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "steps/log")),
		Follow:         key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "follow")),
		NextMatch:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		All:            key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "all")),

		Cancel: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cancel")),
		Retry:  key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry")),
		Signal: key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "signal")),
		Decide: key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "decide")),
		Drop:   key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "drop")),

		Yes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "no")),

		Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Next:   key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "next field")),

		Old:     key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "old")),
		New:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "new")),
		Migrate: key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "migrate")),
	}
}

// Help is a list of bindings shown in the help bar; it implements
// help.KeyMap with the short list first and all of it in the full view.
type Help struct {
	Short []key.Binding
	More  []key.Binding
}

// ShortHelp returns the bindings of the one-line help bar.
func (h Help) ShortHelp() []key.Binding { return h.Short }

// FullHelp returns every binding once (a binding of More that the short
// list shows already is left out), in columns of four.
func (h Help) FullHelp() [][]key.Binding {
	var all []key.Binding
	seen := map[string]bool{}
	for _, b := range append(append([]key.Binding{}, h.Short...), h.More...) {
		if k := b.Help().Key; !seen[k] {
			seen[k] = true
			all = append(all, b)
		}
	}
	var cols [][]key.Binding
	for len(all) > 0 {
		n := min(4, len(all))
		cols = append(cols, all[:n])
		all = all[n:]
	}
	return cols
}
