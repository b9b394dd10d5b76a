// Package progress is the live view `flowrun apply` shows inline on a
// terminal while it drives a run: a spinner with the run's status, a line per
// active step (attempt, duration, what it waits for, retry and timer
// countdowns) with the last lines of output of each running exec step, and
// a progress bar of steps done over steps total. It follows
// the store like flowtui does, through the events appended since the last it
// saw, so it shows what any process does to the run. It reads through the
// engine that drives the run, so the run's graph is the one the drive
// loaded (the engine's graph cache), not a second copy.
//
// progress must not drive or change the run, read the keyboard or handle
// signals: the CLI drives the run and owns Ctrl-C; it tells the view to
// finish by canceling the context given to Run.
package progress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/theme"
)

// Interval is how often the view reads the store.
const Interval = 100 * time.Millisecond

// Options configure Run.
type Options struct {
	// Engine is the engine driving the run: the view reads the store
	// through it, and the run's graph from its cache (the graph the drive
	// loaded), never writing.
	Engine *interp.Engine
	// RunID is the run to follow (a full id).
	RunID string
	// Out is the terminal written to.
	Out io.Writer
	// NoColor draws without colour (set it when NO_COLOR is set).
	NoColor bool
	// Clock measures durations and countdowns (default clock.Real).
	Clock clock.Clock
	// Width is the width to draw at before the terminal reports one
	// (default 80).
	Width int
	// Notices, when not nil, carries lines to show under the view until
	// the next one (such as "stopping: letting the actions in flight
	// finish"); the view does not close it.
	Notices <-chan string
}

// Run shows the live view on o.Out until ctx is canceled, then draws the
// run's state once more and returns. It reads no input and installs no
// signal handler. Call it in its own goroutine next to the engine's Drive
// and cancel ctx when Drive returns; wait for Run before printing more.
func Run(ctx context.Context, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	disp := display.New(o.Out, o.NoColor, o.Clock)
	if o.Width > 0 {
		disp.Width = o.Width
	}
	// The program's own context outlives ctx: ctx ending means "finish",
	// and the final frame must still be read and drawn.
	pctx, stop := context.WithCancel(context.Background())
	defer stop()
	m := New(pctx, feed.Local(o.Engine, ""), disp, o.RunID)
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(o.Out), tea.WithoutSignalHandler(), tea.WithContext(pctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // tells the program to finish when ctx ends, and passes notices; Run waits for it
		defer wg.Done()
		for {
			select {
			case n := <-o.Notices:
				p.Send(NoticeMsg(n))
				continue
			case <-ctx.Done():
				p.Send(FinishMsg{})
			case <-pctx.Done():
			}
			return
		}
	}()
	_, err := p.Run()
	stop()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("live progress: %w", err)
	}
	return nil
}

// FinishMsg makes the model read the store a last time, draw and quit.
type FinishMsg struct{}

// NoticeMsg is a line shown under the view until the next notice.
type NoticeMsg string

type polledMsg struct {
	ch    feed.Changes
	d     *feed.RunDetail
	lines []interp.OutputLine
	err   error
}

// TailLines is how many of its last output lines the view shows under a
// running step.
const TailLines = 3

type tickMsg struct{}

// Model is the inline view, usable as any tea.Model.
type Model struct {
	bg        context.Context
	src       *feed.Source
	disp      *display.Display
	runID     string
	cursor    int64
	d         *feed.RunDetail
	err       error
	frame     int
	polling   bool
	finishing bool
	done      bool
	noTicks   bool // tests drive ticks by hand
	notice    string
	// out reads the run's live output; one poll at a time uses it.
	out *interp.OutputFollower
	// tails are the last TailLines output lines of each step (by step
	// name), changed only by Update.
	tails map[string][]interp.OutputLine
}

// New returns the model following runID.
func New(bg context.Context, src *feed.Source, disp *display.Display, runID string) Model {
	m := Model{bg: bg, src: src, disp: disp, runID: runID, tails: map[string][]interp.OutputLine{}}
	if src != nil && src.Door != nil {
		m.out = interp.NewOutputFollower(src.Door, runID, nil)
	}
	return m
}

// readOutput reads the output lines stored since the last read (none
// without a follower).
func readOutput(ctx context.Context, out *interp.OutputFollower) ([]interp.OutputLine, error) {
	if out == nil {
		return nil, nil
	}
	return out.Next(ctx)
}

// Init reads the run in full.
func (m Model) Init() tea.Cmd { return tea.Batch(m.first(), m.tick()) }

