package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/server"
)

// This file measures flowrun serve's API (issue #20's speed section): a
// batch start of many runs, and a single start request, each through a
// real HTTP server and client on a loopback socket, on a FULL store,
// against raw single-row commits measured in the same process.

// apiWorkflow is started by the API scenarios: one set step; the key is
// the id input, so each run is looked up by key as apply's are.
const apiWorkflow = `workflow "api" {
  version = "1.0.0"
  input "id" { type = string }
  key = "input.id"
  step "s" {
    set { id = "{{ input.id }}" }
  }
}`

// apiHarness is a store, an engine and flowrun serve's handler on a
// loopback listener (no worker: the scenarios measure starting runs).
type apiHarness struct {
	*harness
	url    string
	client *http.Client
	srv    *http.Server
	done   chan error
}

func openAPI(ctx context.Context, dir string) (*apiHarness, error) {
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{})
	if err != nil {
		return nil, err
	}
	if _, err := h.compile(ctx, apiWorkflow); err != nil {
		h.close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.close()
		return nil, fmt.Errorf("listening on a loopback port: %w", err)
	}
	api := server.New(server.Options{Engine: h.e, NoAuth: true, MaxBody: 64 << 20})
	a := &apiHarness{harness: h, url: "http://" + ln.Addr().String(), client: &http.Client{Timeout: 5 * time.Minute},
		srv: &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}, done: make(chan error, 1)}
	go func() { a.done <- a.srv.Serve(ln) }() // ended by close
	return a, nil
}

func (a *apiHarness) close() error {
	err := a.srv.Close()
	<-a.done
	if cerr := a.harness.close(); err == nil {
		err = cerr
	}
	return err
}

// post sends a JSON body and returns the status and the answer.
func (a *apiHarness) post(ctx context.Context, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// batchBody is a batch start request of n runs with ids prefix0...
func batchBody(prefix string, n int) []byte {
	var b strings.Builder
	b.WriteString(`{"runs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"inputs":{"id":"%s%d"}}`, prefix, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// apiBatchScenario: one batch start request of 10,000 runs through the
// API, from the request to the answer, as runs per second against raw
// single-row commits (target: 5,000 runs/s). A batch of 10 first warms
// the version's caches.
func apiBatchScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(10000, 100)
	r.Sizes["runs"] = n
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	a, err := openAPI(ctx, dir)
	if err != nil {
		return err
	}
	defer a.close()
	path := "/v1/workflows/api/runs/batch"
	if status, b, err := a.post(ctx, path, batchBody("warm-", 10)); err != nil || status != http.StatusCreated {
		return fmt.Errorf("the warm-up batch: %d %s %v", status, b, err)
	}
	body := batchBody("run-", n)
	start := now()
	status, b, err := a.post(ctx, path, body)
	took := now().Sub(start)
	if err != nil {
		return err
	}
	if status != http.StatusCreated {
		return fmt.Errorf("the batch of %d runs answered %d: %.300s", n, status, b)
	}
	var ans struct {
		Runs []struct {
			Created bool `json:"created"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &ans); err != nil || len(ans.Runs) != n {
		return fmt.Errorf("the batch answered %d runs (%v), want %d", len(ans.Runs), err, n)
	}
	r.figure(Figure{Name: "batch start through the API", Value: perSec(n, took), Unit: "runs/s", Baseline: &raw,
		Target: &Target{Of: "value", Op: ">=", Limit: 5000}})
	r.figure(Figure{Name: "batch start request, whole", Value: ms(took), Unit: "ms", Baseline: ptr(commitMS(raw))})
	return nil
}

// apiStartScenario: sequential single start requests (each a new run),
// their median and p99 latency from the request to the answer, against
// one raw single-row commit: what a start costs beyond its commit.
func apiStartScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(500, 50)
	r.Sizes["requests"] = n
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	commit := commitMS(raw)
	a, err := openAPI(ctx, dir)
	if err != nil {
		return err
	}
	defer a.close()
	lat := make([]time.Duration, 0, n)
	for i := -5; i < n; i++ { // five to warm up
		body := []byte(fmt.Sprintf(`{"inputs":{"id":"one-%d"}}`, i))
		start := now()
		status, b, err := a.post(ctx, "/v1/workflows/api/runs", body)
		took := now().Sub(start)
		if err != nil {
			return err
		}
		if status != http.StatusCreated {
			return fmt.Errorf("start request %d answered %d: %.300s", i, status, b)
		}
		if i >= 0 {
			lat = append(lat, took)
		}
	}
	p50, p99 := ms(quantile(lat, 50)), ms(quantile(lat, 99))
	r.figure(Figure{Name: "start request latency p50", Value: p50, Unit: "ms", Baseline: &commit})
	r.figure(Figure{Name: "start request latency p99", Value: p99, Unit: "ms", Baseline: &commit})
	r.figure(Figure{Name: "start request p50 beyond one commit", Value: max(0, p50-commit.Value), Unit: "ms", Baseline: &commit})
	return nil
}
