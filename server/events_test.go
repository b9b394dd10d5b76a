package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// sse is one event of a stream.
type sse struct {
	id, event, data string
}

// stream opens GET /v1/runs/{id}/events and sends its events on the
// channel, which is closed when the stream ends.
func (a *testAPI) stream(runID, query string, header map[string]string) (<-chan sse, func()) {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.hs.URL+"/v1/runs/"+runID+"/events"+query, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.tokens[store.ScopeRead])
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := a.hs.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		a.t.Fatalf("events: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	ch := make(chan sse, 100)
	go func() { // ends when the body does
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.data != "" {
					ch <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return ch, func() { resp.Body.Close() }
}

// next waits for the next event (10s at most: a hung stream fails).
func next(t *testing.T, ch <-chan sse) (sse, bool) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return sse{}, false
}

// checkEvent checks an event's data against the Event schema and returns
// it decoded.
func checkEvent(t *testing.T, ev sse) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(ev.data), &v); err != nil {
		t.Fatalf("event data is not JSON: %v: %s", err, ev.data)
	}
	if err := doc(t).Components.Schemas["Event"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Fatalf("event data does not match the Event schema: %v\n%s", err, ev.data)
	}
	if id := strconv.FormatInt(int64(v["id"].(float64)), 10); id != ev.id || v["kind"] != ev.event {
		t.Fatalf("event id %s / kind %s, but the data says %v / %v", ev.id, ev.event, v["id"], v["kind"])
	}
	return v
}

func realClock(o *Options) { o.Clock = clock.Real{} }

