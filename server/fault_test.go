package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
)

// faultyStore is a SQLite store whose run listing, run lookups and
// readiness fail with err, as a damaged or unreachable database does. Its
// errors name the database file, as the backends' errors do.
type faultyStore struct {
	*sqlite.Store
	err error
}

func (f faultyStore) RunList(context.Context, store.RunListParams) ([]store.RunSummary, error) {
	return nil, f.err
}

func (f faultyStore) RunFind(context.Context, string) (store.Run, error) { return store.Run{}, f.err }
func (f faultyStore) Ready(context.Context) error                        { return f.err }

const secretPath = "/srv/private/flowrun-prod.db"

// TestServerErrorsHideTheStoreText: a 5xx answer carries neither the
// store's error text nor the database path; it gives a request id, which
// the server's log has with the detail.
func TestServerErrorsHideTheStoreText(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status int
		says   string
	}{
		{"internal", fmt.Errorf("listing runs: reading %s: disk I/O error", secretPath), http.StatusInternalServerError, "internal error"},
		{"busy", fmt.Errorf("listing runs: the database %s stayed locked: %w", secretPath, store.ErrBusy), http.StatusServiceUnavailable, store.ErrBusy.Error()},
		{"timeout", fmt.Errorf("listing runs: the database %s did not finish within the query timeout of 5s: %w", secretPath, store.ErrTimeout), http.StatusServiceUnavailable, store.ErrTimeout.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logged bytes.Buffer
			a := newAPIOver(t, func(st *sqlite.Store) store.Store { return faultyStore{st, c.err} }, func(o *Options) {
				o.Log = slog.New(slog.NewTextHandler(&logged, nil))
			})
			check := func(ans answer, status int, says string) {
				t.Helper()
				m := ans.problem(t, status, says)
				id, _ := m["request_id"].(string)
				if len(id) != 16 {
					t.Fatalf("the answer has no request id: %s", ans.body)
				}
				if got := ans.header.Get("X-Request-Id"); got != id {
					t.Errorf("X-Request-Id %q, want %q", got, id)
				}
				if !strings.Contains(m["detail"].(string), id) {
					t.Errorf("the detail does not give the request id: %q", m["detail"])
				}
				if bytes.Contains(ans.body, []byte("flowrun-prod")) || bytes.Contains(ans.body, []byte("locked")) || bytes.Contains(ans.body, []byte("I/O")) {
					t.Errorf("the answer carries the store's error text: %s", ans.body)
				}
				var line string
				for _, l := range strings.Split(logged.String(), "\n") {
					if strings.Contains(l, "request_id="+id) {
						line = l
					}
				}
				if !strings.Contains(line, secretPath) || !strings.Contains(line, "level=ERROR") {
					t.Errorf("the log has no error line with request id %s and the detail:\n%s", id, logged.String())
				}
			}
			ans := a.do(store.ScopeRead, http.MethodGet, "/v1/runs", "")
			check(ans, c.status, c.says)
			// A read stopped at the query timeout is worth asking again
			// later, not at once.
			if want := map[string]string{"busy": "1", "timeout": "5"}[c.name]; ans.header.Get("Retry-After") != want {
				t.Errorf("Retry-After %q, want %q", ans.header.Get("Retry-After"), want)
			}
			check(a.do(store.ScopeRead, http.MethodGet, "/v1/runs/01ABC", ""), c.status, c.says)
			check(a.do("", http.MethodGet, "/readyz", ""), http.StatusServiceUnavailable, "the store is not ready")
		})
	}
	// A client's own mistake still gets the whole message, and no id.
	a := newAPI(t)
	ans := a.do(store.ScopeRead, http.MethodGet, "/v1/runs?limit=x", "")
	if m := ans.problem(t, http.StatusBadRequest, `limit "x"`); m["request_id"] != nil {
		t.Errorf("a 400 answer has a request id: %s", ans.body)
	}
}

// failingEvents is a SQLite store whose EventList fails with err once fail
// is set.
type failingEvents struct {
	*sqlite.Store
	fail *atomic.Bool
	err  error
}

func (f failingEvents) EventList(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	if f.fail.Load() {
		return nil, f.err
	}
	return f.Store.EventList(ctx, p)
}

// TestEventStreamFaultHidesTheStoreText: an event stream that ends because
// the store failed ends with an error frame that gives a request id, not
// the store's text; the log has the detail under that id.
func TestEventStreamFaultHidesTheStoreText(t *testing.T) {
	var logged syncBuffer
	fail := &atomic.Bool{}
	a := newAPIOver(t, func(st *sqlite.Store) store.Store {
		return failingEvents{st, fail, fmt.Errorf("reading events: %s: disk I/O error", secretPath)}
	}, realClock, func(o *Options) { o.Log = slog.New(slog.NewTextHandler(&logged, nil)) })
	a.apply(shipV1)
	id := a.start("ship", `{"inputs": {"order": "A"}}`)
	a.drive(id)
	fail.Store(true)
	ch, closeStream := a.stream(id, "", nil)
	defer closeStream()
	ev, ok := next(t, ch)
	if !ok || ev.event != "error" {
		t.Fatalf("first frame %+v (open %v), want the error frame", ev, ok)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		t.Fatalf("error frame data %q: %v", ev.data, err)
	}
	msg := m["message"]
	_, rid, found := strings.Cut(msg, "request id ")
	if strings.Contains(ev.data, "flowrun-prod") || strings.Contains(ev.data, "I/O") || !found || len(rid) != 16 {
		t.Fatalf("the error frame says %q: want a request id and none of the store's text", msg)
	}
	if !strings.Contains(msg, "internal error") {
		t.Errorf("the error frame says %q, want the kind of fault (internal error)", msg)
	}
	if line := logged.line("request_id=" + rid); !strings.Contains(line, secretPath) || !strings.Contains(line, "level=ERROR") {
		t.Errorf("the log has no error line with request id %s and the detail:\n%s", rid, logged.String())
	}
}

// syncBuffer is a log's buffer that the server's goroutines write while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// line returns the last line of the log that contains sub ("" when none).
func (s *syncBuffer) line(sub string) string {
	var out string
	for _, l := range strings.Split(s.String(), "\n") {
		if strings.Contains(l, sub) {
			out = l
		}
	}
	return out
}
