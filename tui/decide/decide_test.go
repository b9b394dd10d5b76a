package decide

import (
	"bytes"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/keys"
	"github.com/flowrun/flowrun/tui/theme"
)

const v1 = `
workflow "ship" {
  version = "1.0.0"
  step "price" {
    set {
      total = 12
    }
  }
  step "charge" {
    exec {
      command = ["echo", "{{ steps.price.output.total }}"]
    }
  }
  step "label" {
    exec {
      command = ["echo", "label"]
    }
  }
}
`

// v2 changes charge's command (MINOR) and removes label (MAJOR).
const v2 = `
workflow "ship" {
  version = "2.0.0"
  step "price" {
    set {
      total = 12
    }
  }
  step "charge" {
    exec {
      command = ["echo", "charged {{ steps.price.output.total }}"]
    }
  }
}
`

func graph(t *testing.T, src string) *lang.Graph {
	t.Helper()
	m, diags := lang.LoadFile("ship.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return m.Workflows[0].Graph
}

func plan(t *testing.T) Plan {
	steps := []store.Step{
		{Key: "price", Step: "price", Index: -1, Iteration: -1, Status: store.StepCompleted},
		{Key: "charge", Step: "charge", Index: -1, Iteration: -1, Status: store.StepCompleted},
		{Key: "label", Step: "label", Index: -1, Iteration: -1, Status: store.StepRunning},
	}
	return MakePlan("RUN1", graph(t, v1), graph(t, v2), steps)
}

func TestPlan(t *testing.T) {
	p := plan(t)
	if p.Bump != lang.BumpMajor || p.From != "1.0.0" || p.To != "2.0.0" {
		t.Fatalf("plan %+v", p)
	}
	if p.PlanErr != nil || strings.Join(p.Keep, ",") != "price" || strings.Join(p.Rerun, ",") != "charge" {
		t.Fatalf("keep %v rerun %v err %v", p.Keep, p.Rerun, p.PlanErr)
	}
}

func TestScreenGoldenAndChoices(t *testing.T) {
	ctx := theme.NewContext(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	ctx.Width, ctx.Height = 80, 24
	m := New(ctx, keys.Default, plan(t))
	m.SetHeight(21)
	v := m.View()
	for _, want := range []string{"MAJOR", `step "label" removed`, "keeps 1 completed step(s):", "price", "re-runs 1 completed step(s):", "charge"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	golden.RequireEqual(t, []byte(v))
	for k, want := range map[string]feed.Choice{"o": feed.ChoiceOld, "n": feed.ChoiceNew, "m": feed.ChoiceMigrate} {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		if msg, ok := cmd().(ChooseMsg); !ok || msg.Choice != want || msg.RunID != "RUN1" || msg.From != m.Plan().From || msg.From == "" {
			t.Errorf("%s chose %#v, want %s", k, msg, want)
		}
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if _, ok := cmd().(CloseMsg); !ok {
		t.Error("esc did not close")
	}
}

// TestScreenEscapesControls: the changes quote the workflow's text (here a
// command with an escape sequence): it is drawn escaped.
func TestScreenEscapesControls(t *testing.T) {
	ctx := theme.NewContext(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	ctx.Width, ctx.Height = 120, 24
	p := plan(t)
	p.Changes = append(p.Changes, lang.Change{Path: "step \"x\x1b[2K\"", What: "changed\r", Bump: lang.BumpPatch})
	p.Keep = append(p.Keep, "k\x1b[1A")
	m := New(ctx, keys.Default, p)
	m.SetHeight(24)
	v := m.View()
	for _, want := range []string{`step "x\x1b[2K" changed\r`, `price, k\x1b[1A`} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	if strings.ContainsAny(v, "\x1b\r") {
		t.Errorf("screen holds raw control characters:\n%q", v)
	}
}
