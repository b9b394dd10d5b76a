package confirm

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
)

// TestViewEscapesControls: a dialog's title and body may quote stored text
// (a run key, an error); they are drawn escaped, line by line.
func TestViewEscapesControls(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	disp.Width = 100
	m := New(disp, keys.Default(), "Retry run \x1b[2K?", "first line\nfake\x1b[2K\rall good\u202e", nil)
	v := m.View()
	for _, want := range []string{`Retry run \x1b[2K?`, "first line", `fake\x1b[2K\rall good\u202e`} {
		if !strings.Contains(v, want) {
			t.Errorf("dialog lacks %q:\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "\x1b\r\u202e") {
		t.Errorf("dialog holds raw control characters:\n%q", v)
	}
}

// TestViewKeepsIndentation: an indented body (a signal's payload, as
// json.Indent lays it out) keeps its indentation, on wrapped lines too.
func TestViewKeepsIndentation(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	disp.Width = 40
	m := New(disp, keys.Default(), "Send?", "{\n  \"approved\": true,\n  \"note\": \"one two three four five six seven\"\n}", nil)
	v := m.View()
	for _, want := range []string{"│ {", `│   "approved": true,`, `│   "note": "one two three four five`, "│   six seven\""} {
		if !strings.Contains(v, want) {
			t.Errorf("dialog lacks %q:\n%s", want, v)
		}
	}
}
