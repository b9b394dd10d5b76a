package breakers

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
)

// TestViewEscapesStoredText: a breaker's name and a store error are drawn
// with their control characters escaped.
func TestViewEscapesStoredText(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)))
	m := New(disp)
	m.SetSize(100, 10)
	m.Set([]store.Breaker{{Name: "api\x1b[2K\r", State: "closed"}}, nil)
	v := m.View()
	if want := `api\x1b[2K\r`; !strings.Contains(v, want) {
		t.Errorf("breakers lack %q:\n%s", want, v)
	}
	if strings.ContainsAny(v, "\x1b\r") {
		t.Errorf("breakers hold raw control characters:\n%q", v)
	}
}
