package root

import (
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
)

const secretHCL = `
workflow "pin" {
  version = "1.0.0"
  secret "pin" { env = "PIN" }
  step "emit" {
    exec {
      command = ["sh", "-c", "printf '{\"pin\": %s, \"s\": \"x%s\"}' \"$P\" \"$P\""]
      env     = { P = "{{ secrets.pin }}" }
    }
  }
  step "boom" {
    depends_on = [step.emit]
    exec {
      command = ["sh", "-c", "echo \"pin was $P\" >&2; exit 4"]
      env     = { P = "{{ secrets.pin }}" }
    }
  }
}
`

// TestSecretsNotShown: the runs list, the run view and the step views of
// a run whose programs printed a declared secret (as a JSON number, in a
// string, on stderr of a failing step) show *** and never the secret
// (language.md §4): flowtui draws what is stored.
func TestSecretsNotShown(t *testing.T) {
	const pin = "48213907"
	b := fixture.NewEnv(t, map[string]string{"PIN": pin})
	b.StoreHCL(t, secretHCL)
	run := b.Drive(t, b.Start(t, "pin", nil).ID)
	if run.Status != store.RunFailed {
		t.Fatalf("setup: the run is %s", run.Status)
	}
	m := newRoot(t, feed.Local(b.Engine, ""), b)
	views := map[string]string{"list": m.View()}
	m = press(t, m, "enter")
	views["run"] = m.View()
	m = press(t, m, "enter") // the first step, emit
	views["emit"] = m.View()
	m = press(t, m, "esc", "j", "enter") // the step boom
	views["boom"] = m.View()
	for name, want := range map[string]string{
		"run":  "pin was ***",
		"emit": `"json": { "pin": "***", "s": "x***" }, "stderr": "", "stdout": "{\"pin\": ***,`,
		"boom": "pin was ***",
	} {
		if v := views[name]; !strings.Contains(flat(v), want) {
			t.Errorf("the %s view lacks %q:\n%s", name, want, v)
		}
	}
	for name, v := range views {
		if strings.Contains(v, pin) {
			t.Errorf("the %s view shows the secret:\n%s", name, v)
		}
	}
}
