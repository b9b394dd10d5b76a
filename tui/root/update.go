package root

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/confirm"
	"github.com/flowrun/flowrun/tui/decide"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/jump"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/run"
	"github.com/flowrun/flowrun/tui/runs"
	"github.com/flowrun/flowrun/tui/schedules"
	"github.com/flowrun/flowrun/tui/signal"
)

// The actions a confirm dialog can carry.
type (
	cancelAction  struct{ runID string }
	retryAction   struct{ runID string }
	signalAction  struct{ sub signal.SubmitMsg }
	decideAction  struct{ choice decide.ChooseMsg }
	dlRetryAction struct{ id int64 }
	dlDropAction  struct{ id int64 }
	pauseAction   struct {
		workflow, name string
		paused         bool
	}
	triggerAction struct{ workflow, name string }
)

// Update routes a message: the root's own results first, then keys to the
// open overlay, the global bindings, and finally the current screen.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	before := m.bodyHeight()
	next, cmd := m.update(msg)
	if r, ok := next.(Model); ok && r.bodyHeight() != before {
		r.layout() // the status or help bar changed height
		return r, cmd
	}
	return next, cmd
}

func (m Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.disp.Width, m.disp.Height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.layout()
		return m, nil
	case loadedMsg:
		if msg.err != nil {
			m.status.storeErr = msg.err
			return m, nil
		}
		m.follow.loaded, m.status.storeErr = true, nil
		m.follow.cursor = msg.snap.Cursor
		m.runs.SetRuns(msg.snap.Runs)
		return m, nil
	case PollMsg:
		m.expireNotice()
		cmds := []tea.Cmd{m.tick()}
		switch {
		case !m.follow.loaded:
			cmds = append(cmds, m.load())
		case !m.follow.polling:
			m.follow.polling = true
			cmds = append(cmds, m.poll())
		}
		if m.screen == screenRun || m.screen == screenStep {
			cmds = append(cmds, m.readOutput())
		}
		return m, tea.Batch(cmds...)
	case polledMsg:
		return m.applyPoll(msg)
	case detailMsg:
		if msg.err != nil {
			m.setErrText(fmt.Sprintf("Cannot open the run: %v", msg.err))
			if m.screen == screenRun && m.run.Detail() == nil {
				m.screen = screenRuns
			}
			return m, nil
		}
		m.run.SetDetail(msg.d)
		m.runs.Apply([]feed.RunRow{msg.d.Row()})
		return m, nil
	case attemptsMsg:
		if r, k := m.step.Key(); r == msg.runID && k == msg.key {
			if msg.err != nil {
				m.setErrText(fmt.Sprintf("Cannot read the attempts of step %s: %v", msg.key, msg.err))
			} else {
				m.step.SetAttempts(msg.as)
			}
		}
		return m, nil
	case actionDoneMsg:
		if msg.err != nil {
			m.setErr(msg.err)
		} else {
			m.setInfo(msg.done)
		}
		return m, nil
	case deadLettersMsg:
		m.dl.Set(msg.items, msg.err)
		return m, nil
	case schedules.LoadedMsg:
		m.sc.Set(msg)
		return m, nil
	case breakersMsg:
		m.br.Set(msg.items, msg.err)
		return m, nil
	case planMsg:
		if msg.refused != "" {
			m.setErrText(msg.refused)
			return m, nil
		}
		if msg.err != nil {
			m.setErrText(fmt.Sprintf("Cannot show the version decision: %v", msg.err))
			return m, nil
		}
		d := decide.New(m.disp, m.keys, msg.p)
		d.SetHeight(m.bodyHeight())
		m.decide = &d
		return m, nil

	case runs.OpenMsg:
		m.screen = screenRun
		m.run.Open()
		return m, tea.Batch(m.openRun(msg.RunID), m.followOutput(msg.RunID))
	case outputMsg:
		msg.r.busy = false
		if msg.r != m.out {
			return m, nil // a run no longer open
		}
		if msg.err != nil {
			m.setErrText(fmt.Sprintf("Cannot read the output of run %s: %v", msg.r.runID, msg.err))
			return m, nil
		}
		m.run.AddOutput(msg.lines)
		return m, nil
	case run.OpenStepMsg:
		m.screen = screenStep
		m.step.Open(msg.RunID, msg.StepKey)
		m.step.SetDetail(m.run.Detail())
		return m, m.loadAttempts(msg.RunID, msg.StepKey)
	case confirm.DoneMsg:
		m.confirm = nil
		if !msg.Confirmed {
			m.setInfo("Nothing was changed.")
			return m, nil
		}
		return m, m.carryOut(msg.Action)
	case signal.CancelMsg:
		m.signal = nil
		return m, nil
	case signal.SubmitMsg:
		m.signal = nil
		body := fmt.Sprintf("Signal %q goes to run %s; the step waiting for it goes on. Its payload, as parsed:\n%s", msg.Name, msg.RunID, prettyPayload(msg.Payload))
		return m.ask(fmt.Sprintf("Send signal %s?", msg.Name), body, signalAction{msg}), nil
	case signalTargetMsg:
		return m.signalReady(msg)
	case decide.CloseMsg:
		m.decide = nil
		return m, nil
	case decide.ChooseMsg:
		plan := &interp.DecisionPlan{Run: store.Run{ID: msg.RunID}, From: msg.From}
		if m.decide != nil {
			plan = m.decide.Plan()
		}
		m.decide = nil
		return m.ask(fmt.Sprintf("Decide %q for run %s?", msg.Choice, msg.RunID), decide.Describe(msg.Choice, plan), decideAction{msg}), nil

	case jump.CloseMsg:
		m.jump = nil
		return m, nil
	case jump.GoMsg:
		m.jump = nil
		return m.goTo(msg)
	case resolvedMsg:
		if msg.err != nil {
			m.setErrText(fmt.Sprintf(":run %s: %v", msg.ref, msg.err))
			return m, nil
		}
		m.runs.Select(msg.run.ID)
		m.screen = screenRun
		m.run.Open()
		return m, tea.Batch(m.openRun(msg.run.ID), m.followOutput(msg.run.ID))

	case tea.KeyMsg:
		return m.key(msg)
	case tea.MouseMsg:
		if m.confirm != nil || m.signal != nil || m.decide != nil || m.jump != nil {
			return m, nil
		}
		msg.Y-- // the title bar
		return m.toScreen(msg)
	}
	return m, nil
}

