package spec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/flowrun/flowrun/store"
)

// errDead is what every write of a crashed engine's store returns.
var errDead = errors.New("conformance: this engine's process is dead")

// crashStore is the store as one engine (one simulated process) sees it.
// Once dead, every write fails, so the engine can no longer change
// anything: what it left in the store is what a SIGKILL would leave.
// Reads keep working so a dead engine's runners can fail cleanly.
type crashStore struct {
	store.Store

	dead atomic.Bool
	// crashKey and crashN arm crash-at: the crashN-th committed running
	// attempt of crashKey kills the process right after that commit.
	mu       sync.Mutex
	crashKey string
	crashN   int
	seen     int
	fired    bool
}

func (c *crashStore) check() error {
	if c.dead.Load() {
		return errDead
	}
	return nil
}

// TransitionCommit commits, then dies when the commit carried the armed
// running attempt.
func (c *crashStore) TransitionCommit(ctx context.Context, ts []store.Transition) ([]store.TransitionResult, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	res, err := c.Store.TransitionCommit(ctx, ts)
	if err != nil {
		return res, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashKey == "" || c.fired {
		return res, nil
	}
	for i, t := range ts {
		if i < len(res) && res[i].Err != nil {
			continue
		}
		for _, a := range t.Attempts {
			if a.StepKey == c.crashKey && a.Status == store.AttemptRunning {
				c.seen++
				if c.seen == c.crashN {
					c.fired = true
					c.dead.Store(true)
				}
			}
		}
	}
	return res, nil
}

// RunInsert fails once dead.
func (c *crashStore) RunInsert(ctx context.Context, p store.RunInsertParams) (store.Run, error) {
	if err := c.check(); err != nil {
		return store.Run{}, err
	}
	return c.Store.RunInsert(ctx, p)
}

// VersionPut fails once dead.
func (c *crashStore) VersionPut(ctx context.Context, p store.VersionPutParams) (store.Version, error) {
	if err := c.check(); err != nil {
		return store.Version{}, err
	}
	return c.Store.VersionPut(ctx, p)
}

// RunClaim fails once dead.
func (c *crashStore) RunClaim(ctx context.Context, p store.RunClaimParams) ([]store.Run, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.Store.RunClaim(ctx, p)
}

// RunHeartbeat fails once dead.
func (c *crashStore) RunHeartbeat(ctx context.Context, p store.RunHeartbeatParams) ([]store.Heartbeat, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.Store.RunHeartbeat(ctx, p)
}

// LeaseExpire fails once dead.
func (c *crashStore) LeaseExpire(ctx context.Context, p store.LeaseExpireParams) (int, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	return c.Store.LeaseExpire(ctx, p)
}

// RunCancel fails once dead.
func (c *crashStore) RunCancel(ctx context.Context, p store.RunCancelParams) (store.Run, error) {
	if err := c.check(); err != nil {
		return store.Run{}, err
	}
	return c.Store.RunCancel(ctx, p)
}

// SignalSend fails once dead.
func (c *crashStore) SignalSend(ctx context.Context, p store.SignalSendParams) (store.Signal, error) {
	if err := c.check(); err != nil {
		return store.Signal{}, err
	}
	return c.Store.SignalSend(ctx, p)
}

// hangScript is the program a case runs (as $HANG) for an action that
// never finishes by itself: it records its pid, so the runner knows the
// engine is waiting on it, and sleeps until it is killed.
const hangScript = `#!/bin/sh
echo $$ > "%s/hang.$$"
exec sleep 3600
`

// hangs counts what the engine waits on that never ends by itself:
// processes started from $HANG that are still alive, and requests to the
// /hang endpoint of the test server still open.
type hangs struct {
	dir     string
	openReq atomic.Int64
}

func newHangs(work string) (*hangs, string, error) {
	h := &hangs{dir: filepath.Join(work, ".hang")}
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("make hang directory: %w", err)
	}
	prog := filepath.Join(h.dir, "hang")
	if err := os.WriteFile(prog, []byte(fmt.Sprintf(hangScript, h.dir)), 0o755); err != nil {
		return nil, "", fmt.Errorf("write hang program: %w", err)
	}
	return h, prog, nil
}

// alive returns how many hanging processes and requests are open.
func (h *hangs) alive() int {
	n := int(h.openReq.Load())
	ents, _ := os.ReadDir(h.dir)
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "hang."))
		if err != nil || !strings.HasPrefix(e.Name(), "hang.") {
			continue
		}
		if syscall.Kill(pid, 0) == nil && !zombie(pid) {
			n++
		}
	}
	return n
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}

// newServer starts the case's HTTP server ($HTTP). Its endpoints are
// documented in README.md.
func newServer(h *hangs) *httptest.Server {
	var mu sync.Mutex
	calls := map[string]int{}
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "bad status", http.StatusBadRequest)
			return
		}
		writeJSON(w, code, map[string]any{"status": code})
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hdr := map[string]string{}
		for k := range r.Header {
			lk := strings.ToLower(k)
			if lk == "idempotency-key" || lk == "content-type" || lk == "authorization" || strings.HasPrefix(lk, "x-") || strings.HasPrefix(lk, "ce-") {
				hdr[lk] = r.Header.Get(k)
			}
		}
		var b any = string(body)
		var j any
		if len(body) > 0 && json.Unmarshal(body, &j) == nil {
			b = j
		}
		writeJSON(w, http.StatusOK, map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "headers": hdr, "body": b})
	})
	mux.HandleFunc("/fail-first/{n}/{name}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		mu.Lock()
		calls[r.PathValue("name")]++
		c := calls[r.PathValue("name")]
		mu.Unlock()
		if c <= n {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "busy")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"calls": c})
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "hello\n")
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		h.openReq.Add(1)
		defer h.openReq.Add(-1)
		<-r.Context().Done()
	})
	return httptest.NewServer(mux)
}