func (m Model) first() tea.Cmd {
	bg, src, id, out := m.bg, m.src, m.runID, m.out
	return func() tea.Msg {
		// The cursor is read first, so nothing after the full read is missed.
		cur, err := src.LastEventID(bg)
		if err != nil {
			return polledMsg{err: err}
		}
		d, err := src.Detail(bg, id)
		if err != nil {
			return polledMsg{err: err}
		}
		lines, err := readOutput(bg, out)
		return polledMsg{ch: feed.Changes{Cursor: cur}, d: d, lines: lines, err: err}
	}
}

func (m Model) poll() tea.Cmd {
	bg, src, cur, id, out := m.bg, m.src, m.cursor, m.runID, m.out
	return func() tea.Msg {
		ch, err := src.Poll(bg, cur, feed.Watch{RunID: id})
		if err != nil {
			return polledMsg{ch: ch, d: ch.Open, err: err}
		}
		lines, err := readOutput(bg, out)
		return polledMsg{ch: ch, d: ch.Open, lines: lines, err: err}
	}
}

func (m Model) tick() tea.Cmd {
	if m.noTicks {
		return nil
	}
	bg, clk := m.bg, m.disp.Clock
	return func() tea.Msg {
		t := clk.NewTimer(Interval)
		defer t.Stop()
		select {
		case <-t.C():
			return tickMsg{}
		case <-bg.Done():
			return nil
		}
	}
}

// Update follows the store.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.disp.Width = msg.Width
	case tickMsg:
		m.frame++
		if m.polling || m.d == nil {
			return m, m.tick()
		}
		m.polling = true
		return m, tea.Batch(m.poll(), m.tick())
	case NoticeMsg:
		m.notice = string(msg)
	case FinishMsg:
		m.finishing = true
		if !m.polling {
			m.polling = true
			return m, m.poll()
		}
	case polledMsg:
		m.polling = false
		m.err = msg.err
		m.addTails(msg.lines)
		if msg.err == nil {
			if m.cursor < msg.ch.Cursor {
				m.cursor = msg.ch.Cursor
			}
			if msg.d != nil {
				m.d = msg.d
			}
		}
		if m.finishing {
			if msg.err == nil && msg.ch.More {
				m.polling = true
				return m, m.poll()
			}
			m.done = true
			return m, tea.Quit
		}
	}
	return m, nil
}