// applyPoll folds a poll's changes into the screens.
func (m Model) applyPoll(msg polledMsg) (tea.Model, tea.Cmd) {
	m.follow.polling = false
	if msg.err != nil {
		m.status.storeErr = msg.err
		return m, nil
	}
	m.status.storeErr = nil
	ch := msg.ch
	m.follow.cursor = ch.Cursor
	m.runs.Apply(ch.Runs)
	var cmds []tea.Cmd
	if ch.Open != nil && ch.Open.Run.ID == m.run.RunID() && m.run.Detail() != nil {
		old := m.run.Detail()
		ch.Open.Events = old.Events
		m.run.SetDetail(ch.Open)
	}
	m.run.AddEvents(ch.Events)
	if m.screen == screenStep {
		m.step.SetDetail(m.run.Detail())
		if r, k := m.step.Key(); ch.Attempts != nil && msg.w.RunID == r && msg.w.StepKey == k {
			m.step.SetAttempts(ch.Attempts)
		}
	}
	for _, e := range ch.Events {
		if e.Kind == "dead_lettered" && m.screen == screenDeadLetters {
			cmds = append(cmds, m.loadDeadLetters())
			break
		}
		if strings.Contains(e.Kind, "breaker") && m.screen == screenBreakers {
			cmds = append(cmds, m.loadBreakers())
			break
		}
	}
	if ch.More {
		m.follow.polling = true
		cmds = append(cmds, m.poll())
	}
	return m, tea.Batch(cmds...)
}

