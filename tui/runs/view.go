package runs

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/theme"
)

func elapsed(r feed.RunRow, now time.Time) time.Duration {
	end := r.FinishedAt
	if end.IsZero() {
		end = now
	}
	return end.Sub(r.CreatedAt)
}

// columns are the widths of the list's columns for a width; word is 0
// when the status word beside the icon does not fit.
type columns struct{ word, id, workflow, version, key, bar, steps, time int }

// contentWidths measures the columns that hold text over every row, so a
// column is as wide as what it shows (issue 24: WORKFLOW took about 70
// cells while KEY was cut).
func contentWidths(rows []feed.RunRow, idLen int) columns {
	c := columns{id: max(minPrefix, idLen), workflow: len("WORKFLOW"), version: len("VERSION"), key: len("KEY"), steps: len("STEPS"), time: 7}
	for _, r := range rows {
		c.workflow = max(c.workflow, ansi.StringWidth(termtext.Line(r.Workflow)))
		c.version = max(c.version, ansi.StringWidth(termtext.Line(r.Version)))
		c.key = max(c.key, ansi.StringWidth(termtext.Line(r.Key)))
		c.steps = max(c.steps, len(fmt.Sprintf("%d/%d", r.StepsDone, r.StepsTotal)))
	}
	return c
}

// Bounds of the progress bar and the status word column.
const (
	minBar, maxBar = 6, 16
	wordWidth      = 9 // "completed", the longest status word
)

// layout fits the measured columns c into width: the status word shows
// when there is room for it beside a bar of minBar, the bar takes what is
// left up to maxBar, and when even that does not fit the wider of
// WORKFLOW and KEY gives way first, a cell at a time, so neither is cut
// while the other has room to spare.
func layout(width int, c columns) columns {
	// the icon and one space, then a space before each of the other columns
	fixed := 2 + c.id + 1 + c.version + 1 + c.steps + 1 + c.time + 1 + 1 + 1
	if fixed+c.workflow+c.key+1+wordWidth+minBar <= width {
		c.word = wordWidth
	}
	room := width - fixed - c.workflow - c.key - c.word - (map[bool]int{true: 1}[c.word > 0])
	c.bar = max(minBar, min(maxBar, room))
	for over := fixed + c.workflow + c.key + c.bar - width; over > 0; over-- {
		if c.workflow >= c.key && c.workflow > len("WORKFLOW") {
			c.workflow--
		} else if c.key > len("KEY") {
			c.key--
		} else if c.bar > 0 {
			c.bar--
		}
	}
	return c
}

// minPrefix is the shortest run id prefix the list shows: a ULID's first
// ten characters are its creation millisecond.
const minPrefix = 10

// shortID shows the head of a run id, as much as fits the column: the
// column is never narrower than the prefix that tells the listed runs
// apart, so what is shown is a prefix `flowrun` resolves to this run (the
// beginning of the id `flowrun runs` prints), never an ellipsis.
func shortID(id string, w int) string {
	if len(id) <= w {
		return id
	}
	return id[:w]
}

// uniquePrefix is the length of the shortest prefix that tells every id
// apart (at least minPrefix; the whole id when one is a prefix of another).
func uniquePrefix(ids []string) int {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	n := minPrefix
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1], sorted[i]
		k := 0
		for k < len(a) && k < len(b) && a[k] == b[k] {
			k++
		}
		n = max(n, min(k+1, max(len(a), len(b))))
	}
	return n
}

// View renders the filter line, the header and the visible rows.
func (m Model) View() string {
	st := m.disp.Styles
	var b strings.Builder
	b.WriteString(theme.Fit(m.filterLine(), m.width) + "\n")
	if m.menu {
		b.WriteString(m.menuView() + "\n")
	}
	c := layout(m.width, contentWidths(m.rows, m.idLen))
	status := ""
	if c.word > 0 {
		status = fmt.Sprintf("%-*s ", c.word, "STATUS")
	}
	head := fmt.Sprintf("  %s%-*s %-*s %-*s %-*s %-*s %*s %*s", status, c.id, "RUN", c.workflow, "WORKFLOW", c.version, "VERSION",
		c.key, "KEY", c.bar, "PROGRESS", c.steps, "STEPS", c.time, "TIME")
	b.WriteString(st.Header.Render(theme.Fit(head, m.width)))
	h := m.listHeight()
	if len(m.view) == 0 {
		msg := "No runs yet. Start one with `flowrun apply FILE.hcl`."
		if !m.loaded {
			msg = "Loading runs…"
		} else if len(m.rows) > 0 {
			msg = "No run matches the filters; press f, w or / to change them (esc clears the search)."
		}
		b.WriteString("\n" + st.Faint.Render(theme.Cut(msg, m.width)))
		return b.String()
	}
	now := m.disp.Clock.Now()
	for i := m.offset; i < len(m.view) && i < m.offset+h; i++ {
		b.WriteString("\n" + m.row(m.rows[m.view[i]], c, now, i == m.cursor))
	}
	return b.String()
}

// row renders one run; the selected row is drawn reversed as one block,
// without the per-cell colours that would break the reverse.
func (m Model) row(r feed.RunRow, c columns, now time.Time, selected bool) string {
	st := m.disp.Styles
	icon, bar := theme.Icon(string(r.Status)), st.Bar(r.StepsDone, r.StepsTotal, c.bar)
	if selected {
		bar = theme.PlainBar(r.StepsDone, r.StepsTotal, c.bar)
	} else {
		icon = st.StatusStyle(string(r.Status)).Render(icon)
	}
	word := ""
	if c.word > 0 {
		word = theme.Fit(string(r.Status), c.word) + " "
		if !selected {
			word = st.StatusStyle(string(r.Status)).Render(word)
		}
	}
	line := icon + " " + word +
		theme.Fit(shortID(r.ID, c.id), c.id) + " " +
		theme.Fit(termtext.Line(r.Workflow), c.workflow) + " " +
		theme.Fit(termtext.Line(r.Version), c.version) + " " +
		theme.Fit(termtext.Line(r.Key), c.key) + " " + bar + " " +
		fmt.Sprintf("%*s %*s", c.steps, theme.Cut(fmt.Sprintf("%d/%d", r.StepsDone, r.StepsTotal), c.steps),
			c.time, theme.Duration(elapsed(r, now)))
	if selected {
		return st.Selected.Render(theme.Fit(line, m.width))
	}
	return theme.Cut(line, m.width)
}
