package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
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
			check(a.do(store.ScopeRead, http.MethodGet, "/v1/runs", ""), c.status, c.says)
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
