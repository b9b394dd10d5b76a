package root

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

// helpKeys is the help bar of the current screen.
func (m Model) helpKeys() keys.Help {
	k := m.keys
	nav := []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Jump, k.Runs, k.DeadLetters, k.Breakers, k.Schedules}
	switch {
	case m.confirm != nil:
		return keys.Help{Short: []key.Binding{k.Yes, k.No}}
	case m.signal != nil:
		return keys.Help{Short: []key.Binding{k.Submit, k.Next, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close"))}}
	case m.decide != nil:
		// Only the choices the screen takes: a choice that cannot work
		// is said in the body, and its key does nothing.
		short := []key.Binding{k.Old}
		if p := m.decide.Plan(); p == nil || p.NewErr == nil {
			short = append(short, k.New)
		}
		if p := m.decide.Plan(); p == nil || p.MigrateErr == nil {
			short = append(short, k.Migrate)
		}
		return keys.Help{Short: append(short, key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")))}
	case m.jump != nil:
		return keys.Help{Short: []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go")), key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close"))}}
	case m.screen == screenRuns && m.runs.Capturing():
		return keys.Help{Short: []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep")), key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear/close"))}}
	}
	switch m.screen {
	case screenRun:
		if m.run.Capturing() {
			return keys.Help{Short: []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep")), key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear"))}}
		}
		if m.run.FocusLog() {
			return keys.Help{Short: []key.Binding{k.Focus, k.Up, k.Down, k.Search, k.NextMatch, k.Bottom, k.Back, k.Quit}, More: nav}
		}
		return keys.Help{Short: []key.Binding{k.Open, k.Focus, k.Back, k.Cancel, k.Retry, k.Signal, k.Decide, k.Help, k.Quit}, More: nav}
	case screenStep:
		return keys.Help{Short: []key.Binding{k.Back, k.Up, k.Down, k.Cancel, k.Signal, k.Help, k.Quit}, More: nav}
	case screenDeadLetters:
		return keys.Help{Short: []key.Binding{k.Retry, k.Drop, k.Back, k.Help, k.Quit}, More: nav}
	case screenBreakers:
		return keys.Help{Short: []key.Binding{k.Back, k.Help, k.Quit}, More: nav}
	case screenSchedules:
		return keys.Help{Short: []key.Binding{k.Pause, k.Unpause, k.Trigger, k.Back, k.Help, k.Quit}, More: nav}
	}
	return keys.Help{Short: []key.Binding{k.Open, k.Search, k.FilterStatus, k.FilterWorkflow, k.Sort, k.Cancel, k.Retry, k.Signal, k.Decide, k.Help, k.Quit}, More: nav}
}

func (m Model) helpHeight() int {
	if !m.help.ShowAll {
		return 1
	}
	return max(1, lipgloss.Height(m.helpView()))
}

// helpView is the help bar; the full help (?) ends with the legend of the
// status icons.
func (m Model) helpView() string {
	h := m.help
	h.Width = m.disp.Width
	v := h.View(m.helpKeys())
	if m.help.ShowAll {
		v += "\n" + theme.Legend(m.disp.Styles, m.disp.Width)
	}
	return v
}

