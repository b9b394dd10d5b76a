package tracing

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// batchConfig is the batch span processor's settings, the SDK's OTEL_BSP_*
// variables with the SDK's defaults.
type batchConfig struct {
	delay    time.Duration // OTEL_BSP_SCHEDULE_DELAY: the longest a span waits
	timeout  time.Duration // OTEL_BSP_EXPORT_TIMEOUT: bounds one export (0: none)
	maxQueue int           // OTEL_BSP_MAX_QUEUE_SIZE: spans beyond it are dropped
	maxBatch int           // OTEL_BSP_MAX_EXPORT_BATCH_SIZE: the most spans an export sends
}

var defaultBatch = batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, maxQueue: 2048, maxBatch: 512}

// batchFromEnv reads the OTEL_BSP_* variables (milliseconds and counts); a
// value flowrun cannot use is an error naming its variable. A batch size
// above the queue size is cut as the SDK cuts it.
func batchFromEnv(getenv func(string) string) (batchConfig, error) {
	c := defaultBatch
	for _, v := range []struct {
		name string
		min  int
		ms   *time.Duration
		n    *int
	}{
		{name: "OTEL_BSP_SCHEDULE_DELAY", ms: &c.delay},
		{name: "OTEL_BSP_EXPORT_TIMEOUT", ms: &c.timeout},
		{name: "OTEL_BSP_MAX_QUEUE_SIZE", min: 1, n: &c.maxQueue},
		{name: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", min: 1, n: &c.maxBatch},
	} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < v.min {
			what := "a number of milliseconds"
			if v.n != nil {
				what = "a positive number"
			}
			return c, fmt.Errorf("%s=%s: want %s", v.name, s, what)
		}
		if v.ms != nil {
			*v.ms = time.Duration(n) * time.Millisecond
		} else {
			*v.n = n
		}
	}
	if c.maxBatch > c.maxQueue {
		c.maxBatch = min(defaultBatch.maxBatch, c.maxQueue)
	}
	return c, nil
}

// batcher queues finished spans and exports them in batches from a
// goroutine of its own, which shutdown ends: a batch leaves when it is
// full or when its oldest span has waited the delay. A span that finds the
// queue full is dropped, so the engine never waits on an export.
type batcher struct {
	cfg    batchConfig
	clock  clock.Clock
	export func(ctx context.Context, spans []*spanData) error
	close  func(ctx context.Context) error // the exporter's shutdown: ends requests in flight
	handle func(error)                     // an export's error

	queue    chan *spanData
	flushes  chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	stopped  atomic.Bool
}

func newBatcher(cfg batchConfig, clk clock.Clock, export func(context.Context, []*spanData) error,
	closeExp func(context.Context) error, handle func(error)) *batcher {
	b := &batcher{cfg: cfg, clock: clk, export: export, close: closeExp, handle: handle,
		queue: make(chan *spanData, cfg.maxQueue), flushes: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop() // owned by b: shutdown ends it and waits for it
	return b
}

// add queues a span, or drops it when the queue is full or shut.
func (b *batcher) add(s *spanData) {
	if b.stopped.Load() {
		return
	}
	select {
	case b.queue <- s:
	default:
	}
}

func (b *batcher) loop() {
	defer close(b.done)
	var batch []*spanData
	// The delay's timer runs only while the batch holds a span, from the
	// moment its first span joined it: an idle batcher wakes for nothing
	// (and a delay of 0 does not fire over and over).
	var timer clock.Timer
	var due <-chan time.Time
	send := func() {
		if timer != nil {
			timer.Stop()
			timer, due = nil, nil
		}
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if b.cfg.timeout > 0 {
			ctx, cancel = context.WithTimeoutCause(ctx, b.cfg.timeout, errors.New("the batch export timeout (OTEL_BSP_EXPORT_TIMEOUT) passed"))
		}
		if err := b.export(ctx, batch); err != nil {
			b.handle(err)
		}
		cancel()
		batch = nil
	}
	// take adds a span to the batch, sending it when full.
	take := func(s *spanData) {
		if batch = append(batch, s); len(batch) >= b.cfg.maxBatch {
			send()
		} else if timer == nil {
			timer = b.clock.NewTimer(b.cfg.delay)
			due = timer.C()
		}
	}
	// drain moves every queued span into batches, sending each full one,
	// then sends the rest.
	drain := func() {
		for {
			select {
			case s := <-b.queue:
				take(s)
			default:
				send()
				return
			}
		}
	}
	for {
		select {
		case <-b.stop:
			drain()
			return
		case done := <-b.flushes:
			drain()
			close(done)
		case <-due:
			timer, due = nil, nil
			send()
		case s := <-b.queue:
			take(s)
		}
	}
}

// flush exports every span queued so far; ctx bounds the wait.
func (b *batcher) flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case b.flushes <- done:
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown exports the spans still queued and stops the exporter; when
// ctx ends first, the export in flight is ended (the exporter's shutdown)
// and the goroutine is still waited for, so none outlives the call.
func (b *batcher) shutdown(ctx context.Context) error {
	b.stopOnce.Do(func() {
		b.stopped.Store(true)
		close(b.stop)
	})
	select {
	case <-b.done:
		return b.close(ctx)
	case <-ctx.Done():
		b.close(ctx)
		<-b.done
		return ctx.Err()
	}
}
