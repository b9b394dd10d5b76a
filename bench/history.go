package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// resumeScenario parks a run after 10,000 completed steps (it waits for a
// signal), then resumes it with a fresh engine, as a new process would:
// the time from the signal to its next step starting must stay within
// 50 ms.
func resumeScenario(ctx context.Context, c Config, dir string, r *Result) error {
	n := c.n(10000, 50)
	r.Sizes["completed_steps"] = n
	raw, err := rawCommits(ctx, dir, "FULL", c.n(1000, 100))
	if err != nil {
		return err
	}
	h, err := open(ctx, dir, "flowrun.db", "NORMAL", interp.Options{})
	if err != nil {
		return err
	}
	if _, err := h.compile(ctx, resumable("long", n)); err != nil {
		h.close()
		return err
	}
	run, _, err := h.e.StartRun(ctx, interp.StartParams{Workflow: "long", New: true})
	if err == nil {
		run, err = h.e.Drive(ctx, run.ID)
	}
	if cerr := h.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("making the long run: %w", err)
	}
	if run.Status != store.RunWaiting {
		return fmt.Errorf("the long run is %s after its chain, want waiting for its signal", run.Status)
	}

	// Resume on the store reopened in FULL, by a new engine.
	started := make(chan time.Time, 1)
	h, err = open(ctx, dir, "flowrun.db", "FULL", interp.Options{OnEvent: func(ev store.Event) {
		if ev.Kind == "step_started" && ev.StepKey == "next" {
			select {
			case started <- now():
			default:
			}
		}
	}})
	if err != nil {
		return err
	}
	defer h.close()
	start := now()
	if _, err := h.e.Signal(ctx, run.ID, "go", []byte(`{}`)); err != nil {
		return err
	}
	signaled := now()
	done, err := h.e.Drive(ctx, run.ID)
	if err != nil {
		return err
	}
	if done.Status != store.RunCompleted {
		return fmt.Errorf("the resumed run ended %s, want completed: %s", done.Status, done.Error)
	}
	var at time.Time
	select {
	case at = <-started:
	default:
		return errors.New("the resumed run completed without a step_started event for its next step")
	}
	r.figure(Figure{Name: "resume: signal to next step started", Value: ms(at.Sub(start)), Unit: "ms",
		Baseline: ptr(commitMS(raw)), Target: &Target{Of: "value", Op: "<=", Limit: 50}})
	r.figure(Figure{Name: "of which the signal (loads the graph)", Value: ms(signaled.Sub(start)), Unit: "ms", Baseline: ptr(commitMS(raw))})
	r.figure(Figure{Name: "of which the drive to the step's start", Value: ms(at.Sub(signaled)), Unit: "ms", Baseline: ptr(commitMS(raw))})
	return nil
}

// historyScenario runs one step that repeats an http request (against a
// server in this process) until it has made n attempts. Its peak RSS is
// read by Suite; history-100k's is held against history-1k's.
func historyScenario(full int) func(context.Context, Config, string, *Result) error {
	return func(ctx context.Context, c Config, dir string, r *Result) error {
		n := c.n(full, 20)
		r.Sizes["attempts"] = n
		raw, err := rawCommits(ctx, dir, "NORMAL", c.n(1000, 100))
		if err != nil {
			return err
		}
		srv, err := serveCounter()
		if err != nil {
			return err
		}
		defer srv.close()
		h, err := open(ctx, dir, "flowrun.db", "NORMAL", interp.Options{})
		if err != nil {
			return err
		}
		defer h.close()
		if _, err := h.compile(ctx, poller("poll", srv.url, n)); err != nil {
			return err
		}
		run, err := h.start(ctx, "poll", map[string]any{"n": n})
		if err != nil {
			return err
		}
		r.StartRSSKB = peakRSSKB()
		start := now()
		if run, err = h.drive(ctx, run); err != nil {
			return err
		}
		took := now().Sub(start)
		// Counted in SQL: listing 100,000 attempts would put the check's
		// own memory into the scenario's peak RSS.
		atts, err := countAttempts(ctx, h.st.Path(), run.ID)
		if err != nil {
			return err
		}
		if atts != n {
			return fmt.Errorf("the run made %d attempts, want %d", atts, n)
		}
		r.figure(Figure{Name: "http attempts in one run", Value: perSec(n, took), Unit: "attempts/s", Baseline: &raw})
		return nil
	}
}

// counter is an http server answering GET /i/N with {"i": N}.
type counter struct {
	url  string
	srv  *http.Server
	wg   sync.WaitGroup
	serr error
}

func serveCounter() (*counter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the benchmark's http server: %w", err)
	}
	c := &counter{url: "http://" + ln.Addr().String()}
	c.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		i := strings.TrimPrefix(req.URL.Path, "/i/")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"i": %s}`, i)
	})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := c.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			c.serr = err
		}
	}()
	return c, nil
}

// close stops the server and waits for its goroutine.
func (c *counter) close() error {
	err := c.srv.Close()
	c.wg.Wait()
	return errors.Join(err, c.serr)
}
