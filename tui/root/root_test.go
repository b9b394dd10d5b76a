package root

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/internal/fixture"
)

const hello = `
workflow "hello" {
  version = "1.0.0"
  step "greeting" {
    set {
      text = "hello"
    }
  }
  step "say" {
    exec {
      command = ["echo", "{{ steps.greeting.output.text }}"]
    }
  }
}
`

// world is a store with a completed run, a run parked on a signal and a
// pending one.
type world struct {
	b                    *fixture.Bundle
	hello, waiting, todo store.Run
}

func newWorld(t *testing.T) *world {
	t.Helper()
	b := fixture.New(t)
	b.StoreHCL(t, hello)
	b.StoreHCL(t, fixture.Approve)
	w := &world{b: b}
	w.hello = b.Drive(t, b.Start(t, "hello", nil).ID)
	b.Clock.Advance(time.Second)
	w.waiting = b.Drive(t, b.Start(t, "approve", map[string]any{"id": "A-1"}).ID)
	b.Clock.Advance(time.Second)
	w.todo = b.Start(t, "approve", map[string]any{"id": "B-2"})
	if w.hello.Status != store.RunCompleted || w.waiting.Status != store.RunWaiting {
		t.Fatalf("setup: hello %s, approve %s", w.hello.Status, w.waiting.Status)
	}
	return w
}

// newRoot returns a loaded root at 80x24, plain, on the world's clock.
func newRoot(t *testing.T, src *feed.Source, clk *fixture.Bundle) Model {
	t.Helper()
	disp := display.New(&bytes.Buffer{}, true, clk.Clock)
	m := New(context.Background(), src, disp, Options{Title: "test.db", NoTicks: true})
	m = send(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	return settle(t, m, m.Init())
}

// send updates the model with msg and runs the commands that follow, as
// the program would, until none is left.
func send(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	next, cmd := m.Update(msg)
	return settle(t, next.(Model), cmd)
}

func settle(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for n := 0; len(queue) > 0; n++ {
		if n > 1000 {
			t.Fatal("commands do not settle")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil, tea.QuitMsg:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			if seq := sequence(msg); seq != nil {
				queue = append(queue, seq...) // in order: each runs to its message before the next
				continue
			}
			next, more := m.Update(msg)
			m = next.(Model)
			queue = append(queue, more)
		}
	}
	return m
}

// sequence returns the commands of a tea.Sequence's message (its type is
// bubbletea's own), or nil.
func sequence(msg tea.Msg) []tea.Cmd {
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeOf(tea.Cmd(nil)) {
		return nil
	}
	cmds := make([]tea.Cmd, v.Len())
	for i := range cmds {
		cmds[i] = v.Index(i).Interface().(tea.Cmd)
	}
	return cmds
}

func press(t *testing.T, m Model, ks ...string) Model {
	t.Helper()
	for _, k := range ks {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "backspace":
			msg = tea.KeyMsg{Type: tea.KeyBackspace}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		m = send(t, m, msg)
	}
	return m
}

// flat joins the words of a screen with single spaces, so a message
// wrapped over lines still matches.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestMain(m *testing.M) {
	time.Local = time.UTC // goldens show times in UTC whatever the machine's zone
	m.Run()
}

func checkSize(t *testing.T, view string) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != 24 {
		t.Errorf("view has %d lines, want 24:\n%s", len(lines), view)
	}
	for i, l := range lines {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line %d is %d cells wide: %q", i, w, l)
		}
	}
}