// key handles a key press.
func (m Model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if k.Type == tea.KeyCtrlC {
		return m, tea.Quit
	}
	switch {
	case m.confirm != nil:
		c, cmd := m.confirm.Update(k)
		m.confirm = &c
		return m, cmd
	case m.signal != nil:
		s, cmd := m.signal.Update(k)
		m.signal = &s
		return m, cmd
	case m.decide != nil:
		d, cmd := m.decide.Update(k)
		m.decide = &d
		return m, cmd
	case m.jump != nil:
		j, cmd := m.jump.Update(k)
		m.jump = &j
		return m, cmd
	case m.screen == screenRuns && m.runs.Capturing():
		return m.toScreen(k) // the search line or the status menu
	case m.screen == screenRun && (m.run.Capturing() || m.run.FocusLog() && !key.Matches(k, m.keys.Back) && !key.Matches(k, m.keys.Quit) && !isAction(m.keys, k)):
		return m.toScreen(k) // the log pane's search line, or the log pane
	}
	switch {
	case key.Matches(k, m.keys.Jump):
		j := jump.New(m.disp)
		m.jump = &j
		return m, nil
	case key.Matches(k, m.keys.Quit):
		return m, tea.Quit
	case key.Matches(k, m.keys.Help):
		m.help.ShowAll = !m.help.ShowAll
		m.layout()
		return m, nil
	case key.Matches(k, m.keys.Back):
		switch m.screen {
		case screenStep:
			m.screen = screenRun
		case screenRun, screenDeadLetters, screenBreakers, screenSchedules:
			m.screen = screenRuns
		}
		return m, nil
	case key.Matches(k, m.keys.Runs):
		m.screen = screenRuns
		return m, nil
	case key.Matches(k, m.keys.DeadLetters):
		m.screen = screenDeadLetters
		return m, m.loadDeadLetters()
	case key.Matches(k, m.keys.Breakers):
		m.screen = screenBreakers
		return m, m.loadBreakers()
	case key.Matches(k, m.keys.Schedules):
		return m.openSchedules()
	}
	if m.screen == screenSchedules {
		if s, ok := m.sc.Selected(); ok {
			ref := s.Workflow + "/" + s.Name
			switch {
			case key.Matches(k, m.keys.Pause):
				return m.ask("Pause schedule "+ref+"?", "No slot fires while it is paused; a trigger still works.", pauseAction{s.Workflow, s.Name, true}), nil
			case key.Matches(k, m.keys.Unpause):
				return m.ask("Unpause schedule "+ref+"?", "The slots missed while it was paused do not fire; the next slot does.", pauseAction{s.Workflow, s.Name, false}), nil
			case key.Matches(k, m.keys.Trigger):
				return m.ask("Trigger schedule "+ref+" now?", "A run starts now as its slots start them, under its overlap policy ("+s.Overlap+").", triggerAction{s.Workflow, s.Name}), nil
			}
		}
	}
	if m.screen == screenDeadLetters {
		if d, ok := m.dl.Selected(); ok {
			switch {
			case key.Matches(k, m.keys.Retry):
				return m.ask("Retry this dead letter?", fmt.Sprintf("Item %d of step %s of run %s is run again.", d.Index, d.Step, d.RunID), dlRetryAction{d.ID}), nil
			case key.Matches(k, m.keys.Drop):
				return m.ask("Drop this dead letter?", fmt.Sprintf("Item %d of step %s of run %s is deleted for good.", d.Index, d.Step, d.RunID), dlDropAction{d.ID}), nil
			}
		}
	}
	if m.screen == screenRuns || m.screen == screenRun || m.screen == screenStep {
		if mm, cmd, ok := m.runAction(k); ok {
			return mm, cmd
		}
	}
	return m.toScreen(k)
}

