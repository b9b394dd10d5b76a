// Package root is flowtui's root model: it owns which screen shows, routes
// messages to the components, draws the title, status and help bars, and
// keeps the interface live by polling the feed every feed.PollInterval (or,
// on a store that tells of commits, on each, at most every
// feed.MinPollGap) for the events appended since the last one it saw.
//
// root must not render a component's content or hold its state; it must not
// write to the store except through the engine's actions (cancel, retry,
// signal, decide, dead-letter retry and drop), each after a confirm.
package root

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/breakers"
	"github.com/flowrun/flowrun/tui/confirm"
	"github.com/flowrun/flowrun/tui/deadletters"
	"github.com/flowrun/flowrun/tui/decide"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/jump"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/run"
	"github.com/flowrun/flowrun/tui/runs"
	"github.com/flowrun/flowrun/tui/schedules"
	"github.com/flowrun/flowrun/tui/signal"
	"github.com/flowrun/flowrun/tui/step"
)

type screen int

const (
	screenRuns screen = iota
	screenRun
	screenStep
	screenDeadLetters
	screenBreakers
	screenSchedules
)

// Model is the root of flowtui.
type Model struct {
	bg    context.Context // store calls run under it; canceled when the program ends
	src   *feed.Source
	disp  *display.Display
	keys  keys.KeyMap
	title string
	help  help.Model

	screen screen
	runs   runs.Model
	run    run.Model
	step   step.Model
	dl     deadletters.Model
	br     breakers.Model
	sc     schedules.Model

	// At most one overlay is open; it gets the keys.
	confirm *confirm.Model
	signal  *signal.Model
	decide  *decide.Model
	// jump is the : command line, drawn in the status bar's place.
	jump *jump.Model

	// out reads the open run's live output; nil when no run is open.
	out *outputReader

	follow pollState
	status statusLine
}

// pollState is where the root is in following the store.
type pollState struct {
	cursor  int64 // the last event id applied
	loaded  bool
	polling bool
	// ticks is false in tests that drive polls by hand.
	ticks bool
}

// statusLine is what the status bar says.
type statusLine struct {
	msg      string // the last message
	isErr    bool
	at       time.Time // when msg was set, on the display's clock
	storeErr error     // the last poll's error, shown until a poll succeeds
}

// Options configure New.
type Options struct {
	// Title is shown in the title bar (the database path).
	Title string
	// NoTicks stops the poll timer, for tests that send Poll messages.
	NoTicks bool
}

// New returns the root model over src. bg bounds every store call; cancel
// it to stop the poll timer when the program ends.
func New(bg context.Context, src *feed.Source, disp *display.Display, opts Options) Model {
	km := keys.Default()
	h := help.New()
	h.Styles.ShortKey = disp.Styles.Key
	h.Styles.FullKey = disp.Styles.Key
	h.Styles.ShortDesc = disp.Styles.Faint
	h.Styles.FullDesc = disp.Styles.Faint
	h.Styles.ShortSeparator = disp.Styles.Faint
	h.Styles.FullSeparator = disp.Styles.Faint
	h.Styles.Ellipsis = disp.Styles.Faint
	m := Model{
		bg: bg, src: src, disp: disp, keys: km, title: opts.Title, help: h, follow: pollState{ticks: !opts.NoTicks},
		runs: runs.New(disp, km),
		run:  run.New(disp, km),
		step: step.New(disp, km),
		dl:   deadletters.New(disp, km),
		br:   breakers.New(disp),
		sc:   schedules.New(disp, km),
	}
	m.layout()
	return m
}

// Messages of the root's own commands.
type (
	loadedMsg struct {
		snap feed.Snapshot
		err  error
	}
	// PollMsg asks for a poll now (the timer sends it; tests send it).
	PollMsg   struct{}
	polledMsg struct {
		ch  feed.Changes
		w   feed.Watch
		err error
	}
	detailMsg struct {
		d   *feed.RunDetail
		err error
	}
	attemptsMsg struct {
		runID, key string
		as         []store.Attempt
		err        error
	}
	actionDoneMsg struct {
		done string
		err  error
	}
	deadLettersMsg struct {
		items []store.DeadLetter
		err   error
	}
	breakersMsg struct {
		items []store.Breaker
		err   error
	}
	planMsg struct {
		p   *interp.DecisionPlan
		err error
		// refused says why the run takes no decision, as the engine
		// (interp.DecisionOffer.Reason) says it.
		refused string
	}
	// resolvedMsg carries the run a :run reference names.
	resolvedMsg struct {
		ref string
		run store.Run
		err error
	}
	// signalTargetMsg carries the run a signal from the list goes to,
	// read when s was pressed.
	signalTargetMsg struct {
		runID string
		d     *feed.RunDetail
		err   error
	}
)

// Init loads the runs and starts the poll timer.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.load(), m.tick())
}

func (m Model) load() tea.Cmd {
	bg, src := m.bg, m.src
	return func() tea.Msg {
		snap, err := src.Load(bg)
		return loadedMsg{snap, err}
	}
}

// tick waits one poll interval on the display's clock, or until bg ends. On
// a store that tells of commits it polls sooner, when one comes, but never
// within feed.MinPollGap of the last poll: the screen follows a busy store
// at most 20 times a second (interp.WaitForChange).
func (m Model) tick() tea.Cmd {
	if !m.follow.ticks {
		return nil
	}
	return waitPoll(m.bg, m.disp.Clock, m.src, m.follow.cursor)
}

// waitPoll returns the command of tick.
func waitPoll(bg context.Context, clk clock.Clock, src *feed.Source, cursor int64) tea.Cmd {
	return func() tea.Msg {
		if src.Wait(bg, clk, cursor) != nil {
			return nil
		}
		return PollMsg{}
	}
}