// View draws the title bar, the screen (or an overlay on it), the status
// bar and the help bar, always exactly the terminal's size.
func (m Model) View() string {
	w, h := m.disp.Width, m.disp.Height
	if w <= 0 || h <= 0 {
		return ""
	}
	if m.disp.TooSmall() {
		return theme.Lines(wrap(display.TooSmallMessage(w, h), w, h), w, h)
	}
	st := m.disp.Styles
	bodyH := m.bodyHeight()

	title := st.Title.Render("flowtui")
	if m.title != "" {
		title += " " + st.Faint.Render(termtext.Line(m.title))
	}
	var body string
	switch {
	case m.status.storeErr != nil && !m.follow.loaded && m.src.Server() != "":
		body = st.Error.Render("Cannot read the runs of "+termtext.Line(m.src.Server())+".") + "\n" + termtext.Line(m.status.storeErr.Error()) +
			"\n\n" + serverAdvice(m.src.Server(), m.status.storeErr) + "\nflowtui retries every few hundred milliseconds; press q to quit."
	case m.status.storeErr != nil && !m.follow.loaded:
		body = st.Error.Render("Cannot read the database.") + "\n" + termtext.Line(m.status.storeErr.Error()) +
			"\n\nCheck that --db (or FLOWRUN_DB) names a flowrun database you may read.\nflowtui retries every few hundred milliseconds; press q to quit."
	case m.confirm != nil:
		body = lipgloss.Place(w, bodyH, lipgloss.Center, lipgloss.Center, m.confirm.View())
	case m.signal != nil:
		body = lipgloss.Place(w, bodyH, lipgloss.Center, lipgloss.Center, m.signal.View())
	case m.decide != nil:
		body = lipgloss.Place(w, bodyH, lipgloss.Center, lipgloss.Center, m.decide.View())
	default:
		switch m.screen {
		case screenRuns:
			body = m.runs.View()
		case screenRun:
			body = m.run.View()
		case screenStep:
			body = m.step.View()
		case screenDeadLetters:
			body = m.dl.View()
		case screenBreakers:
			body = m.br.View()
		case screenSchedules:
			body = m.sc.View()
		}
	}

	status := m.statusLines()
	var b strings.Builder
	b.WriteString(theme.Fit(title, w) + "\n")
	b.WriteString(theme.Lines(body, w, bodyH) + "\n")
	b.WriteString(theme.Lines(status, w, m.statusHeight()) + "\n")
	b.WriteString(theme.Lines(m.helpView(), w, m.helpHeight()))
	return b.String()
}

// statusLines is the status bar's text: a message, or the store's error,
// wrapped to at most two lines.
func (m Model) statusLines() string {
	st := m.disp.Styles
	switch {
	case m.jump != nil:
		return wrap(m.jump.View(), m.disp.Width, 3)
	case m.status.storeErr != nil && m.src.Server() != "":
		if errors.Is(m.status.storeErr, api.ErrUnauthorized) {
			// The server's words name its own remedy (flowrun tokens
			// list on its store); a retry with this token never works.
			return wrap(st.Error.Render("Cannot read "+termtext.Line(m.src.Server())+": it refuses the token. ")+serverAdvice(m.src.Server(), m.status.storeErr), m.disp.Width, 3)
		}
		return wrap(st.Error.Render("Cannot read "+termtext.Line(m.src.Server())+": ")+termtext.Line(m.status.storeErr.Error())+" (retrying)", m.disp.Width, 2)
	case m.status.storeErr != nil:
		return wrap(st.Error.Render("Cannot read the database: ")+termtext.Line(m.status.storeErr.Error())+" (retrying)", m.disp.Width, 2)
	case m.status.isErr:
		return st.Error.Render(wrap(m.status.msg, m.disp.Width, 2))
	case m.status.msg == "" && m.follow.loaded && m.src.Server() != "":
		// The server answers a wait at the commit that appends an
		// event (feed.Source.Wait): nothing is polled at an interval.
		return wrap(st.Faint.Render(fmt.Sprintf("live · %d runs · through %s, as they are committed", m.runs.Len(), termtext.Line(m.src.Server()))), m.disp.Width, 1)
	case m.status.msg == "" && m.follow.loaded:
		return st.Faint.Render(fmt.Sprintf("live · %d runs · polled every %s", m.runs.Len(), feed.PollInterval))
	}
	return wrap(m.status.msg, m.disp.Width, 2)
}

// serverAdvice says what to do when the server at url cannot be read:
// a token it refuses (revoked, or of another server) is not taken on a
// retry, so flowtui is started again with another; a server that is down
// or failing may come back, which flowtui sees by itself.
func serverAdvice(url string, err error) string {
	if errors.Is(err, api.ErrUnauthorized) {
		return "Quit (q) and start flowtui again with a token it takes, of scope read or more (FLOWRUN_TOKEN, or: flowrun login " + termtext.Line(url) + ")."
	}
	return "Check that flowrun serve runs at that address and answers (curl " + termtext.Line(url) + "/healthz); flowtui goes on when it is back."
}

func (m Model) statusHeight() int { return max(1, lipgloss.Height(m.statusLines())) }

// wrap breaks s at spaces into at most n lines of w cells.
func wrap(s string, w, n int) string {
	out := lipgloss.NewStyle().Width(w).Render(s)
	ls := strings.Split(out, "\n")
	if len(ls) > n {
		ls = ls[:n]
		ls[n-1] = theme.Cut(strings.TrimRight(ls[n-1], " ")+" …", w)
	}
	for i := range ls {
		ls[i] = strings.TrimRight(ls[i], " ")
	}
	return strings.Join(ls, "\n")
}