// goTo carries out a : command.
func (m Model) goTo(g jump.GoMsg) (tea.Model, tea.Cmd) {
	switch g.Verb {
	case jump.Run:
		bg, door := m.bg, m.src.Door
		return m, func() tea.Msg {
			v, err := door.Run(bg, g.Arg)
			if err != nil {
				return resolvedMsg{ref: g.Arg, err: err}
			}
			r, err := door.RunGet(bg, v.RunID)
			return resolvedMsg{ref: g.Arg, run: r, err: err}
		}
	case jump.Workflow:
		names := m.runs.Workflows()
		if !slices.Contains(names, g.Arg) {
			m.setErrText(fmt.Sprintf(":workflow %s: no run of workflow %q is listed; workflows with runs: %s", g.Arg, g.Arg, strings.Join(names, ", ")))
			return m, nil
		}
		m.screen = screenRuns
		m.runs.SetWorkflow(g.Arg)
		return m, nil
	case jump.DLQ:
		m.screen = screenDeadLetters
		return m, m.loadDeadLetters()
	case jump.Schedules:
		return m.openSchedules()
	}
	return m, nil
}

// toScreen hands a message to the current screen.
func (m Model) toScreen(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch m.screen {
	case screenRuns:
		m.runs, cmd = m.runs.Update(msg)
	case screenRun:
		m.run, cmd = m.run.Update(msg)
	case screenStep:
		m.step, cmd = m.step.Update(msg)
	case screenDeadLetters:
		m.dl, cmd = m.dl.Update(msg)
	case screenSchedules:
		m.sc, cmd = m.sc.Update(msg)
	}
	return m, cmd
}

// target is the run an action applies to: the selected row of the list,
// or the open run.
func (m Model) target() (id string, status store.RunStatus, ok bool) {
	if m.screen == screenRuns {
		r, ok := m.runs.Selected()
		return r.ID, r.Status, ok
	}
	d := m.run.Detail()
	if d == nil {
		return "", "", false
	}
	return d.Run.ID, d.Run.Status, true
}

// openSignal opens the signal prompt for a run; waiting lists the signals
// its wait steps take.
func (m *Model) openSignal(runID string, waiting []string, g *graph.Graph) {
	s := signal.New(m.disp, m.keys, runID, waiting, g)
	m.signal = &s
}

// signalReady opens the signal prompt for a run of the list, once read.
func (m Model) signalReady(msg signalTargetMsg) (tea.Model, tea.Cmd) {
	if msg.err != nil {
		m.setErrText(fmt.Sprintf("Cannot read run %s to signal it: %v", msg.runID, msg.err))
		return m, nil
	}
	if m.confirm != nil || m.signal != nil || m.decide != nil {
		return m, nil // another dialog opened meanwhile; it keeps the keys
	}
	m.runs.Apply([]feed.RunRow{msg.d.Row()})
	if r := msg.d.Run; r.Status.Terminal() {
		m.setErrText(fmt.Sprintf("Run %s is already %s and takes no more signals.", r.ID, r.Status))
		return m, nil
	}
	m.openSignal(msg.d.Run.ID, msg.d.WaitingSignals(), msg.d.Graph)
	return m, nil
}

// isAction reports whether k acts on a run.
func isAction(km keys.KeyMap, k tea.KeyMsg) bool {
	return key.Matches(k, km.Cancel) || key.Matches(k, km.Retry) || key.Matches(k, km.Signal) || key.Matches(k, km.Decide)
}