func TestRunsListGolden(t *testing.T) {
	w := newWorld(t)
	m := newRoot(t, feed.Local(w.b.Engine, ""), w.b)
	v := m.View()
	checkSize(t, v)
	golden.RequireEqual(t, []byte(v))

	// Every run id shown is a prefix the CLI resolves (store.RunFind, as
	// `flowrun show PREFIX` does) to the run of its row.
	all, err := w.b.Store.RunList(context.Background(), store.RunListParams{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(v, "\n")
	for i, r := range all {
		f := strings.Fields(lines[3+i])
		if len(f) > 1 && f[1] == string(r.Status) {
			f = f[1:] // the status word beside the icon
		}
		if len(f) < 3 || f[2] != r.Workflow {
			t.Fatalf("row %d is %q, want run %s of %s", i, lines[3+i], r.ID, r.Workflow)
		}
		got, err := w.b.Store.RunFind(context.Background(), f[1])
		if err != nil || got.ID != r.ID || !strings.HasPrefix(r.ID, f[1]) {
			t.Fatalf("row %d shows %q, which resolves to %q (%v), want run %s", i, f[1], got.ID, err, r.ID)
		}
	}
}

func TestOpenRunGolden(t *testing.T) {
	w := newWorld(t)
	m := newRoot(t, feed.Local(w.b.Engine, ""), w.b)
	m = press(t, m, "j", "enter") // the second newest run: the waiting one
	if m.run.RunID() != w.waiting.ID {
		t.Fatalf("opened %q, want the waiting run %s", m.run.RunID(), w.waiting.ID)
	}
	v := m.View()
	checkSize(t, v)
	for _, want := range []string{"version 1.0.0 (bound)", "◷ approval", "signal approval", "· ship", "✓ prepare"} {
		if !strings.Contains(v, want) {
			t.Errorf("run view lacks %q:\n%s", want, v)
		}
	}
	golden.RequireEqual(t, []byte(v))

	m = press(t, m, "j", "enter") // the step approval
	v = m.View()
	checkSize(t, v)
	for _, want := range []string{"step approval", "EVENTS", "step_started"} {
		if !strings.Contains(v, want) {
			t.Errorf("step view lacks %q:\n%s", want, v)
		}
	}
}

func TestSignalWithPayload(t *testing.T) {
	w := newWorld(t)
	src := feed.Local(w.b.Engine, "")
	m := newRoot(t, src, w.b)
	m = press(t, m, "j", "enter", "s")
	if m.signal == nil {
		t.Fatalf("s did not open the signal prompt:\n%s", m.View())
	}
	m = press(t, m, `{"ok": tru`, "enter")
	v := m.View()
	checkSize(t, v)
	if !strings.Contains(v, "not valid JSON") || m.signal == nil {
		t.Fatalf("a malformed payload was not explained in the prompt:\n%s", v)
	}
	m = press(t, m, "e}", "enter")
	if m.confirm == nil {
		t.Fatalf("a valid payload did not ask for confirmation:\n%s", m.View())
	}
	m = press(t, m, "y")
	// flowtui runs nothing itself: with no worker to claim the run, it
	// says what goes on with it.
	if v := flat(m.View()); !strings.Contains(v, "Signal approval sent") ||
		!strings.Contains(v, "No live worker runs it: continue it with flowrun resume "+w.waiting.ID+".") {
		t.Fatalf("no confirmation of the signal, or not what runs it:\n%s", m.View())
	}
	sigs, err := w.b.Store.SignalList(context.Background(), w.waiting.ID, true)
	if err != nil || len(sigs) != 1 || string(sigs[0].Payload) != `{"ok":true}` {
		t.Fatalf("signals %+v, %v; want one approval with {\"ok\":true}", sigs, err)
	}
	// With a live worker registered, that is left to it.
	if err := w.b.Store.WorkerBeat(context.Background(), store.WorkerBeatParams{Info: store.WorkerInfo{ID: "host/1/w1", Host: "host", PID: 1},
		Now: w.b.Clock.Now(), TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	m = press(t, m, "s", "enter", "y")
	if v := flat(m.View()); !strings.Contains(v, "Signal approval sent") || strings.Contains(v, "No live worker") {
		t.Fatalf("a signal with a live worker registered:\n%s", m.View())
	}

	// The run goes on in "another process"; a poll shows it finished.
	w.b.Drive(t, w.waiting.ID)
	m = send(t, m, PollMsg{})
	v = m.View()
	if !strings.Contains(v, "✓ completed") || !strings.Contains(v, "✓ ship") {
		t.Fatalf("the run view did not follow the run to its end:\n%s", v)
	}
}

func TestCancelConfirmed(t *testing.T) {
	w := newWorld(t)
	src := feed.Local(w.b.Engine, "")
	m := newRoot(t, src, w.b)
	if r, _ := m.runs.Selected(); r.ID != w.todo.ID {
		t.Fatalf("selected %s, want the newest run %s", r.ID, w.todo.ID)
	}
	m = press(t, m, "c", "n")
	if r, _ := w.b.Store.RunGet(context.Background(), w.todo.ID); r.Status == store.RunCanceled {
		t.Fatal("n canceled the run")
	}
	m = press(t, m, "c", "y")
	r, err := w.b.Store.RunGet(context.Background(), w.todo.ID)
	if err != nil || r.Status != store.RunCanceled {
		t.Fatalf("run %s after cancel: %s, %v", w.todo.ID, r.Status, err)
	}
	m = send(t, m, PollMsg{})
	if got, _ := m.runs.Selected(); got.Status != store.RunCanceled {
		t.Fatalf("the list shows %s after a poll, want canceled", got.Status)
	}
	// A second cancel of the finished run is explained, not attempted.
	m = press(t, m, "c")
	if m.confirm != nil || !strings.Contains(m.View(), "nothing to cancel") {
		t.Fatalf("cancel of a canceled run:\n%s", m.View())
	}
}

func TestDecideNeedsBlockedRun(t *testing.T) {
	w := newWorld(t)
	m := newRoot(t, feed.Local(w.b.Engine, ""), w.b)
	m = press(t, m, "d")
	if m.decide != nil || !strings.Contains(flat(m.View()), `takes no version decision: no newer MAJOR version of "approve" than 1.0.0 is stored`) {
		t.Fatalf("decide on a pending run:\n%s", m.View())
	}
	// A run that ended is said to have ended, once, as resume --choose
	// says it, not "is completed and takes no version decision: run ...
	// is completed; ...".
	m = press(t, m, "G", "d")
	v := flat(m.View())
	if m.decide != nil || !strings.Contains(v, "Run "+w.hello.ID+" already ended (completed); it takes no version decision.") || strings.Count(v, w.hello.ID) != 1 {
		t.Fatalf("decide on a completed run:\n%s", m.View())
	}
}

func TestTooSmall(t *testing.T) {
	w := newWorld(t)
	m := newRoot(t, feed.Local(w.b.Engine, ""), w.b)
	m = send(t, m, tea.WindowSizeMsg{Width: 40, Height: 10})
	v := m.View()
	if !strings.Contains(flat(v), "needs at least 60x16") {
		t.Fatalf("too small:\n%s", v)
	}
	if n := len(strings.Split(v, "\n")); n != 10 {
		t.Fatalf("too-small view has %d lines, want 10", n)
	}
	m = send(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	checkSize(t, m.View())
}

// failing is a store whose reads fail, as a database that went away.
type failing struct{ store.Store }

var errGone = errors.New("disk I/O error")

func (failing) EventList(context.Context, store.EventListParams) ([]store.Event, error) {
	return nil, errGone
}

func TestStoreErrorShown(t *testing.T) {
	w := newWorld(t)
	m := newRoot(t, feed.Local(interp.New(failing{w.b.Store}, interp.Options{Clock: w.b.Clock}), ""), w.b)
	v := m.View()
	checkSize(t, v)
	if !strings.Contains(v, "Cannot read the database") || !strings.Contains(v, "disk I/O error") {
		t.Fatalf("store error:\n%s", v)
	}
}

// TestPollOnCommit: on SQLite (Linux), the poll timer ends at a commit by
// another handle on the file, once feed.MinPollGap has passed, without
// waiting for feed.PollInterval on the (frozen) clock.
func TestPollOnCommit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the SQLite store watches its log with inotify (Linux)")
	}
	w := newWorld(t)
	b := w.b
	// The store's first wait only starts watching and returns at once.
	if err := b.Store.WaitForWork(context.Background()); err != nil {
		t.Fatal(err)
	}
	cmd := waitPoll(context.Background(), b.Clock, feed.Local(b.Engine, ""), 0)
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	deadline := time.Now().Add(30 * time.Second) // safety net only
	for b.Clock.Pending() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the poll never set its timers")
		}
		time.Sleep(time.Millisecond)
	}
	b.Clock.Advance(feed.MinPollGap)
	other, err := sqlite.Open(context.Background(), b.Store.Path(), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Commit until the wait ends (the first commit may come before the
	// command listens; the store keeps no event from before that).
	for {
		select {
		case msg := <-got:
			if _, ok := msg.(PollMsg); !ok {
				t.Fatalf("the poll command returned %#v, want PollMsg", msg)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := other.RunInsert(context.Background(), store.RunInsertParams{ID: fmt.Sprintf("other-%d", time.Now().UnixNano()),
			Workflow: "hello", Version: "1.0.0", GraphHash: "h", Now: b.Clock.Now()}); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("a commit by another handle did not end the poll wait")
		}
	}
}

// TestSignalFromList: s on a waiting run's row of the list opens the prompt
// knowing what the run waits for, as s in the run's view does. The list's
// rows come from run summaries, which carry no wait reason; the prompt
// used to say that no step waits and leave the name empty.
func TestSignalFromList(t *testing.T) {
	w := newWorld(t)
	src := feed.Local(w.b.Engine, "")
	m := newRoot(t, src, w.b)
	m = press(t, m, "j") // the waiting run, as loaded: no poll has refreshed it
	if r, _ := m.runs.Selected(); r.ID != w.waiting.ID {
		t.Fatalf("selected %s, want the waiting run %s", r.ID, w.waiting.ID)
	}
	m = press(t, m, "s")
	if m.screen != screenRuns {
		t.Fatalf("s left the runs list (screen %d)", m.screen)
	}
	if m.signal == nil {
		t.Fatalf("s did not open the signal prompt:\n%s", m.View())
	}
	v := flat(m.View())
	if !strings.Contains(v, "The run waits for: approval") || strings.Contains(v, "No step of this run is waiting") {
		t.Fatalf("the prompt from the list does not say what the run waits for:\n%s", m.View())
	}
	// The name is filled in: enter goes straight to the confirmation.
	m = press(t, m, "enter")
	if m.confirm == nil || !strings.Contains(flat(m.View()), "Send signal approval?") {
		t.Fatalf("the name was not filled in with approval:\n%s", m.View())
	}
	m = press(t, m, "y")
	sigs, err := w.b.Store.SignalList(context.Background(), w.waiting.ID, true)
	if err != nil || len(sigs) != 1 || sigs[0].Name != "approval" {
		t.Fatalf("signals %+v, %v; want one approval", sigs, err)
	}

	// On the pending run (nothing waits yet, its wait step still to
	// come), the prompt names the signal its wait step will take, as the
	// run's view does.
	m = press(t, m, "k")
	if r, _ := m.runs.Selected(); r.ID != w.todo.ID {
		t.Fatalf("selected %s, want the pending run %s", r.ID, w.todo.ID)
	}
	m = press(t, m, "s")
	if m.signal == nil || !strings.Contains(flat(m.View()), "The run waits for: approval") {
		t.Fatalf("the prompt for the pending run:\n%s", m.View())
	}
	m = press(t, m, "esc")
	if m.signal != nil {
		t.Fatal("esc did not close the prompt")
	}

	// A run that ended takes no signal; the list says so without a prompt.
	m = press(t, m, "j", "j")
	if r, _ := m.runs.Selected(); r.ID != w.hello.ID {
		t.Fatalf("selected %s, want the completed run %s", r.ID, w.hello.ID)
	}
	m = press(t, m, "s")
	if m.signal != nil || !strings.Contains(flat(m.View()), "takes no more signals") {
		t.Fatalf("s on a completed run:\n%s", m.View())
	}
}

// hostileHCL fails a step whose stderr erases its line and returns the
// cursor, so that on a terminal "fake" would read "all good"; its run key
// holds a right-to-left override.
const hostileHCL = `
workflow "hostile" {
  version = "1.0.0"
  input "id" { type = string }
  key = "input.id"
  step "boom" {
    exec {
      command = ["sh", "-c", "printf 'fake\\033[2K\\rall good' >&2; exit 4"]
    }
  }
}
`

// TestStoredTextEscaped: the runs list, the run view and the step view of
// a real run draw what the program wrote with its control characters
// escaped (the views are plain here, so any ESC would be the program's).
func TestStoredTextEscaped(t *testing.T) {
	b := fixture.New(t)
	b.StoreHCL(t, hostileHCL)
	run := b.Drive(t, b.Start(t, "hostile", map[string]any{"id": "K\u202e1"}).ID)
	if run.Status != store.RunFailed {
		t.Fatalf("setup: the run is %s", run.Status)
	}
	m := newRoot(t, feed.Local(b.Engine, ""), b)
	views := map[string]string{"list": m.View()}
	m = press(t, m, "enter")
	views["run"] = m.View()
	m = press(t, m, "enter") // the step boom
	views["step"] = m.View()
	for name, want := range map[string]string{
		"list": `K\u202e1`,
		"run":  `error: exec: command "sh" exited with status 4: fake\x1b[2K\rall good`,
		"step": `fake\x1b[2K\rall good`,
	} {
		v := views[name]
		checkSize(t, v)
		if !strings.Contains(v, want) {
			t.Errorf("the %s view lacks %q:\n%s", name, want, v)
		}
		if strings.ContainsAny(v, "\x1b\r\u202e") {
			t.Errorf("the %s view holds raw control characters:\n%q", name, v)
		}
	}
}
