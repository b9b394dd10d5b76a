package signal

import (
	"bytes"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
)

func TestCheckPayload(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: `{"approved": true}`, want: `{"approved":true}`},
		{in: `42`, want: `42`},
		{in: `{"id": 9223372036854775807, "u": 18446744073709551615}`, want: `{"id":9223372036854775807,"u":18446744073709551615}`},
		{in: `"yes"`, want: `"yes"`},
		{in: `{"a": tru`, err: "ends before the value is complete"},
		{in: `{a: 1}`, err: "at character 2"},
		{in: `1 2`, err: "more after the first value"},
		{in: `yes`, err: "Type one JSON value"},
	} {
		got, err := CheckPayload(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("CheckPayload(%q) error %v, want one containing %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || string(got) != tc.want):
			t.Errorf("CheckPayload(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func typed(m Model, s string) Model {
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)})
	return m
}

func TestPromptRejectsThenSends(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	m := New(disp, keys.Default(), "RUN1", []string{"approval"}, nil)
	m = typed(m, `[1,`)
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd != nil || !strings.Contains(m.View(), "not valid JSON") {
		t.Fatalf("a malformed payload was sent or not explained:\n%s", m.View())
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	m = typed(m, `]`)
	m, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		t.Fatalf("a valid payload was not sent:\n%s", m.View())
	}
	sub, ok := cmd().(SubmitMsg)
	if !ok || sub.Name != "approval" || string(sub.Payload) != `[1]` || sub.RunID != "RUN1" {
		t.Fatalf("submitted %#v", sub)
	}
	if m.Err() != "" {
		t.Fatalf("the old error stayed: %s", m.Err())
	}
}

func TestPromptNeedsName(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	m := New(disp, keys.Default(), "RUN1", nil, nil)
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd != nil || !strings.Contains(m.Err(), "name of the signal") {
		t.Fatalf("an unnamed signal: %q", m.Err())
	}
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if _, ok := cmd().(CancelMsg); !ok {
		t.Fatal("esc did not close the prompt")
	}
}

// TestPromptEscapesControls: the signal names a run waits for come from
// its workflow, and a pasted payload may hold control characters: both are
// drawn escaped, and sent as typed.
func TestPromptEscapesControls(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	m := New(disp, keys.Default(), "RUN1", []string{"go\x1b[2K"}, nil)
	m = typed(m, "\x1b[2K\u202e\x07")
	v := m.View()
	for _, want := range []string{`The run waits for: go\x1b[2K`, `signal  go\x1b[2K`, `payload \x1b[2K\u202e\a`} {
		if !strings.Contains(v, want) {
			t.Errorf("prompt lacks %q:\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "\x1b\a\u202e") {
		t.Errorf("prompt holds raw control characters:\n%q", v)
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyCtrlU})
	m = typed(m, "\"ok\u202e\"")
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		t.Fatalf("not sent: %s", m.Err())
	}
	if sub := cmd().(SubmitMsg); sub.Name != "go\x1b[2K" || string(sub.Payload) != "\"ok\u202e\"" {
		t.Fatalf("submitted %q %q", sub.Name, sub.Payload)
	}
}