// runAction handles the keys that act on a run.
func (m Model) runAction(k tea.KeyMsg) (Model, tea.Cmd, bool) {
	if !isAction(m.keys, k) {
		return m, nil, false
	}
	id, status, ok := m.target()
	if !ok {
		m.setErrText("No run is selected.")
		return m, nil, true
	}
	switch {
	case key.Matches(k, m.keys.Cancel):
		if status.Terminal() {
			m.setErrText(fmt.Sprintf("Run %s is already %s; there is nothing to cancel.", id, status))
			return m, nil, true
		}
		return m.ask("Cancel run "+id+"?", "The run and its child runs end canceled; a step that is running is stopped. This cannot be undone.", cancelAction{id}), nil, true
	case key.Matches(k, m.keys.Retry):
		if status != store.RunFailed && status != store.RunCanceled {
			m.setErrText(fmt.Sprintf("Run %s is %s; only a failed or canceled run can be retried.", id, status))
			return m, nil, true
		}
		return m.ask("Retry run "+id+"?", "Completed steps are kept; the failed and canceled steps and what follows them run again.", retryAction{id}), nil, true
	case key.Matches(k, m.keys.Signal):
		if status.Terminal() {
			m.setErrText(fmt.Sprintf("Run %s is already %s and takes no more signals.", id, status))
			return m, nil, true
		}
		if m.screen == screenRuns {
			// A row of the list does not know what its run waits for
			// (run summaries carry no wait reason): read the run, then
			// open the prompt (signalTargetMsg).
			bg, src := m.bg, m.src
			return m, func() tea.Msg {
				d, err := src.Current(bg, id)
				return signalTargetMsg{runID: id, d: d, err: err}
			}, true
		}
		var g *graph.Graph
		if d := m.run.Detail(); d != nil {
			g = d.Graph
		}
		m.openSignal(id, m.run.WaitingSignals(), g)
		return m, nil, true
	case key.Matches(k, m.keys.Decide):
		// Where a decision can be taken is the engine's rule
		// (interp.Engine.OfferDecision, versioning §4–§6): a blocked run,
		// or a parked or waiting one bound to an older MAJOR.
		bg, door := m.bg, m.src.Door
		return m, func() tea.Msg {
			o, err := door.Offer(bg, id)
			if err != nil {
				return planMsg{err: err}
			}
			if !o.Offer {
				run, err := door.RunGet(bg, id)
				if err != nil {
					return planMsg{err: err}
				}
				if run.Status.Terminal() {
					// As the door's Decide words it (resume --choose).
					return planMsg{refused: fmt.Sprintf("Run %s already ended (%s); it takes no version decision.", run.ID, run.Status)}
				}
				return planMsg{refused: fmt.Sprintf("Run %s is %s and takes no version decision: %s.", run.ID, run.Status, o.Reason)}
			}
			p, err := door.PlanDecision(bg, id)
			return planMsg{p: p, err: err}
		}, true
	}
	return m, nil, false
}

// ask opens a confirm dialog.
func (m Model) ask(title, body string, action any) Model {
	c := confirm.New(m.disp, m.keys, title, body, action)
	m.confirm = &c
	return m
}

