package decide

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/tui/confirm"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/keys"
)

// ErrNoDecision is returned by Prompt when the screen was closed without a
// confirmed choice.
var ErrNoDecision = errors.New("no version decision was made")

// Prompt shows the decision screen inline on out (a terminal), reading keys
// from in, and returns the confirmed choice; ErrNoDecision when the user
// closed it. It is what `flowrun apply` asks with when it finds a blocked
// run on a terminal.
func Prompt(ctx context.Context, p *interp.DecisionPlan, in io.Reader, out io.Writer, noColor bool) (interp.Choice, error) {
	disp := display.New(out, noColor, clock.Real{})
	pm := &promptModel{disp: disp, m: New(disp, keys.Default(), p)}
	prog := tea.NewProgram(pm, tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx))
	if _, err := prog.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("version decision: %w", ctx.Err())
		}
		return "", fmt.Errorf("version decision: %w", err)
	}
	if pm.choice == "" {
		return "", ErrNoDecision
	}
	return pm.choice, nil
}

// promptModel is the decision screen with its confirm step, as a program
// of its own.
type promptModel struct {
	disp   *display.Display
	m      Model
	ask    *confirm.Model
	choice interp.Choice
	done   bool
}

func (p *promptModel) Init() tea.Cmd { return nil }

func (p *promptModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.disp.Width, p.disp.Height = msg.Width, msg.Height
		p.m.SetHeight(min(msg.Height, 30))
		return p, nil
	case tea.KeyMsg:
		if msg.Type == tea.KeyCtrlC {
			p.done = true
			return p, tea.Quit
		}
	case ChooseMsg:
		c := confirm.New(p.disp, keys.Default(), fmt.Sprintf("Decide %q for run %s?", msg.Choice, msg.RunID),
			Describe(msg.Choice, p.m.plan), msg.Choice)
		p.ask = &c
		return p, nil
	case CloseMsg:
		p.done = true
		return p, tea.Quit
	case confirm.DoneMsg:
		p.ask = nil
		if msg.Confirmed {
			p.choice = msg.Action.(interp.Choice)
			p.done = true
			return p, tea.Quit
		}
		return p, nil
	}
	var cmd tea.Cmd
	if p.ask != nil {
		var a confirm.Model
		a, cmd = p.ask.Update(msg)
		p.ask = &a
		return p, cmd
	}
	p.m, cmd = p.m.Update(msg)
	return p, cmd
}

func (p *promptModel) View() string {
	if p.done {
		return ""
	}
	if p.ask != nil {
		return p.ask.View() + "\n"
	}
	return p.m.View() + "\n"
}

// Describe says what a choice will do to the run, for the confirm dialog.
func Describe(c interp.Choice, p *interp.DecisionPlan) string {
	switch c {
	case interp.ChoiceOld:
		return fmt.Sprintf("The run resumes on version %s, the graph it is bound to; version %s is used by new runs only.", p.From, p.To)
	case interp.ChoiceNew:
		return fmt.Sprintf("The run is canceled and a fresh run of version %s starts with the same inputs.", p.To)
	case interp.ChoiceMigrate:
		return fmt.Sprintf("The run moves to version %s. Kept: %s. Re-run: %s. Steps that had not finished run as usual.",
			p.To, listOr(p.Keep, "none"), listOr(p.Rerun, "none"))
	}
	return string(c)
}
