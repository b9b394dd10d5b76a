// Package decide is the version-decision screen for a blocked run: the
// engine's plan for it (interp.Engine.PlanDecision): the classified changes
// between the graph the run is bound to and the newest stored version, the
// bump they require, and which completed steps a migration keeps and which
// it re-runs, or why a choice cannot work, shown before the choice of old,
// new or migrate. The same model serves flowtui (as an overlay) and
// `flowrun apply` on a terminal (Prompt, inline).
//
// decide must not plan or carry the decision out: the engine plans it,
// flowtui's root hands the choice to the engine after a confirm, and Prompt
// returns it to its caller.
package decide

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// ChooseMsg is sent when a choice is made (not yet confirmed). From is the
// version the run was bound to on the screen: the decision is taken only if
// the run is still blocked on it (nobody decided it meanwhile).
type ChooseMsg struct {
	RunID  string
	From   string
	Choice interp.Choice
}

// CloseMsg is sent when the screen is closed without a choice.
type CloseMsg struct{}

// Model is the decision screen.
type Model struct {
	disp   *display.Display
	keys   keys.KeyMap
	plan   *interp.DecisionPlan
	offset int
	height int
}

// New shows the engine's plan for a blocked run.
func New(disp *display.Display, km keys.KeyMap, p *interp.DecisionPlan) Model {
	return Model{disp: disp, keys: km, plan: p, height: disp.Height}
}

// Plan returns the plan shown.
func (m Model) Plan() *interp.DecisionPlan { return m.plan }

// SetHeight sets how many lines the screen may use.
func (m *Model) SetHeight(h int) { m.height = h }

// Update scrolls, chooses and closes.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	choose := func(c interp.Choice) tea.Cmd {
		id, from := m.plan.Run.ID, m.plan.From
		return func() tea.Msg { return ChooseMsg{RunID: id, From: from, Choice: c} }
	}
	switch {
	case key.Matches(k, m.keys.Old):
		return m, choose(interp.ChoiceOld)
	case key.Matches(k, m.keys.New):
		if m.plan.NewErr == nil {
			return m, choose(interp.ChoiceNew)
		}
	case key.Matches(k, m.keys.Migrate):
		if m.plan.MigrateErr == nil {
			return m, choose(interp.ChoiceMigrate)
		}
	case k.Type == tea.KeyEsc || k.String() == "q":
		return m, func() tea.Msg { return CloseMsg{} }
	case key.Matches(k, m.keys.Down):
		m.offset = min(m.offset+1, max(0, len(m.lines())-m.bodyHeight()))
	case key.Matches(k, m.keys.Up):
		m.offset = max(0, m.offset-1)
	}
	return m, nil
}

// lines is the scrolling body: changes, then why a choice cannot work, or
// the kept and re-run steps.
func (m Model) lines() []string {
	st := m.disp.Styles
	p := m.plan
	var ls []string
	ls = append(ls, st.Header.Render(fmt.Sprintf("Changes from %s to %s (%s)", p.From, p.To, p.Bump)))
	if len(p.Changes) == 0 {
		ls = append(ls, "  none")
	}
	for _, c := range p.Changes {
		ls = append(ls, termtext.Line(fmt.Sprintf("  %-5s %s %s", c.Bump, c.Path, c.What)))
	}
	ls = append(ls, "")
	why := func(what string, err error) { // wrapped: the reason is the point
		ls = append(ls, strings.Split(ansi.Wrap(st.Error.Render(what)+" "+termtext.Line(err.Error()), m.width(), " "), "\n")...)
	}
	switch {
	case p.NewErr != nil && p.MigrateErr == p.NewErr: // the run's inputs do not fit the new version
		why("Neither new nor migrate can work:", p.NewErr)
	case p.NewErr != nil:
		why("New cannot work:", p.NewErr)
	}
	if p.MigrateErr != nil {
		if p.MigrateErr != p.NewErr {
			why("Migrate cannot work:", p.MigrateErr)
		}
		return ls
	}
	ls = append(ls, st.Header.Render(fmt.Sprintf("A migration keeps %d completed step(s):", len(p.Keep))))
	ls = append(ls, "  "+termtext.Line(listOr(p.Keep, "none")))
	ls = append(ls, st.Header.Render(fmt.Sprintf("and re-runs %d completed step(s):", len(p.Rerun))))
	ls = append(ls, "  "+termtext.Line(listOr(p.Rerun, "none")))
	return ls
}

func listOr(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	return strings.Join(l, ", ")
}

func (m Model) bodyHeight() int { return max(3, m.height-9) }

// state says where the run stands: blocked already, or parked and blocked
// by the decision (interp.Engine.OfferDecision offers it both ways).
func state(s store.RunStatus) string {
	if s == store.RunBlocked || s == "" {
		return "is blocked"
	}
	return fmt.Sprintf("is %s and can be decided now", s)
}

// width is the width of the screen's text.
func (m Model) width() int { return max(20, min(76, m.disp.Width-4)) }

// View renders the screen.
func (m Model) View() string {
	st := m.disp.Styles
	w := m.width()
	p := m.plan
	head := []string{
		st.Title.Render(theme.Cut(termtext.Line(fmt.Sprintf("Run %s of %s %s", p.Run.ID, p.Run.Workflow, state(p.Run.Status))), w)),
		theme.Cut(fmt.Sprintf("It is bound to %s; %s %s.", p.From, p.To, p.Differs()), w),
		"",
	}
	body := m.lines()
	end := min(len(body), m.offset+m.bodyHeight())
	for _, l := range body[m.offset:end] {
		head = append(head, theme.Cut(l, w))
	}
	if end < len(body) {
		head = append(head, st.Faint.Render(fmt.Sprintf("… %d more lines (↓)", len(body)-end)))
	}
	foot := st.Key.Render("o") + " old: resume on " + p.From
	if p.NewErr == nil {
		foot += "   " + st.Key.Render("n") + " new: cancel, start " + p.To
	}
	if p.MigrateErr == nil {
		foot += "   " + st.Key.Render("m") + " migrate"
	}
	head = append(head, "", theme.Cut(foot, w), st.Key.Render("esc")+" close without deciding")
	return st.Dialog.Width(w + 2).Render(strings.Join(head, "\n"))
}
