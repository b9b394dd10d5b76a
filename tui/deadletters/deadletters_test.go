package deadletters

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
)

// TestViewEscapesStoredText: a dead letter's error quotes a program's
// stderr; its control characters are drawn escaped.
func TestViewEscapesStoredText(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	m := New(disp, keys.Default)
	m.SetSize(160, 10)
	m.Set([]store.DeadLetter{{ID: 1, RunID: "01RUN", Step: "each", Index: 2,
		Error: json.RawMessage("{\"message\":\"fake\x1b[2K\rall good \u202eevil\"}")}}, nil)
	v := m.View()
	if want := `fake\x1b[2K\rall good \u202eevil`; !strings.Contains(v, want) {
		t.Errorf("dead letters lack %q:\n%s", want, v)
	}
	if strings.ContainsAny(v, "\x1b\r\u202e") {
		t.Errorf("dead letters hold raw control characters:\n%q", v)
	}
}
