package decide

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// ChooseMsg is sent when a choice is made (not yet confirmed). From is the
// version the run was bound to on the screen: the decision is taken only if
// the run is still blocked on it (nobody decided it meanwhile).
type ChooseMsg struct {
	RunID  string
	From   string
	Choice feed.Choice
}

// CloseMsg is sent when the screen is closed without a choice.
type CloseMsg struct{}

// Model is the decision screen.
type Model struct {
	ctx    *theme.Context
	keys   keys.KeyMap
	plan   Plan
	offset int
	height int
}

// New shows a plan.
func New(ctx *theme.Context, km keys.KeyMap, p Plan) Model {
	return Model{ctx: ctx, keys: km, plan: p, height: ctx.Height}
}

// Plan returns the plan shown.
func (m Model) Plan() Plan { return m.plan }

// SetHeight sets how many lines the screen may use.
func (m *Model) SetHeight(h int) { m.height = h }

// Update scrolls, chooses and closes.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	choose := func(c feed.Choice) tea.Cmd {
		id, from := m.plan.RunID, m.plan.From
		return func() tea.Msg { return ChooseMsg{RunID: id, From: from, Choice: c} }
	}
	switch {
	case key.Matches(k, m.keys.Old):
		return m, choose(feed.ChoiceOld)
	case key.Matches(k, m.keys.New):
		return m, choose(feed.ChoiceNew)
	case key.Matches(k, m.keys.Migrate):
		if m.plan.PlanErr == nil {
			return m, choose(feed.ChoiceMigrate)
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

// lines is the scrolling body: changes, then kept and re-run steps.
func (m Model) lines() []string {
	st := m.ctx.Styles
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
	if p.PlanErr != nil {
		ls = append(ls, st.Error.Render("Migration cannot be planned: ")+termtext.Line(p.PlanErr.Error()))
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

// View renders the screen.
func (m Model) View() string {
	st := m.ctx.Styles
	w := max(20, min(76, m.ctx.Width-4))
	p := m.plan
	head := []string{
		st.Title.Render(theme.Cut(termtext.Line(fmt.Sprintf("Run %s of %s is blocked", p.RunID, p.Workflow)), w)),
		theme.Cut(fmt.Sprintf("It is bound to %s; %s is stored and differs in a %s way.", p.From, p.To, p.Bump), w),
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
	foot := st.Key.Render("o") + " old: resume on " + p.From + "   " + st.Key.Render("n") + " new: cancel, start " + p.To
	if p.PlanErr == nil {
		foot += "   " + st.Key.Render("m") + " migrate"
	}
	head = append(head, "", theme.Cut(foot, w), st.Key.Render("esc")+" close without deciding")
	return st.Dialog.Width(w + 2).Render(strings.Join(head, "\n"))
}
