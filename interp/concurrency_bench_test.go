package interp

import (
	"context"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// BenchmarkWorkerVsSequential measures, at synchronous=FULL, the step rate
// of runs of 10 set steps driven one after the other (sequential: Drive
// of one run at a time, 100 runs) and of 1,000 such runs on one worker at
// concurrency 16, back to back in each op so that both see the same
// machine, and reports both rates and their ratio ("x-sequential"). The
// runs are enqueued before the clock starts in both cases, so the rate is
// the engine's. The worker's group commit lets several runs' claims and
// transitions share one commit; it must reach at least 3x.
func BenchmarkWorkerVsSequential(b *testing.B) {
	const runs, steps, seqRuns = 1000, 10, 100
	ctx := context.Background()
	e, st := benchEngine(b, "FULL", clock.Real{})
	storeHCL(b, e, chainHCL("ten", steps))
	enqueue := func(n int) []string {
		ids := make([]string, n)
		for j := range ids {
			run, _, err := e.StartRun(ctx, StartParams{Workflow: "ten", New: true})
			if err != nil {
				b.Fatal(err)
			}
			ids[j] = run.ID
		}
		return ids
	}
	var seq, par time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ids := enqueue(seqRuns)
		b.StartTimer()
		t0 := time.Now()
		for _, id := range ids {
			if done, err := e.Drive(ctx, id); err != nil || done.Status != store.RunCompleted {
				b.Fatalf("run %s: %v", done.Status, err)
			}
		}
		seq += time.Since(t0)
		b.StopTimer()
		ids = enqueue(runs)
		w := NewWorker(e, WorkerOptions{Concurrency: 16})
		b.StartTimer()
		t0 = time.Now()
		if err := w.Start(ctx); err != nil {
			b.Fatal(err)
		}
		for _, id := range ids {
			for {
				r, err := st.RunGet(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				if r.Status.Terminal() {
					if r.Status != store.RunCompleted {
						b.Fatalf("run %s %s", r.Status, r.Error)
					}
					break
				}
				waitABit(e)
			}
		}
		par += time.Since(t0)
		b.StopTimer()
		if err := w.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	seqRate := float64(b.N*seqRuns*steps) / seq.Seconds()
	parRate := float64(b.N*runs*steps) / par.Seconds()
	b.ReportMetric(seqRate, "seq-steps/s")
	b.ReportMetric(parRate, "worker-steps/s")
	b.ReportMetric(parRate/seqRate, "x-sequential")
}