// watch is what the open screens need refreshed.
func (m Model) watch() feed.Watch {
	var w feed.Watch
	switch m.screen {
	case screenRun:
		w.RunID = m.run.RunID()
	case screenStep:
		w.RunID, w.StepKey = m.step.Key()
	}
	return w
}

func (m Model) poll() tea.Cmd {
	bg, src, cur, w := m.bg, m.src, m.follow.cursor, m.watch()
	return func() tea.Msg {
		ch, err := src.Poll(bg, cur, w)
		return polledMsg{ch, w, err}
	}
}

func (m Model) openRun(id string) tea.Cmd {
	bg, src := m.bg, m.src
	return func() tea.Msg {
		d, err := src.Detail(bg, id)
		return detailMsg{d, err}
	}
}

func (m Model) loadAttempts(runID, key string) tea.Cmd {
	bg, door := m.bg, m.src.Door
	return func() tea.Msg {
		as, err := door.AttemptList(bg, runID, key)
		return attemptsMsg{runID, key, as, err}
	}
}

// loadDeadLetters reads the open dead letters, oldest first.
func (m Model) loadDeadLetters() tea.Cmd {
	bg, door := m.bg, m.src.Door
	return func() tea.Msg {
		items, err := door.DeadLetterList(bg, false)
		return deadLettersMsg{items, err}
	}
}

// loadBreakers reads every breaker's shared state.
func (m Model) loadBreakers() tea.Cmd {
	bg, door := m.bg, m.src.Door
	return func() tea.Msg {
		items, err := door.BreakerList(bg)
		return breakersMsg{items, err}
	}
}

// outputReader follows one run's live output. Its follower is used by one
// command at a time: busy is set when a read is sent and cleared when its
// message comes back, both in Update.
type outputReader struct {
	runID string
	f     *interp.OutputFollower
	busy  bool
}

// outputMsg carries the output lines a read found.
type outputMsg struct {
	r     *outputReader
	lines []interp.OutputLine
	err   error
}

// followOutput starts reading a run's live output from its beginning.
func (m *Model) followOutput(runID string) tea.Cmd {
	m.out = &outputReader{runID: runID, f: interp.NewOutputFollower(m.src.Door, runID, nil)}
	return m.readOutput()
}

// readOutput reads the output stored since the last read, unless a read
// is under way.
func (m Model) readOutput() tea.Cmd {
	r := m.out
	if r == nil || r.busy {
		return nil
	}
	r.busy = true
	bg := m.bg
	return func() tea.Msg {
		lines, err := r.f.Next(bg)
		return outputMsg{r, lines, err}
	}
}

// loadSchedules reads every schedule and the status of its last run.
func (m Model) loadSchedules() tea.Cmd {
	return schedules.Load(m.bg, m.src.Door)
}

// openSchedules shows the schedules tab.
func (m Model) openSchedules() (tea.Model, tea.Cmd) {
	m.screen = screenSchedules
	return m, m.loadSchedules()
}

// actionTimeout bounds one action, so a locked database cannot hang the
// interface.
const actionTimeout = 15 * time.Second

// act runs an action in the background and reports how it went.
func (m Model) act(done string, f func(ctx context.Context) error) tea.Cmd {
	bg := m.bg
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(bg, actionTimeout)
		defer cancel()
		return actionDoneMsg{done: done, err: f(ctx)}
	}
}

// actOn is act for an action that leaves a run to go on: f returns its
// id ("" when nothing is left to run). flowtui runs no workflow itself,
// so when nothing will run it, the message says so and what will
// (idleNote).
func (m Model) actOn(done string, f func(ctx context.Context) (string, error)) tea.Cmd {
	bg, src, clk := m.bg, m.src, m.disp.Clock
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(bg, actionTimeout)
		defer cancel()
		id, err := f(ctx)
		if err == nil && id != "" {
			done += idleNote(ctx, src, id, clk.Now())
		}
		return actionDoneMsg{done: done, err: err}
	}
}

// idleNote says that nothing will run run id, when that is so, and what
// would: locally, when no process holds it (a foreground apply or resume,
// a worker) and no live worker is registered; through a server, when the
// server has no live worker. "" otherwise, or when that cannot be read.
func idleNote(ctx context.Context, src *feed.Source, id string, now time.Time) string {
	for at := id; src.Store != nil && at != ""; {
		// The run, or the root of its tree, which its holder drives.
		r, err := src.Store.RunGet(ctx, at)
		if err != nil || (r.Lease.Owner != "" && r.LeaseExpiresAt.After(now)) {
			return ""
		}
		if r.RootRunID == r.ID {
			break
		}
		at = r.RootRunID
	}
	if n, err := src.Door.LiveWorkers(ctx); err != nil || n > 0 {
		return ""
	}
	if src.Store == nil {
		return " The server has no live worker: nothing runs it until one starts."
	}
	return " No live worker runs it: continue it with flowrun resume " + id + "."
}

// layout hands the body area to every component.
func (m *Model) layout() {
	w, h := m.disp.Width, m.bodyHeight()
	m.runs.SetSize(w, h)
	m.run.SetSize(w, h)
	m.step.SetSize(w, h)
	m.dl.SetSize(w, h)
	m.br.SetSize(w, h)
	m.sc.SetSize(w, h)
	if m.decide != nil {
		m.decide.SetHeight(h)
	}
}

// bodyHeight is the screen less the title, status and help bars.
func (m Model) bodyHeight() int {
	return max(1, m.disp.Height-1-m.statusHeight()-m.helpHeight())
}
