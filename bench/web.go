package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/server"
	"github.com/flowrun/flowrun/web"
)

// webScenario measures the web dashboard (package web) on a store of
// 100,000 runs with one run of 1,000 steps: the runs page and the long
// run's page, each against the API's own call for the same data in the
// same process (GET /v1/runs?limit=50, GET /v1/runs/ID), medians of
// alternating rounds; how long after a commit an open page's live request
// answers; and the weight of a first load (the page, its stylesheet and
// its script, gzipped).
func webScenario(ctx context.Context, c Config, dir string, r *Result) error {
	runs := c.n(100000, 200)
	longSteps := c.n(1000, 50)
	r.Sizes["runs"], r.Sizes["long_steps"] = runs, longSteps
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	longID, err := seedRunsStore(ctx, dir, runs, longSteps)
	if err != nil {
		return err
	}
	h, err := open(ctx, dir, "flowrun.db", "FULL", interp.Options{})
	if err != nil {
		return err
	}
	defer h.close()
	api0 := server.New(server.Options{Engine: h.e, NoAuth: true})
	door := api0.Door()
	pagesURL, stopPages, err := serveLoopback(web.New(web.Options{Door: door, NoAuth: true, Tokens: h.st.TokenLookup}))
	if err != nil {
		return err
	}
	defer stopPages()
	apiURL, stopAPI, err := serveLoopback(api0)
	if err != nil {
		return err
	}
	defer stopAPI()
	client := &http.Client{Timeout: 2 * time.Minute}
	get := func(url string) ([]byte, error) {
		resp, err := client.Get(url)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s answered %d: %.300s", url, resp.StatusCode, b)
		}
		return b, err
	}
	// compare times the page and the API call in alternating rounds.
	compare := func(name, page, apiPath string, target float64) error {
		var tp, ta []time.Duration
		for i := -2; i < c.n(20, 5); i++ { // two rounds warm the caches
			start := now()
			if _, err := get(pagesURL + page); err != nil {
				return err
			}
			d := now().Sub(start)
			start = now()
			if _, err := get(apiURL + apiPath); err != nil {
				return err
			}
			if i >= 0 {
				tp, ta = append(tp, d), append(ta, now().Sub(start))
			}
		}
		base := Baseline{Name: "the API's call for the same data (GET " + apiPath + ")", Value: ms(median(ta)), Unit: "ms"}
		r.figure(Figure{Name: name, Value: ms(median(tp)), Unit: "ms", Baseline: &base, Target: &Target{Of: "value", Op: "<=", Limit: target}})
		return nil
	}
	if err := compare("the runs page (50 runs)", "/runs", "/v1/runs?limit=50", 100); err != nil {
		return err
	}
	if err := compare(fmt.Sprintf("a run's page (%d steps)", longSteps), "/runs/"+longID, "/v1/runs/"+longID, 200); err != nil {
		return err
	}

	// A first load's weight: the page, its stylesheet and its script,
	// against the API's answer for the same 50 runs.
	gzipped := func(urls ...string) (float64, error) {
		n := 0
		for _, u := range urls {
			b, err := get(u)
			if err != nil {
				return 0, err
			}
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, _ = zw.Write(b)
			_ = zw.Close()
			n += z.Len()
		}
		return float64(n) / 1024, nil
	}
	weight, err := gzipped(pagesURL+"/runs", pagesURL+"/assets/app.css", pagesURL+"/assets/app.js")
	if err != nil {
		return err
	}
	apiWeight, err := gzipped(apiURL + "/v1/runs?limit=50")
	if err != nil {
		return err
	}
	r.figure(Figure{Name: "first load of the runs page, gzipped", Value: weight, Unit: "KiB",
		Baseline: &Baseline{Name: "the API's answer for the same 50 runs, gzipped", Value: apiWeight, Unit: "KiB"},
		Target:   &Target{Of: "value", Op: "<=", Limit: 300}})

	// An open page hears of a commit: the runs page's live request, from
	// the commit of a new run to its answer.
	var lat []time.Duration
	for i := range c.n(20, 5) {
		cursor, err := api.LastEventID(ctx, door)
		if err != nil {
			return err
		}
		answered := make(chan time.Time, 1)
		failed := make(chan error, 1)
		go func() { // joined below: it answers or fails
			if _, err := get(fmt.Sprintf("%s/live/runs?after=%d", pagesURL, cursor)); err != nil {
				failed <- err
				return
			}
			answered <- now()
		}()
		pause(50 * time.Millisecond) // the request is waiting on the server
		start := now()
		if _, _, err := door.Start(ctx, api.StartRequest{Workflow: "ten", New: true, Inputs: map[string]any{}}); err != nil {
			return fmt.Errorf("start %d: %w", i, err)
		}
		select {
		case at := <-answered:
			lat = append(lat, at.Sub(start))
		case err := <-failed:
			return err
		}
	}
	commit := commitMS(raw)
	r.figure(Figure{Name: "a commit reaches an open page (from the start's call to the live answer)", Value: ms(median(lat)), Unit: "ms",
		Baseline: &commit, Target: &Target{Of: "value", Op: "<=", Limit: 100}})
	return nil
}

// serveLoopback serves h on a loopback port and returns its URL and the
// function that stops it.
func serveLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listening on a loopback port: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }() // ended by the returned stop
	return "http://" + ln.Addr().String(), func() { _ = srv.Close(); <-done }, nil
}
