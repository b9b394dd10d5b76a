package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/interp"
)

// sseWorkflow is a chain of n wait steps, w0 waiting for signal s0, w1 for
// s1, ...: each signal makes a few events, committed when the worker
// takes it.
func sseWorkflow(n int) string {
	var b strings.Builder
	b.WriteString("workflow \"sse\" {\n  version = \"1.0.0\"\n")
	for i := range n {
		fmt.Fprintf(&b, "  step \"w%d\" {\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "    depends_on = [step.w%d]\n", i-1)
		}
		fmt.Fprintf(&b, "    wait { signal = \"s%d\" }\n  }\n", i)
	}
	b.WriteString("}\n")
	return b.String()
}

// sseFollower is one client following the run's event stream.
type sseFollower struct {
	lags []time.Duration // receipt minus the event's time, for events at or after since
	err  error
}

// apiSSEScenario: 200 clients follow one run through GET
// /v1/runs/{id}/events while a worker in the same process works on it and
// the scenario signals its wait steps one after another. Each event's
// delivery lag is the time a client read it minus the event's recorded
// time (taken in the transaction, before its commit, so the lag is an
// upper bound of commit to client): p99 under 50 ms, against one raw
// commit.
func apiSSEScenario(ctx context.Context, c Config, dir string, r *Result) error {
	clients := c.n(200, 5)
	steps := c.n(20, 3)
	r.Sizes["clients"], r.Sizes["signals"] = clients, steps
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	a, err := openAPI(ctx, dir)
	if err != nil {
		return err
	}
	defer a.close()
	if _, err := a.compile(ctx, sseWorkflow(steps)); err != nil {
		return err
	}
	run, err := a.start(ctx, "sse", nil)
	if err != nil {
		return err
	}
	w := interp.NewWorker(a.e, interp.WorkerOptions{Concurrency: 4})
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer w.Stop(ctx)

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	followers := make([]*sseFollower, clients)
	var ready, done sync.WaitGroup
	since := make(chan time.Time, 1)
	var sinceAt time.Time
	var sinceOnce sync.Once
	sinceOf := func() time.Time {
		sinceOnce.Do(func() { sinceAt = <-since })
		return sinceAt
	}
	for i := range followers {
		f := &sseFollower{}
		followers[i] = f
		ready.Add(1)
		done.Add(1)
		go func() { // ends when its stream ends or sctx is canceled
			defer done.Done()
			f.err = a.follow(sctx, run.ID, &ready, sinceOf, &f.lags)
		}()
	}
	ready.Wait()
	since <- now()
	for i := range steps {
		if _, err := a.e.Signal(ctx, run.ID, fmt.Sprintf("s%d", i), json.RawMessage(`{}`)); err != nil {
			return fmt.Errorf("signal s%d: %w", i, err)
		}
		<-wallTimer(25 * time.Millisecond)
	}
	waitDone := make(chan struct{})
	go func() { done.Wait(); close(waitDone) }() // ends when every follower has
	select {
	case <-waitDone:
	case <-wallTimer(time.Minute):
		cancel()
		<-waitDone
		return fmt.Errorf("the streams did not end within a minute of the last signal")
	}
	var lags []time.Duration
	for i, f := range followers {
		if f.err != nil {
			return fmt.Errorf("client %d: %w", i, f.err)
		}
		lags = append(lags, f.lags...)
	}
	if len(lags) == 0 {
		return fmt.Errorf("no client received an event of the signals")
	}
	r.Sizes["deliveries"] = len(lags)
	commit := commitMS(raw)
	r.figure(Figure{Name: "SSE delivery lag p99 (event to client)", Value: ms(quantile(lags, 99)), Unit: "ms", Baseline: &commit,
		Target: &Target{Of: "value", Op: "<=", Limit: 50}})
	r.figure(Figure{Name: "SSE delivery lag p50 (event to client)", Value: ms(quantile(lags, 50)), Unit: "ms", Baseline: &commit})
	return nil
}

// follow reads the run's event stream until its "end" event, recording
// for each event at or after since() the time it was read minus its "at".
// ready is marked done once the stream is open.
func (a *apiHarness) follow(ctx context.Context, runID string, ready *sync.WaitGroup, since func() time.Time, lags *[]time.Duration) error {
	marked := false
	mark := func() {
		if !marked {
			marked = true
			ready.Done()
		}
	}
	defer mark()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url+"/v1/runs/"+runID+"/events", nil)
	if err != nil {
		return err
	}
	client := &http.Client{} // a stream has no overall timeout
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET events answered %d", resp.StatusCode)
	}
	mark()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			got := now()
			if event == "end" {
				return nil
			}
			var ev struct {
				At time.Time `json:"at"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(line, "data:"))), &ev); err != nil {
				return fmt.Errorf("event data %q: %w", line, err)
			}
			if !ev.At.Before(since()) {
				*lags = append(*lags, got.Sub(ev.At))
			}
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return err
	}
	return ctx.Err()
}