// TestEventsLive follows a run from its start to its end: the events
// stored before the stream opened, those committed while it is open (a
// signal from elsewhere), then "end".
func TestEventsLive(t *testing.T) {
	a := newAPI(t, realClock)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	ch, closeStream := a.stream(id, "", nil)
	defer closeStream()
	var kinds []string
	var last sse
	for {
		ev, ok := next(t, ch)
		if !ok {
			t.Fatal("the stream ended while the run waits")
		}
		checkEvent(t, ev)
		kinds = append(kinds, ev.event)
		last = ev
		if ev.event == "parked" || ev.event == "run_parked" || strings.Contains(ev.data, `"waiting"`) {
			break
		}
		if len(kinds) > 50 {
			t.Fatalf("no park event in %v", kinds)
		}
	}
	if kinds[0] != "run_created" {
		t.Fatalf("first event %s, want run_created", kinds[0])
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{"who": "sse"}`).want(t, http.StatusAccepted)
	a.drive(id)
	for {
		ev, ok := next(t, ch)
		if !ok {
			t.Fatal("the stream ended without an end event")
		}
		if ev.event == "end" {
			if ev.id != "" || !strings.Contains(ev.data, `"status":"completed"`) {
				t.Fatalf("end event %+v", ev)
			}
			break
		}
		v := checkEvent(t, ev)
		if n, _ := strconv.ParseInt(ev.id, 10, 64); n <= mustInt(t, last.id) {
			t.Fatalf("event id %s after %s", ev.id, last.id)
		}
		last = ev
		_ = v
	}
	if _, ok := next(t, ch); ok {
		t.Fatal("an event after end")
	}
	// Resuming after the last run event gives only the end.
	ch2, close2 := a.stream(id, "", map[string]string{"Last-Event-ID": last.id})
	defer close2()
	if ev, _ := next(t, ch2); ev.event != "end" {
		t.Fatalf("resumed after the last event: got %+v, want end", ev)
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("event id %q: %v", s, err)
	}
	return n
}

// TestEventsResume: Last-Event-ID (or ?after=) resumes after that event.
func TestEventsResume(t *testing.T) {
	a := newAPI(t, realClock)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	evs, err := a.st.EventList(a.ctx, store.EventListParams{RunID: id})
	if err != nil || len(evs) < 3 {
		t.Fatalf("events: %v, %v", evs, err)
	}
	from := strconv.FormatInt(evs[1].ID, 10)
	for _, h := range []map[string]string{{"Last-Event-ID": from}, nil} {
		q := ""
		if h == nil {
			q = "?after=" + from
		}
		ch, closeStream := a.stream(id, q, h)
		ev, _ := next(t, ch)
		closeStream()
		if ev.id != strconv.FormatInt(evs[2].ID, 10) {
			t.Fatalf("resumed after %s: first event %s, want %d", from, ev.id, evs[2].ID)
		}
	}
	a.do(store.ScopeRead, http.MethodGet, "/v1/runs/"+id+"/events?after=x", "").problem(t, http.StatusBadRequest, `after "x" is not an event id`)
	a.do(store.ScopeRead, http.MethodGet, "/v1/runs/"+id+"/events?since=1", "").problem(t, http.StatusBadRequest, `unknown query parameter "since"`)
}

// TestEventsEndOnStop: CloseStreams (a graceful stop) ends an open stream
// without an end event, so the client resumes elsewhere.
func TestEventsEndOnStop(t *testing.T) {
	a := newAPI(t, realClock)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	ch, closeStream := a.stream(id, "", nil)
	defer closeStream()
	for {
		ev, ok := next(t, ch)
		if !ok {
			t.Fatal("the stream ended before the stop")
		}
		if ev.event == "run_parked" || strings.Contains(ev.data, `"waiting"`) {
			break
		}
	}
	a.srv.CloseStreams()
	for {
		ev, ok := next(t, ch)
		if !ok {
			break
		}
		if ev.event == "end" {
			t.Fatalf("a stream ended by a stop sent %+v", ev)
		}
	}
}

// TestEventsManyFollowers: every follower of a run gets its events to the
// end; the store is watched once for all of them (Server.follow), and not
// at all once they are gone.
func TestEventsManyFollowers(t *testing.T) {
	a := newAPI(t, realClock)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	const n = 40
	chans := make([]<-chan sse, n)
	for i := range chans {
		ch, closeStream := a.stream(id, "", nil)
		defer closeStream()
		chans[i] = ch
	}
	if users := a.srv.Door().CommitWaiters(); users < 1 {
		t.Fatalf("followers open, but the watch has %d users", a.srv.Door().CommitWaiters())
	}
	a.do(store.ScopeWrite, http.MethodPost, "/v1/runs/"+id+"/signals/go", `{}`).want(t, http.StatusAccepted)
	a.drive(id)
	for i, ch := range chans {
		var last sse
		for ev := range ch {
			last = ev
		}
		if last.event != "end" {
			t.Fatalf("follower %d ended on %+v, want end", i, last)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		users := a.srv.Door().CommitWaiters()
		if users == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("every stream ended, but the watch still has %d users", users)
		}
	}
}

// TestEventsEndWhenTokenRevoked: revoking the token of an open stream
// ends it (an error event saying why) within tokenRecheck; before, it kept
// delivering.
func TestEventsEndWhenTokenRevoked(t *testing.T) {
	a := newAPI(t, realClock)
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	ch, closeStream := a.stream(id, "", nil)
	defer closeStream()
	for {
		ev, ok := next(t, ch)
		if !ok {
			t.Fatal("the stream ended before the revocation")
		}
		if ev.event == "run_parked" || strings.Contains(ev.data, `"waiting"`) {
			break
		}
	}
	toks, err := a.st.TokenList(a.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if tk.Scope == store.ScopeRead {
			if _, err := a.st.TokenRevoke(a.ctx, tk.Name); err != nil {
				t.Fatal(err)
			}
		}
	}
	for {
		ev, ok := next(t, ch)
		if !ok {
			t.Fatal("the stream ended without saying why")
		}
		if ev.event == "error" {
			if !strings.Contains(ev.data, "revoked") {
				t.Fatalf("the stream ended with %+v", ev)
			}
			return
		}
	}
}
