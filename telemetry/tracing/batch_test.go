package tracing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"go.opentelemetry.io/otel/trace"
)

func span(i int) *spanData {
	return &spanData{name: "s", tid: trace.TraceID{15: 1}, sid: trace.SpanID{7: byte(i + 1)}, start: t0, end: t0}
}

// waitUntil polls ok for up to five seconds.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for range 500 {
		if ok() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func sizes(r *recorder) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, b := range r.batches {
		out = append(out, len(b))
	}
	return out
}

func noClose(context.Context) error { return nil }

// TestBatcherSendsFullBatchesAndWaitsTheDelay: a batch leaves as soon as
// it is full; the rest waits for the delay on the batcher's clock, and
// leaves when the clock gets there.
func TestBatcherSendsFullBatchesAndWaitsTheDelay(t *testing.T) {
	fake := clock.NewFake(t0)
	rec := &recorder{}
	b := newBatcher(batchConfig{delay: 5 * time.Second, maxQueue: 100, maxBatch: 3}, fake, rec.export, noClose, func(err error) { t.Error(err) })
	defer b.shutdown(context.Background())
	for i := range 7 {
		b.add(span(i))
	}
	waitUntil(t, "two full batches", func() bool { return len(sizes(rec)) == 2 })
	time.Sleep(50 * time.Millisecond)
	if got := sizes(rec); len(got) != 2 || got[0] != 3 || got[1] != 3 {
		t.Fatalf("batches %v before the delay, want [3 3]", got)
	}
	fake.Advance(5 * time.Second)
	waitUntil(t, "the delayed batch", func() bool { return len(sizes(rec)) == 3 })
	if got := sizes(rec); got[2] != 1 {
		t.Errorf("batches %v, want [3 3 1]", got)
	}
}

// countingClock is the real clock, counting the timers made.
type countingClock struct {
	clock.Real
	mu     sync.Mutex
	timers int
}

func (c *countingClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.timers++
	c.mu.Unlock()
	return c.Real.NewTimer(d)
}

func (c *countingClock) made() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timers
}

// TestBatcherIdleMakesNoTimer: an idle batcher waits on no timer, so a
// delay of 0 (export every span at once) does not spin; a span still
// leaves at once with it, and with a delay it waits from its own arrival.
func TestBatcherIdleMakesNoTimer(t *testing.T) {
	clk := &countingClock{}
	rec := &recorder{}
	b := newBatcher(batchConfig{delay: 0, maxQueue: 100, maxBatch: 10}, clk, rec.export, noClose, func(err error) { t.Error(err) })
	defer b.shutdown(context.Background())
	time.Sleep(100 * time.Millisecond)
	if n := clk.made(); n > 0 {
		t.Errorf("an idle batcher with a delay of 0 made %d timers in 100ms, want none", n)
	}
	b.add(span(0))
	waitUntil(t, "the span", func() bool { return len(rec.spans()) == 1 })
	time.Sleep(50 * time.Millisecond)
	if n := clk.made(); n != 1 {
		t.Errorf("one span made %d timers, want 1", n)
	}

	fake := clock.NewFake(t0)
	rec = &recorder{}
	b2 := newBatcher(batchConfig{delay: 5 * time.Second, maxQueue: 100, maxBatch: 10}, fake, rec.export, noClose, func(err error) { t.Error(err) })
	defer b2.shutdown(context.Background())
	fake.Advance(4 * time.Second) // idle: no timer runs
	b2.add(span(1))
	waitUntil(t, "the span's timer", func() bool { return fake.Pending() == 1 })
	fake.Advance(4 * time.Second)
	time.Sleep(50 * time.Millisecond)
	if n := len(rec.spans()); n != 0 {
		t.Fatalf("a span left after waiting 4s of a 5s delay")
	}
	fake.Advance(time.Second)
	waitUntil(t, "the delayed span", func() bool { return len(rec.spans()) == 1 })
}

