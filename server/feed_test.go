package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// countedEvents counts the event reads of the store.
type countedEvents struct {
	store.Store
	lists atomic.Int64
}

func (c *countedEvents) EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	c.lists.Add(1)
	return c.Store.EventList(ctx, p)
}

// newCountedAPI is newAPI whose server reads through a countedEvents.
func newCountedAPI(t *testing.T) (*testAPI, *countedEvents) {
	t.Helper()
	a := newAPI(t, realClock)
	c := &countedEvents{Store: a.st}
	a.eng = interp.New(c, interp.Options{Clock: clock.Real{}, Owner: store.Owner{Host: "testhost", PID: 1, Worker: "t"}, ParkWait: -1,
		Getenv: func(string) string { return "" }})
	a.srv = New(Options{Engine: a.eng, Clock: clock.Real{}})
	a.hs = httptest.NewServer(a.srv)
	t.Cleanup(a.hs.Close)
	t.Cleanup(a.srv.CloseStreams)
	return a, c
}

// readUntil reads a stream's events until one whose event or data holds
// what, and returns their ids in order.
func readUntil(t *testing.T, ch <-chan sse, what string) []string {
	t.Helper()
	var ids []string
	for {
		ev, ok := next(t, ch)
		if !ok {
			t.Fatalf("the stream ended before %q", what)
		}
		if ev.id != "" {
			ids = append(ids, ev.id)
		}
		if ev.event == what || strings.Contains(ev.data, what) || what == "parked" && (ev.event == "run_parked" || strings.Contains(ev.data, `"waiting"`)) {
			return ids
		}
	}
}

// TestEventsFanOut: many streams of one run share one reader of the
// store: after a signal, the events reach every stream in the same order
// while the store is read a few times, not once per stream.
func TestEventsFanOut(t *testing.T) {
	a, c := newCountedAPI(t)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	const streams = 20
	chans := make([]<-chan sse, streams)
	for i := range chans {
		ch, closeStream := a.stream(id, "", nil)
		defer closeStream()
		chans[i] = ch
		readUntil(t, ch, "parked")
	}
	before := c.lists.Load()
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{}`).want(t, http.StatusAccepted)
	a.drive(id)
	var first []string
	for i, ch := range chans {
		ids := readUntil(t, ch, "end")
		if i == 0 {
			first = ids
		} else if strings.Join(ids, ",") != strings.Join(first, ",") {
			t.Fatalf("stream %d got events %v, stream 0 %v", i, ids, first)
		}
	}
	if len(first) == 0 {
		t.Fatal("no event after the signal")
	}
	// one feed reads the store at each commit it is told of; a stream
	// reading for itself would make it at least one read per stream
	if n := c.lists.Load() - before; n >= streams/2 {
		t.Fatalf("the store's events were read %d times for %d streams of one run", n, streams)
	}
}

// TestEventsBehindWindow: a stream that starts behind what its run's feed
// holds reads the older events from the store, and gets every event in
// order, as one that started with the feed.
func TestEventsBehindWindow(t *testing.T) {
	old := feedWindow
	feedWindow = 2
	defer func() { feedWindow = old }()
	a := newAPI(t, realClock)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	ch1, close1 := a.stream(id, "", nil)
	defer close1()
	readUntil(t, ch1, "parked") // the feed holds only the last 2 events now
	ch2, close2 := a.stream(id, "", nil)
	defer close2()
	got2 := readUntil(t, ch2, "parked")
	evs, err := a.st.EventList(a.ctx, store.EventListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(got2) != len(evs) || len(evs) <= 2 {
		t.Fatalf("the late stream got %d events, the run has %d (want all, more than the window)", len(got2), len(evs))
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{}`).want(t, http.StatusAccepted)
	a.drive(id)
	if a, b := readUntil(t, ch1, "end"), readUntil(t, ch2, "end"); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatalf("after the signal the streams got %v and %v", a, b)
	}
}
