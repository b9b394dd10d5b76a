package root

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/server"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/tui/feed"
)

// Through a server, the status bar says the runs come through it as they
// are committed (its waits answer at each commit), not "polled every
// 250ms". What cannot be read is the server's, not a database's:
// a token the server stops taking (revoked) says to start flowtui again
// with another, since retrying with it never works, and a server that
// cannot be reached says to check the server, not --db.
func TestServerErrorsNameTheServer(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	tok, err := api.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.b.Store.TokenCreate(ctx, store.TokenCreateParams{Name: "oncall", Scope: store.ScopeRead, Hash: api.HashToken(tok)}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Engine: interp.New(w.b.Store, interp.Options{Clock: w.b.Clock})}))
	t.Cleanup(srv.Close)
	c, err := api.Dial(srv.URL, tok, api.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m := newRoot(t, &feed.Source{Door: c}, w.b)
	if v := m.View(); !strings.Contains(v, w.waiting.ID[:10]) {
		t.Fatalf("the runs of the server are not shown:\n%s", v)
	}
	// The server tells of each commit; nothing is polled at an interval.
	if v := m.View(); !strings.Contains(v, "live · 3 runs · through "+srv.URL+", as they are committed") || strings.Contains(v, "polled") {
		t.Errorf("the status bar does not say the runs come through the server as committed:\n%s", v)
	}

	if _, err := w.b.Store.TokenRevoke(ctx, "oncall"); err != nil {
		t.Fatal(err)
	}
	m = send(t, m, PollMsg{})
	v := m.View()
	checkSize(t, v)
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{"Cannot read " + srv.URL + ":", "start flowtui again", "flowrun login " + srv.URL} {
		if !strings.Contains(flat, want) {
			t.Errorf("a revoked token's status does not say %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "database") || strings.Contains(v, "retrying") {
		t.Errorf("a revoked token's status speaks of a database or retrying:\n%s", v)
	}

	srv.Close()
	down := newRoot(t, &feed.Source{Door: c}, w.b)
	v = down.View()
	checkSize(t, v)
	flat = strings.Join(strings.Fields(v), " ")
	for _, want := range []string{"Cannot read the runs of " + srv.URL + ".", "Check that flowrun serve runs at that address"} {
		if !strings.Contains(flat, want) {
			t.Errorf("a server that is down is not said as %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "database") || strings.Contains(v, "--db") {
		t.Errorf("a server that is down is said as a database:\n%s", v)
	}
}