// carryOut runs a confirmed action through the engine.
func (m Model) carryOut(action any) tea.Cmd {
	door, by := m.src.Door, m.src.By
	switch a := action.(type) {
	case cancelAction:
		return m.actOn("Cancel of run "+a.runID+" requested.", func(ctx context.Context) (string, error) {
			v, err := door.Cancel(ctx, a.runID)
			if err != nil || v.Status == store.RunCanceled || v.Status == store.RunRunning {
				return "", err
			}
			return v.RunID, nil // it runs its compensations first
		})
	case retryAction:
		return m.actOn("Run "+a.runID+" will be retried.", func(ctx context.Context) (string, error) {
			v, err := door.Retry(ctx, a.runID, "")
			if err != nil {
				return "", err
			}
			return v.RunID, nil
		})
	case signalAction:
		s := a.sub
		return m.actOn(fmt.Sprintf("Signal %s sent to run %s.", s.Name, s.RunID), func(ctx context.Context) (string, error) {
			v, err := door.Signal(ctx, s.RunID, s.Name, json.RawMessage(s.Payload))
			if err != nil || v.Status.Terminal() {
				return "", err
			}
			return v.RunID, nil
		})
	case decideAction:
		c := a.choice
		return m.actOn(fmt.Sprintf("Run %s: decided %s.", c.RunID, c.Choice), func(ctx context.Context) (string, error) {
			// A parked run the decision was offered on is blocked first,
			// as a worker's claim would block it (api.Decider).
			d, err := door.Decide(ctx, c.RunID, c.Choice, c.From, by)
			if err != nil {
				return "", refusal(err)
			}
			return d.Run.RunID, nil // for new, the run that replaced it
		})
	case pauseAction:
		done := fmt.Sprintf("Schedule %s/%s paused.", a.workflow, a.name)
		if !a.paused {
			done = fmt.Sprintf("Schedule %s/%s unpaused.", a.workflow, a.name)
		}
		return tea.Sequence(m.act(done, func(ctx context.Context) error {
			_, err := door.PauseSchedule(ctx, a.workflow, a.name, a.paused)
			return err
		}), m.loadSchedules())
	case triggerAction:
		return tea.Sequence(func() tea.Msg {
			ctx, cancel := context.WithTimeout(m.bg, actionTimeout)
			defer cancel()
			res, err := door.TriggerSchedule(ctx, a.workflow, a.name)
			switch {
			case err != nil:
				return actionDoneMsg{err: fmt.Errorf("trigger schedule %s/%s: %w", a.workflow, a.name, err)}
			case res.Fire.RunID == nil && strings.HasPrefix(res.Fire.Reason, "key:"):
				return actionDoneMsg{err: fmt.Errorf("schedule %s/%s: trigger skipped (%s)", a.workflow, a.name, res.Fire.Reason)}
			case res.Fire.RunID == nil:
				return actionDoneMsg{err: fmt.Errorf("schedule %s/%s: trigger skipped (%s): run %s of the schedule is unfinished", a.workflow, a.name, res.Fire.Reason, strings.Join(res.Unfinished, ", "))}
			}
			return actionDoneMsg{done: fmt.Sprintf("Schedule %s/%s triggered: run %s.", a.workflow, a.name, *res.Fire.RunID)}
		}, m.loadSchedules())
	case dlRetryAction:
		return tea.Sequence(m.act(fmt.Sprintf("Dead letter %d will be retried.", a.id), func(ctx context.Context) error {
			res, err := door.RetryDeadLetter(ctx, a.id)
			if err == nil && !res.Retried {
				// The engine's words, as flowrun dlq retry prints them:
				// they name the letter and say it stays open.
				return errors.New(res.Message)
			}
			return err
		}), m.loadDeadLetters())
	case dlDropAction:
		return tea.Sequence(m.act(fmt.Sprintf("Dead letter %d dropped.", a.id), func(ctx context.Context) error {
			_, err := door.DropDeadLetter(ctx, a.id)
			return err
		}), m.loadDeadLetters())
	}
	return nil
}

// refusal is a decision the engine refused (someone decided the run first,
// it is no longer blocked, or the choice cannot work) as the engine's
// sentence, without the store's sentinel that ends it.
func refusal(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return errors.New(strings.TrimSuffix(err.Error(), ": "+store.ErrConflict.Error()))
	}
	return err
}

func (m *Model) setErr(err error) { m.setErrText(err.Error()) }

func (m *Model) setErrText(s string) {
	m.status.msg, m.status.isErr, m.status.at = termtext.Line(s), true, m.disp.Clock.Now()
}

func (m *Model) setInfo(s string) {
	m.status.msg, m.status.isErr, m.status.at = termtext.Line(s), false, m.disp.Clock.Now()
}

// How long a notice stays in the status bar, on the display's clock: a
// notice says what just happened, and "Cancel … requested" read minutes
// later is a lie by then. An error stays longer, to be read.
const (
	noticeTTL = 5 * time.Second
	errorTTL  = 20 * time.Second
)

// expireNotice clears the status bar's message once it is older than its
// time to live; each poll calls it.
func (m *Model) expireNotice() {
	if m.status.msg == "" {
		return
	}
	ttl := noticeTTL
	if m.status.isErr {
		ttl = errorTTL
	}
	if m.disp.Clock.Now().Sub(m.status.at) >= ttl {
		m.status.msg, m.status.isErr = "", false
	}
}

// prettyPayload is a checked payload indented, at most 8 lines, escaped.
func prettyPayload(p json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, p, "", "  ") != nil {
		return termtext.Line(clip(string(p), 200))
	}
	ls := strings.Split(b.String(), "\n")
	if len(ls) > 8 {
		ls = append(ls[:8], fmt.Sprintf("… %d more lines", len(ls)-8))
	}
	for i := range ls {
		ls[i] = termtext.Line(clip(ls[i], 200))
	}
	return strings.Join(ls, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
