package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/theme"
)

// header renders the lines above the tree.
func (m Model) header() []string {
	st := m.disp.Styles
	r := m.d.Run
	now := m.disp.Clock.Now()
	status := st.StatusStyle(string(r.Status)).Render(theme.Icon(string(r.Status)) + " " + string(r.Status))
	lines := []string{
		st.Title.Render("run "+r.ID) + "  " + status,
		termtext.Line(fmt.Sprintf("workflow %s · version %s (bound) · key %s", r.Workflow, m.d.Bound, orDash(r.Key))),
	}
	timing := "created " + r.CreatedAt.Local().Format("2006-01-02 15:04:05")
	if d := theme.Span(r.StartedAt, r.FinishedAt, now); d != "" {
		timing += " · ran " + d
	}
	// A run parked on a signal that arrived, or whose wait timed out, is
	// due: a worker or resume takes it up next.
	signal, onSignal := strings.CutPrefix(r.WaitReason, "signal:")
	received := onSignal && r.Status == store.RunWaiting && !r.AvailableAt.IsZero() && !r.AvailableAt.After(now)
	switch {
	case received && m.signalTimedOut(signal, now):
		timing += " · signal " + signal + " timed out, due"
	case received:
		timing += " · signal " + signal + " received, due"
	case r.Status == store.RunWaiting && !r.AvailableAt.IsZero() && r.AvailableAt.Sub(now) < 24*time.Hour*365:
		timing += " · wakes " + theme.Countdown(r.AvailableAt, now)
	}
	if r.WaitReason != "" && !r.Status.Terminal() && !received {
		timing += " · waiting on " + r.WaitReason
	}
	lines = append(lines, termtext.Line(timing))
	if r.Status == store.RunBlocked {
		lines = append(lines,
			st.Banner.Render(theme.Cut("BLOCKED on a version decision: press d to choose old, new or migrate.", max(10, m.width-2))),
			st.Warning.Render(theme.Cut("A newer MAJOR version of "+termtext.Line(r.Workflow)+" is stored; nothing of this run executes until it is decided.", m.width)))
	}
	if in := compact(r.Inputs); in != "" {
		lines = append(lines, st.Faint.Render("inputs  ")+in)
	}
	if out := compact(r.Outputs); out != "" {
		lines = append(lines, st.Faint.Render("outputs ")+out)
	}
	if r.Status.Terminal() {
		for i, l := range ErrorText(r.Error) {
			if i == 0 {
				l = st.Error.Render("error: ") + l
			}
			lines = append(lines, l)
		}
	}
	if m.d.GraphErr != nil {
		lines = append(lines, st.Warning.Render("The graph of this run's version cannot be read ("+termtext.Line(m.d.GraphErr.Error())+"); steps are listed as recorded."))
	}
	if len(m.d.Signals) > 0 {
		var names []string
		for _, s := range m.d.Signals {
			names = append(names, s.Name)
		}
		lines = append(lines, "signals received, not yet consumed: "+termtext.Line(strings.Join(names, ", ")))
	}
	lines = append(lines, st.Header.Render(theme.Fit(fmt.Sprintf("STEPS (%d)", len(m.nodes)), m.width)))
	return lines
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// headerHeight is the number of lines above the steps.
func (m Model) headerHeight() int {
	if m.d == nil {
		return 0
	}
	return len(m.header())
}

// treeHeight is the number of step rows shown: every step when they fit
// in half of what the header leaves, else that half; the log pane takes
// the rest.
func (m Model) treeHeight() int {
	avail := m.height - m.headerHeight()
	if m.d == nil {
		return avail
	}
	return max(min(3, avail), min(max(1, len(m.nodes)), avail/2))
}

// logHeight is the log pane's height, its title included.
func (m Model) logHeight() int { return max(0, m.height-m.headerHeight()-m.treeHeight()) }

// View renders the header and the visible part of the tree.
func (m Model) View() string {
	if m.d == nil {
		return m.disp.Styles.Faint.Render("Loading the run…")
	}
	lines := m.header()
	for i := range lines {
		lines[i] = theme.Cut(lines[i], m.width)
	}
	h := m.treeHeight()
	now := m.disp.Clock.Now()
	tree := 0
	if len(m.nodes) == 0 {
		lines = append(lines, m.disp.Styles.Faint.Render("This run has no steps."))
		tree++
	}
	for i := m.offset; i < len(m.nodes) && i < m.offset+h; i++ {
		lines = append(lines, m.row(m.nodes[i], now, i == m.cursor))
		tree++
	}
	for ; tree < h; tree++ {
		lines = append(lines, "")
	}
	if m.logHeight() > 0 {
		lines = append(lines, m.log.View(m.focusLog))
	}
	return strings.Join(lines, "\n")
}

// row renders a step: indent by depth, icon, name, then what it is doing.
func (m Model) row(n node, now time.Time, selected bool) string {
	st := m.disp.Styles
	indent := strings.Repeat("  ", min(n.depth, max(0, m.width/8)))
	icon := theme.Icon(string(n.status))
	if !selected {
		icon = st.StatusStyle(string(n.status)).Render(icon)
	}
	nameW := max(12, min(28, m.width/3))
	left := indent + icon + " " + theme.Fit(termtext.Line(n.name), max(4, nameW-len(indent)))
	var info []string
	info = append(info, string(n.status))
	if n.attempts > 1 || (n.attempts == 1 && (n.kind == "exec" || n.kind == "http")) {
		info = append(info, fmt.Sprintf("attempt %d", n.attempts))
	}
	if d := theme.Span(n.started, n.finished, now); d != "" {
		info = append(info, d)
	}
	if n.items > 0 {
		s := fmt.Sprintf("items %d/%d", n.itemsDone, max(n.items, n.itemsTotal))
		if n.itemsFailed > 0 {
			s += fmt.Sprintf(", %d failed", n.itemsFailed)
		}
		info = append(info, s)
	}
	if n.iterations > 0 {
		info = append(info, fmt.Sprintf("iteration %d", n.iterations))
	}
	if !n.status.Terminal() {
		if n.detail != "" {
			info = append(info, n.detail)
		} else if n.signal != "" && n.status == store.StepWaiting {
			info = append(info, "signal "+n.signal)
		}
		if !n.wake.IsZero() {
			info = append(info, theme.Countdown(n.wake, now))
		}
	}
	if n.errMsg != "" && n.status == store.StepFailed {
		info = append(info, n.errMsg)
	}
	line := left + "  " + termtext.Line(strings.Join(info, " · "))
	if selected {
		return st.Selected.Render(theme.Fit(line, m.width))
	}
	return theme.Cut(line, m.width)
}

// signalTimedOut reports whether a wait step of the run on signal name
// passed its timeout (its wake time) by now.
func (m Model) signalTimedOut(name string, now time.Time) bool {
	for _, st := range m.d.Steps {
		if st.Status == store.StepWaiting && st.Detail == "signal "+name && !st.WakeAt.IsZero() && !st.WakeAt.After(now) {
			return true
		}
	}
	return false
}
