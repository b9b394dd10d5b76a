package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry/metrics"
	"github.com/flowrun/flowrun/telemetry/tracing"
	"google.golang.org/protobuf/encoding/protowire"
)

// telemetryScenario runs the worker scenario's workload (runs of 10 set
// steps drained by one worker at concurrency 16, FULL) three ways, side by
// side in one process: without telemetry, with Prometheus metrics, and
// with OpenTelemetry traces exported to a local OTLP/HTTP receiver. Each
// way runs in alternating rounds on a fresh database and its best round
// counts, so a disturbance of the machine during one round does not
// decide the ratio.
func telemetryScenario(ctx context.Context, c Config, dir string, r *Result) error {
	runs := c.n(1000, 20)
	const rounds = 3
	r.Sizes["runs"], r.Sizes["steps_per_run"], r.Sizes["concurrency"], r.Sizes["rounds"] = runs, 10, 16, rounds
	raw, err := rawCommits(ctx, dir, "FULL", c.n(2000, 200))
	if err != nil {
		return err
	}
	var spans atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the local OTLP receiver: %w", err)
	}
	recv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, err := io.ReadAll(req.Body)
		n := 0
		if err == nil {
			n, err = countSpans(b)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		spans.Add(int64(n))
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK) // an empty ExportTraceServiceResponse
	}), ReadHeaderTimeout: 10 * time.Second}
	var serving sync.WaitGroup
	serving.Go(func() { recv.Serve(ln) }) // ends when recv is closed below
	defer func() {
		recv.Close()
		serving.Wait()
	}()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String()}

	best := map[string]time.Duration{}
	ways := []string{"off", "metrics", "tracing"}
	for round := range rounds {
		for _, way := range ways {
			opts := interp.Options{}
			var tr *tracing.Tracer
			switch way {
			case "metrics":
				opts.Observer = metrics.New(metrics.Options{Now: clock.Real{}.Now})
			case "tracing":
				var err error
				if tr, err = tracing.New(ctx, func(k string) string { return env[k] }); err != nil {
					return err
				}
				opts.Observer, opts.Traceparent, opts.TraceSampled = tr, true, tr.Sampled
			}
			took, err := drainWorker(ctx, dir, fmt.Sprintf("%s-%d.db", way, round), runs, opts)
			if tr != nil {
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				if cerr := tr.Close(cctx); err == nil && cerr != nil {
					err = fmt.Errorf("flushing the spans: %w", cerr)
				}
				cancel()
			}
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", way, round+1, err)
			}
			if b, ok := best[way]; !ok || took < b {
				best[way] = took
			}
		}
	}
	if got, want := spans.Load(), int64(rounds*runs); got < want {
		return fmt.Errorf("the OTLP receiver got %d spans, want at least %d (a root span per run)", got, want)
	}
	off := Baseline{Name: "the same runs without telemetry", Value: perSec(runs*10, best["off"]), Unit: "steps/s"}
	r.figure(Figure{Name: "steps on one worker, without telemetry", Value: off.Value, Unit: "steps/s", Baseline: &raw})
	r.figure(Figure{Name: "steps on one worker, Prometheus metrics on", Value: perSec(runs*10, best["metrics"]), Unit: "steps/s",
		Baseline: &off, Target: &Target{Of: "ratio", Op: ">=", Limit: 0.95}})
	r.figure(Figure{Name: "steps on one worker, traces to a local OTLP receiver", Value: perSec(runs*10, best["tracing"]), Unit: "steps/s",
		Baseline: &off, Target: &Target{Of: "ratio", Op: ">=", Limit: 0.8}})
	return nil
}

// drainWorker enqueues runs of 10 set steps on a fresh database named
// name, then starts a worker of concurrency 16 on an engine with opts and
// returns how long it took to complete them all.
func drainWorker(ctx context.Context, dir, name string, runs int, opts interp.Options) (time.Duration, error) {
	done := make(chan struct{}, runs)
	var mu sync.Mutex
	failed := ""
	opts.OnEvent = func(ev store.Event) {
		switch ev.Kind {
		case "run_completed", "run_failed", "run_canceled":
			if ev.Kind != "run_completed" {
				mu.Lock()
				failed = ev.RunID + " " + ev.Kind
				mu.Unlock()
			}
			done <- struct{}{}
		}
	}
	h, err := open(ctx, dir, name, "FULL", opts)
	if err != nil {
		return 0, err
	}
	defer h.close()
	if _, err := h.compile(ctx, setChain("ten", 10)); err != nil {
		return 0, err
	}
	for range runs {
		if _, _, err := h.e.StartRun(ctx, interp.StartParams{Workflow: "ten", New: true}); err != nil {
			return 0, err
		}
	}
	w := interp.NewWorker(h.e, interp.WorkerOptions{Concurrency: 16})
	start := now()
	if err := w.Start(ctx); err != nil {
		return 0, err
	}
	for range runs {
		select {
		case <-done:
		case <-ctx.Done():
			w.Stop(context.WithoutCancel(ctx))
			return 0, ctx.Err()
		}
	}
	took := now().Sub(start)
	if err := w.Stop(ctx); err != nil {
		return 0, err
	}
	if failed != "" {
		return 0, fmt.Errorf("run %s, want completed", failed)
	}
	return took, nil
}

// countSpans counts the spans of an OTLP export (an
// ExportTraceServiceRequest: resource_spans 1, their scope_spans 2, their
// spans 2), reading the protobuf wire format without the generated
// messages, which flowrun does not link.
func countSpans(b []byte) (int, error) {
	n := 0
	err := forEachField(b, 1, func(rs []byte) error {
		return forEachField(rs, 2, func(ss []byte) error {
			return forEachField(ss, 2, func([]byte) error { n++; return nil })
		})
	})
	return n, err
}

// forEachField calls fn with the value of each length-delimited field num
// of the message b.
func forEachField(b []byte, num protowire.Number, fn func([]byte) error) error {
	for len(b) > 0 {
		got, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if got == num && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if err := fn(v); err != nil {
				return err
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(got, typ, b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil
}
