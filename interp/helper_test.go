package interp

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// bundle is one test's engine on a fresh SQLite file and a fake clock.
type bundle struct {
	t   *testing.T
	ctx context.Context
	st  *sqlite.Store
	clk *clock.Fake
	e   *Engine
	env map[string]string
}

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func setup(t *testing.T, opts ...func(*Options)) *bundle {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "flowrun.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	b := &bundle{t: t, ctx: ctx, st: st, clk: clock.NewFake(t0), env: map[string]string{}}
	o := Options{
		Clock:    b.clk,
		Owner:    store.Owner{Host: "testhost", PID: 1, Worker: "t"},
		Getenv:   func(k string) string { return b.env[k] },
		Rand:     rand.New(rand.NewPCG(1, 2)),
		ParkWait: -1,
	}
	for _, f := range opts {
		f(&o)
	}
	b.e = New(st, o)
	return b
}

// compile compiles HCL source and stores every workflow in it.
func (b *bundle) compile(src string) []*graph.Graph {
	b.t.Helper()
	m, diags := lang.LoadFile("test.hcl", []byte(src))
	if diags.HasErrors() {
		b.t.Fatalf("compile: %s", diags.Error())
	}
	var gs []*graph.Graph
	for _, w := range m.Workflows {
		if _, err := b.e.StoreGraph(b.ctx, w.Graph); err != nil {
			b.t.Fatalf("store graph: %v", err)
		}
		gs = append(gs, w.Graph)
	}
	return gs
}

// start starts a run of the workflow.
func (b *bundle) start(workflow string, inputs map[string]any) store.Run {
	b.t.Helper()
	run, _, err := b.e.StartRun(b.ctx, StartParams{Workflow: workflow, Inputs: inputs, New: true})
	if err != nil {
		b.t.Fatalf("start run: %v", err)
	}
	return run
}

// drive drives the run and returns it.
func (b *bundle) drive(id string) store.Run {
	b.t.Helper()
	run, err := b.e.Drive(b.ctx, id)
	if err != nil {
		b.t.Fatalf("drive: %v", err)
	}
	return run
}

// driveAdvancing drives run id in a goroutine and, each time ready says
// the running action has reached the point the test waits for, advances
// clk by step, until the run returns (at most 20 s of real time): how a
// test lets a timeout on a fake clock fire while a real program runs.
func (b *bundle) driveAdvancing(id string, clk *clock.Fake, step time.Duration, ready func() bool) store.Run {
	b.t.Helper()
	done := make(chan store.Run)
	go func() {
		r, _ := b.e.Drive(b.ctx, id)
		done <- r
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case final := <-done:
			return final
		default:
		}
		if time.Now().After(deadline) {
			b.t.Fatal("the run did not return within 20 s")
		}
		if ready() {
			clk.Advance(step)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// run compiles, starts and drives the first workflow of src.
func (b *bundle) run(src string, inputs map[string]any) store.Run {
	b.t.Helper()
	gs := b.compile(src)
	run := b.start(gs[0].Workflow, inputs)
	return b.drive(run.ID)
}

func (b *bundle) show(id string) *RunView {
	b.t.Helper()
	v, err := b.e.Show(b.ctx, id)
	if err != nil {
		b.t.Fatalf("show: %v", err)
	}
	return v
}

func (b *bundle) events(id string) []store.Event {
	b.t.Helper()
	evs, err := b.st.EventList(b.ctx, store.EventListParams{RunID: id})
	if err != nil {
		b.t.Fatalf("events: %v", err)
	}
	return evs
}

func (b *bundle) eventKinds(id string) string {
	var ks []string
	for _, e := range b.events(id) {
		k := e.Kind
		if e.StepKey != "" {
			k += ":" + e.StepKey
		}
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

func (b *bundle) attempts(id, key string) []store.Attempt {
	b.t.Helper()
	as, err := b.st.AttemptList(b.ctx, id, key)
	if err != nil {
		b.t.Fatalf("attempts: %v", err)
	}
	return as
}

func wantStatus(t *testing.T, run store.Run, want store.RunStatus) {
	t.Helper()
	if run.Status != want {
		t.Fatalf("run status = %s, want %s (error %s)", run.Status, want, run.Error)
	}
}

// jsonOf decodes raw JSON for comparisons.
func jsonOf(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// canon re-encodes JSON so that key order and spacing do not matter.
func canon(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	return string(mustJSON(jsonOf(t, raw)))
}

func wantJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	if g, w := canon(t, got), canon(t, json.RawMessage(want)); g != w {
		t.Fatalf("%s = %s, want %s", what, g, w)
	}
}

func errKind(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	m, _ := jsonOf(t, raw).(map[string]any)
	k, _ := m["kind"].(string)
	return k
}

// compileAt compiles src and stores its workflows recording dir as the
// directory they were applied from.
func (b *bundle) compileAt(src, dir string) []*graph.Graph {
	b.t.Helper()
	m, diags := lang.LoadFile("test.hcl", []byte(src))
	if diags.HasErrors() {
		b.t.Fatalf("compile: %s", diags.Error())
	}
	var gs []*graph.Graph
	for _, w := range m.Workflows {
		if _, err := b.e.StoreGraphAt(b.ctx, w.Graph, dir); err != nil {
			b.t.Fatalf("store graph: %v", err)
		}
		gs = append(gs, w.Graph)
	}
	return gs
}

// startKey starts a run of the workflow as apply does (a run with the key
// is continued), with no directory of its own.
func (b *bundle) startKey(workflow string, inputs map[string]any) store.Run {
	b.t.Helper()
	run, _, err := b.e.StartRun(b.ctx, StartParams{Workflow: workflow, Inputs: inputs})
	if err != nil {
		b.t.Fatalf("start run: %v", err)
	}
	return run
}