var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// View draws the run, its active steps and the bar.
func (m Model) View() string {
	st := m.disp.Styles
	w := max(20, m.disp.Width)
	if m.d == nil {
		if m.err != nil {
			return st.Error.Render(theme.Cut("Cannot read the run: "+termtext.Line(m.err.Error()), w)) + "\n"
		}
		return frames[0] + " starting…\n"
	}
	now := m.disp.Clock.Now()
	r := m.d.Run
	icon := frames[m.frame%len(frames)]
	if r.Status.Terminal() || m.done {
		icon = theme.Icon(string(r.Status))
	}
	head := fmt.Sprintf("%s %s %s · run %s · %s", icon, r.Workflow, m.d.Bound, r.ID, r.Status)
	if d := theme.Span(r.StartedAt, r.FinishedAt, now); d != "" {
		head += " · " + d
	}
	if r.WaitReason != "" && !r.Status.Terminal() {
		head += " · waiting on " + r.WaitReason
	}
	// Stored text (a key, a wait reason, a step's detail, an error) is
	// escaped for the terminal before it is styled and cut.
	lines := []string{st.StatusStyle(string(r.Status)).Render(theme.Cut(termtext.Line(head), w))}
	// The bar counts the steps that got done (completed or skipped): a
	// failed or canceled step is not progress, so a failed run's bar is
	// never full; they are counted beside it.
	done, failed, total := 0, 0, 0
	items := itemsOf(m.d.Steps)
	for _, s := range m.d.Steps {
		if s.Index >= 0 || s.Iteration >= 0 {
			continue
		}
		// A saga's rows are shown while they run (the controller says
		// what it compensates), but they are not steps of the graph.
		if store.GraphStep(s.Step) {
			total++
			switch s.Status {
			case store.StepCompleted, store.StepSkipped:
				done++
			case store.StepFailed, store.StepCanceled:
				failed++
			}
		}
		if s.Status != store.StepRunning && s.Status != store.StepWaiting {
			continue
		}
		line := fmt.Sprintf("  %s %-20s %s", theme.Icon(string(s.Status)), theme.Cut(s.Step, 20), s.Status)
		if s.Attempts > 1 {
			line += fmt.Sprintf(" · attempt %d", s.Attempts)
		}
		it := items[s.Step]
		if n, err := interp.ItemTotal(s, r.Inputs); err == nil && n > 0 {
			// Done over all the items, not over those started.
			line += fmt.Sprintf(" · items %d/%d", it.done, n)
			if it.failed > 0 {
				line += fmt.Sprintf(", %d failed", it.failed)
			}
		}
		if d := theme.Span(s.StartedAt, time.Time{}, now); d != "" {
			line += " · " + d
		}
		// The countdown goes before the detail, which can be long, so it
		// survives the cut at narrow widths.
		if !s.WakeAt.IsZero() {
			line += " · " + theme.Countdown(s.WakeAt, now)
		}
		if s.Detail != "" {
			line += " · " + s.Detail
		}
		lines = append(lines, theme.Cut(termtext.Line(line), w))
		if s.Status == store.StepRunning {
			for _, t := range m.tails[s.Step] {
				lines = append(lines, st.Faint.Render(theme.Cut(tailLine(s.Step, t), w)))
			}
		}
		// The error behind a retry: the step's, or its retrying items'.
		if s.Status == store.StepWaiting && strings.HasPrefix(s.Detail, "retry ") {
			if e := errorLine(s.Error); e != "" {
				lines = append(lines, st.Warning.Render(theme.Cut(termtext.Line("      last error: "+e), w)))
			}
		}
		for i, r := range it.retrying {
			if i == maxRetryLines {
				lines = append(lines, theme.Cut(fmt.Sprintf("      … %d more items retrying", len(it.retrying)-i), w))
				break
			}
			lines = append(lines, st.Warning.Render(theme.Cut(termtext.Line(fmt.Sprintf("      item %d %s · last error: %s", r.Index, r.Detail, errorLine(r.Error))), w)))
		}
	}
	if m.d.Graph != nil {
		total = max(total, len(m.d.Graph.Steps))
	}
	if m.err != nil {
		lines = append(lines, st.Warning.Render(theme.Cut("  cannot read the store: "+termtext.Line(m.err.Error())+" (retrying)", w)))
	}
	barW := max(10, min(40, w-20))
	summary := fmt.Sprintf(" %d/%d steps", done, total)
	if failed > 0 {
		summary += fmt.Sprintf(", %d failed or canceled", failed)
	}
	lines = append(lines, "  "+st.Bar(done, total, barW)+summary)
	if m.notice != "" {
		lines = append(lines, st.Warning.Render(theme.Cut("  "+termtext.Line(m.notice), w)))
	}
	return strings.Join(lines, "\n") + "\n"
}

// addTails keeps the last TailLines output lines of each step.
func (m *Model) addTails(lines []interp.OutputLine) {
	if m.tails == nil {
		m.tails = map[string][]interp.OutputLine{}
	}
	for _, l := range lines {
		step, _, _, ok := store.ParseStepKey(l.StepKey)
		if !ok {
			continue
		}
		t := append(m.tails[step], l)
		if len(t) > TailLines {
			t = append(t[:0:0], t[len(t)-TailLines:]...)
		}
		m.tails[step] = t
	}
}

// tailLine draws an output line under its step: the item or iteration key
// when it is not the step's own, stderr marked, the text escaped.
func tailLine(step string, l interp.OutputLine) string {
	head := "    │ "
	if l.StepKey != step {
		head += l.StepKey + " "
	}
	if l.Stream == store.StreamStderr {
		head += "stderr "
	}
	return head + termtext.Line(l.Text)
}

// maxRetryLines bounds the lines of retrying items a foreach step shows.
const maxRetryLines = 3

// itemCounts are a foreach step's items as their rows say: those ended
// (completed, failed, skipped or canceled), those failed, and those
// waiting to retry.
type itemCounts struct {
	done, failed int
	retrying     []store.Step
}

// itemsOf counts the item rows of each foreach step (index set, not an
// until iteration).
func itemsOf(steps []store.Step) map[string]itemCounts {
	out := map[string]itemCounts{}
	for _, s := range steps {
		if s.Index < 0 || s.Iteration >= 0 {
			continue
		}
		c := out[s.Step]
		switch {
		case s.Status.Terminal():
			c.done++
			if s.Status == store.StepFailed {
				c.failed++
			}
		case s.Status == store.StepWaiting && strings.HasPrefix(s.Detail, "retry ") && len(s.Error) > 0:
			c.retrying = append(c.retrying, s)
		}
		out[s.Step] = c
	}
	return out
}

// errorLine is a stored step error as one line: "kind: message".
func errorLine(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var e struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return string(raw)
	}
	if e.Kind == "" {
		return e.Message
	}
	return e.Kind + ": " + e.Message
}