// TestBatcherDropsWhenFull: spans that find the queue full are dropped,
// not waited for: add never blocks on an export.
func TestBatcherDropsWhenFull(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	exported := 0
	export := func(_ context.Context, spans []*spanData) error {
		<-release
		mu.Lock()
		exported += len(spans)
		mu.Unlock()
		return nil
	}
	b := newBatcher(batchConfig{delay: time.Hour, maxQueue: 2, maxBatch: 1}, clock.Real{}, export, noClose, func(err error) { t.Error(err) })
	b.add(span(0))
	waitUntil(t, "the first export to start", func() bool { return len(b.queue) == 0 })
	start := time.Now()
	for i := 1; i <= 5; i++ {
		b.add(span(i))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("adding to a full queue took %v", d)
	}
	close(release)
	if err := b.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if exported != 3 {
		t.Errorf("%d spans exported, want 3 (1 in flight, 2 queued, 3 dropped)", exported)
	}
}

// TestBatcherShutdown: shutdown exports everything queued and then closes
// the exporter; a span added after it is dropped. When its context ends
// first, the export in flight is ended through the exporter's close and
// the goroutine is still waited for.
func TestBatcherShutdown(t *testing.T) {
	rec := &recorder{}
	closed := 0
	b := newBatcher(batchConfig{delay: time.Hour, maxQueue: 100, maxBatch: 2}, clock.Real{}, rec.export,
		func(context.Context) error { closed++; return nil }, func(err error) { t.Error(err) })
	for i := range 5 {
		b.add(span(i))
	}
	if err := b.shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.spans()); n != 5 || closed != 1 {
		t.Errorf("after shutdown %d spans exported (want 5), exporter closed %d times (want 1)", n, closed)
	}
	b.add(span(9))
	if err := b.shutdown(context.Background()); err != nil || len(rec.spans()) != 5 {
		t.Errorf("after a second shutdown: %v, %d spans", err, len(rec.spans()))
	}

	// An export that lasts until the exporter is closed.
	stop := make(chan struct{})
	var errs []error
	b = newBatcher(batchConfig{delay: time.Hour, maxQueue: 100, maxBatch: 1}, clock.Real{},
		func(ctx context.Context, _ []*spanData) error { <-stop; return errors.New("ended by close") },
		func(context.Context) error { close(stop); return nil }, func(err error) { errs = append(errs, err) })
	b.add(span(0))
	waitUntil(t, "the export to start", func() bool { return len(b.queue) == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown past its context = %v", err)
	}
	select {
	case <-b.done:
	default:
		t.Errorf("the batcher's goroutine outlived shutdown")
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "ended by close") {
		t.Errorf("the ended export's error went to the handler as %v", errs)
	}
}

// TestBatchFromEnv: the OTEL_BSP_* variables, their defaults, a batch
// size cut to the queue's, and a value flowrun cannot use refused by name.
func TestBatchFromEnv(t *testing.T) {
	c, err := batchFromEnv(envOf(nil))
	if err != nil || c != defaultBatch {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	c, err = batchFromEnv(envOf(map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_BSP_EXPORT_TIMEOUT": "0",
		"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "300"}))
	if err != nil || c != (batchConfig{delay: 50 * time.Millisecond, timeout: 0, maxQueue: 100, maxBatch: 100}) {
		t.Errorf("set: %+v, %v", c, err)
	}
	for env, want := range map[string]string{
		"OTEL_BSP_SCHEDULE_DELAY":        "OTEL_BSP_SCHEDULE_DELAY=5s: want a number of milliseconds",
		"OTEL_BSP_MAX_QUEUE_SIZE":        "OTEL_BSP_MAX_QUEUE_SIZE=5s: want a positive number",
		"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=5s: want a positive number",
	} {
		if _, err := batchFromEnv(envOf(map[string]string{env: "5s"})); err == nil || err.Error() != want {
			t.Errorf("%s=5s: %v", env, err)
		}
	}
	if _, err := batchFromEnv(envOf(map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "0"})); err == nil {
		t.Errorf("a queue of 0 was accepted")
	}
}
