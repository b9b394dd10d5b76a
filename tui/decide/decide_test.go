package decide

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
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

func compileGraph(t *testing.T, src string) *graph.Graph {
	t.Helper()
	m, diags := lang.LoadFile("ship.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return m.Workflows[0].Graph
}

// plan is the engine's plan for a run of v1 that completed price and
// charge and was running label when v2 was stored (interp.PlanDecision
// computes such plans; the screen only shows them).
func plan(t *testing.T) *interp.DecisionPlan {
	old, new := compileGraph(t, v1), compileGraph(t, v2)
	changes := graph.Diff(old, new)
	return &interp.DecisionPlan{Run: store.Run{ID: "RUN1", Workflow: "ship"}, From: old.Version, To: new.Version,
		Changes: changes, Bump: graph.RequiredBump(changes), Keep: []string{"price"}, Rerun: []string{"charge"}}
}

// TestScreenSaysWhyAChoiceCannotWork: a plan whose new version cannot
// take the run's inputs offers neither n nor m, and says why once; one
// whose migration alone cannot work offers n but not m.
func TestScreenSaysWhyAChoiceCannotWork(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	disp.Width, disp.Height = 100, 24
	inputs := errors.New(`version 2.0.0 requires input "region" (type string), which the run was not started with`)
	kept := errors.New(`version 2.0.0 cannot take the recorded output of step "price"`)
	for _, c := range []struct {
		newErr, migrateErr error
		say                string
		offers             string
	}{
		{inputs, inputs, "Neither new nor migrate can work: " + inputs.Error(), "o"},
		{nil, kept, "Migrate cannot work: " + kept.Error(), "on"},
	} {
		p := plan(t)
		p.NewErr, p.MigrateErr = c.newErr, c.migrateErr
		m := New(disp, keys.Default(), p)
		m.SetHeight(24)
		v := flat(m.View())
		if !strings.Contains(v, c.say) || strings.Count(v, inputs.Error()) > 1 || strings.Contains(v, "A migration keeps") {
			t.Errorf("screen does not say %q once, or offers a migration:\n%s", c.say, m.View())
		}
		for _, k := range "onm" {
			_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{k}})
			if offered := strings.ContainsRune(c.offers, k); (cmd != nil) != offered {
				t.Errorf("%s: key %c chose %v, want offered=%v", c.say, k, cmd != nil, offered)
			}
		}
		if strings.Contains(v, "n new:") != strings.Contains(c.offers, "n") || strings.Contains(v, "m migrate") {
			t.Errorf("footer offers a choice that cannot work:\n%s", m.View())
		}
	}
}

// flat joins the words of a screen, inside its border, with single spaces.
func flat(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString(strings.Trim(l, "│ ") + " ")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func TestScreenGoldenAndChoices(t *testing.T) {
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	disp.Width, disp.Height = 80, 24
	m := New(disp, keys.Default(), plan(t))
	m.SetHeight(21)
	v := m.View()
	for _, want := range []string{"MAJOR", `step "label" removed`, "keeps 1 completed step(s):", "price", "re-runs 1 completed step(s):", "charge"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	golden.RequireEqual(t, []byte(v))
	for k, want := range map[string]interp.Choice{"o": interp.ChoiceOld, "n": interp.ChoiceNew, "m": interp.ChoiceMigrate} {
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
	disp := display.New(&bytes.Buffer{}, true, clock.NewFake(clock.Real{}.Now()))
	disp.Width, disp.Height = 120, 24
	p := plan(t)
	p.Changes = append(p.Changes, graph.Change{Path: "step \"x\x1b[2K\"", What: "changed\r", Bump: graph.BumpPatch})
	p.Keep = append(p.Keep, "k\x1b[1A")
	m := New(disp, keys.Default(), p)
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
