package signal

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/theme"
)

// field is a one-line text input. (bubbles/textinput needs a clipboard
// module this build does not carry; a signal prompt needs only typing,
// pasting, moving and deleting.)
type field struct {
	prompt string
	value  []rune
	pos    int
	focus  bool
	limit  int
	hint   string // shown faint while empty
}

func (f *field) set(s string) {
	f.value = []rune(s)
	f.pos = len(f.value)
}

func (f field) text() string { return string(f.value) }

func (f field) update(k tea.KeyMsg) field {
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		r := k.Runes
		if k.Type == tea.KeySpace {
			r = []rune{' '}
		}
		r = []rune(strings.NewReplacer("\n", " ", "\r", "", "\t", " ").Replace(string(r)))
		if f.limit > 0 && len(f.value)+len(r) > f.limit {
			r = r[:max(0, f.limit-len(f.value))]
		}
		f.value = append(f.value[:f.pos:f.pos], append(r, f.value[f.pos:]...)...)
		f.pos += len(r)
	case tea.KeyBackspace:
		if f.pos > 0 {
			f.value = append(f.value[:f.pos-1:f.pos-1], f.value[f.pos:]...)
			f.pos--
		}
	case tea.KeyDelete, tea.KeyCtrlD:
		if f.pos < len(f.value) {
			f.value = append(f.value[:f.pos:f.pos], f.value[f.pos+1:]...)
		}
	case tea.KeyLeft, tea.KeyCtrlB:
		f.pos = max(0, f.pos-1)
	case tea.KeyRight, tea.KeyCtrlF:
		f.pos = min(len(f.value), f.pos+1)
	case tea.KeyHome, tea.KeyCtrlA:
		f.pos = 0
	case tea.KeyEnd, tea.KeyCtrlE:
		f.pos = len(f.value)
	case tea.KeyCtrlU:
		f.value, f.pos = nil, 0
	case tea.KeyCtrlK:
		f.value = f.value[:f.pos]
	}
	return f
}

// view renders the field in width cells, scrolled so the cursor shows.
func (f field) view(st *theme.Styles, width int) string {
	avail := max(4, width-len([]rune(f.prompt))-1)
	start := 0
	if f.pos >= avail {
		start = f.pos - avail + 1
	}
	end := min(len(f.value), start+avail)
	if len(f.value) == 0 && f.hint != "" && !f.focus {
		return f.prompt + st.Faint.Render(f.hint)
	}
	// A pasted value may hold control characters: they are shown escaped
	// (termtext), and sent as typed.
	if !f.focus {
		return f.prompt + termtext.Line(string(f.value[start:end]))
	}
	// The cursor is drawn reversed on the character under it.
	before := termtext.Line(string(f.value[start:f.pos]))
	under, after := " ", ""
	if f.pos < end {
		under = termtext.Line(string(f.value[f.pos]))
		after = termtext.Line(string(f.value[f.pos+1 : end]))
	}
	return st.Key.Render(f.prompt) + before + st.Selected.Render(under) + after
}
