package signal

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
)

const typedHCL = `workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "approval"
      type   = object({ approved = bool })
    }
  }
}
`

func typedGraph(t *testing.T) *graph.Graph {
	t.Helper()
	mod, diags := lang.LoadFile("typed.hcl", []byte(typedHCL))
	if diags.HasErrors() || len(mod.Workflows) != 1 {
		t.Fatalf("compile: %v", diags)
	}
	return mod.Workflows[0].Graph
}

// The payload is parsed as it is typed and checked against the type the
// wait declares (interp.CheckSignalData); enter refuses a payload of
// another type and sends one of the type.
func TestPromptRefusesWrongType(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	m := New(disp, keys.Default(), "RUN1", []string{"approval"}, typedGraph(t))
	// It opens with a payload of the wait's type; clear it to type one.
	for range len(m.payload.text()) {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	m = typed(m, `{"approved": "yes"`)
	if v := m.View(); !strings.Contains(v, "not valid JSON yet") {
		t.Fatalf("an incomplete payload is not said so as it is typed:\n%s", v)
	}
	m = typed(m, `}`)
	golden.RequireEqual(t, []byte(m.View()))
	if v := flatten(m.View()); !strings.Contains(v, "Step ask takes data of type object({approved = bool})") {
		t.Fatalf("a payload of the wrong type is not flagged as it is typed:\n%s", m.View())
	}
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd != nil {
		t.Fatalf("a payload of the wrong type was sent:\n%s", m.View())
	}
	for range len(`"yes"}`) {
		m, _ = m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	m = typed(m, `true}`)
	if v := m.View(); !strings.Contains(v, `✓ valid JSON: {"approved":true}`) {
		t.Fatalf("a payload of the type is not shown valid:\n%s", v)
	}
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if sub, ok := cmd().(SubmitMsg); !ok || string(sub.Payload) != `{"approved":true}` {
		t.Fatalf("sent %#v", sub)
	}
}

// The focus starts on the payload when the name is filled in, and the
// hint names the field tab goes to; JSON typed into the name is refused
// with a sentence saying where it goes (issue 24).
func TestPromptFocusMatchesHint(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	m := New(disp, keys.Default(), "RUN1", []string{"approval"}, nil)
	if v := m.View(); !strings.Contains(v, "tab to signal name") {
		t.Fatalf("with focus on the payload the hint does not say tab goes to the name:\n%s", v)
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyTab})
	if v := m.View(); !strings.Contains(v, "tab to payload") {
		t.Fatalf("with focus on the name the hint does not say tab goes to the payload:\n%s", v)
	}
	m = typed(m, `{"approved": true}`)
	m, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd != nil || !strings.Contains(flatten(m.View()), "looks like a payload typed into the name") {
		t.Fatalf("JSON in the name was sent or not explained:\n%s", m.View())
	}
}

func flatten(s string) string {
	s = strings.NewReplacer("│", " ", "|", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// TestPromptOpensWithAnExample: a wait that declares a type opens the
// prompt with a payload of that type, which the check accepts as it is.
func TestPromptOpensWithAnExample(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	m := New(disp, keys.Default(), "RUN1", []string{"approval"}, typedGraph(t))
	if got := m.payload.text(); got != `{"approved":true}` {
		t.Fatalf("the payload opens with %q, want an example of object({approved = bool})", got)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("the example payload is refused")
	}
	if sub, ok := cmd().(SubmitMsg); !ok || string(sub.Payload) != `{"approved":true}` {
		t.Fatalf("sent %#v", sub)
	}
}
