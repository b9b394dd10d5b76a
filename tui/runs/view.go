package runs

import (
	"fmt"
	"slices"
	"strings"
	"time"

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

// columns are the widths of the list's columns for a width.
type columns struct{ id, workflow, version, key, bar, steps, time int }

// layout computes the columns for a width; idLen is the length of the id
// prefixes that tell the listed runs apart (IDPrefixLen).
func layout(width, idLen int) columns {
	c := columns{id: max(minPrefix, idLen), version: 7, key: 10, bar: 12, steps: 9, time: 7}
	if width >= 110 {
		c.id, c.key, c.bar = max(c.id, 26), 14, 16
	}
	// icon(2) and one space between the other seven columns
	c.workflow = max(8, width-2-c.id-c.version-c.key-c.bar-c.steps-c.time-7)
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
	status, workflow := string(m.status), m.workflow
	if status == "" {
		status = "all"
	}
	if workflow == "" {
		workflow = "all"
	}
	b.WriteString(theme.Fit(fmt.Sprintf("%d of %d runs · status: %s · workflow: %s · sort: %s",
		len(m.view), len(m.rows), status, workflow, m.order), m.width) + "\n")
	c := layout(m.width, m.idLen)
	head := fmt.Sprintf("  %-*s %-*s %-*s %-*s %-*s %*s %*s", c.id, "RUN", c.workflow, "WORKFLOW", c.version, "VERSION",
		c.key, "KEY", c.bar, "PROGRESS", c.steps, "STEPS", c.time, "TIME")
	b.WriteString(st.Header.Render(theme.Fit(head, m.width)))
	h := m.listHeight()
	if len(m.view) == 0 {
		msg := "No runs yet. Start one with `flowrun apply FILE.hcl`."
		if !m.loaded {
			msg = "Loading runs…"
		} else if len(m.rows) > 0 {
			msg = "No run matches the filters; press f or w to change them."
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
	line := icon + " " +
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
