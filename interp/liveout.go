package interp

import (
	"context"
	"sync"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// Live output (semantics.md, "Live output"): an exec attempt's stdout and
// stderr are stored while the program runs, so that logs -f and the live
// views show them before the step ends and a dead worker's attempt keeps
// what its program wrote.

// outputEvery is the least time between two commits of one attempt's
// live output: a chatty program costs at most one commit per step per
// outputEvery. An attempt that ends within it costs no commit of its own:
// its output rides with the commit of its end.
const outputEvery = 100 * time.Millisecond

// maxChunkBytes bounds the data of one stored chunk: a commit that takes
// more of a stream stores it as several chunks.
const maxChunkBytes = 64 << 10

// chunker cuts one stream of a program into redacted pieces for the
// store. It keeps the first limit bytes of the stream (limits.output_bytes,
// as the step's output does) and drops the rest. take returns what can be
// stored now, redacted, holding back the bytes a secret could straddle:
// the end of the text that is the beginning of a form of a secret (at
// most red.lookahead() bytes, the longest form less one) and, when a
// secret starts before that and runs into it, the secret from its start.
// What is held back is seen again with the bytes that follow it, so a
// secret a program writes in two pieces is never stored in part. At the
// end (final) everything kept is taken.
type chunker struct {
	red   *redactor
	limit int64  // bytes of the stream that may be stored
	taken int64  // bytes of the stream taken so far
	pend  []byte // bytes written and not taken, at most limit+lookahead-taken
	full  bool   // the limit was reached: nothing more is taken
}

// write adds bytes the program wrote.
func (c *chunker) write(p []byte) {
	if c.full {
		return
	}
	room := c.limit + int64(c.red.lookahead()) - c.taken - int64(len(c.pend))
	if room <= 0 {
		return
	}
	c.pend = append(c.pend, p[:min(room, int64(len(p)))]...)
}

// take returns the redacted text that can be stored now (nil when there
// is none); final takes everything kept.
func (c *chunker) take(final bool) []byte {
	if c.full || len(c.pend) == 0 {
		return nil
	}
	avail := int(c.limit - c.taken) // bytes that may still be taken
	look := c.red.lookahead()
	// The cut before holding back: everything, up to the limit.
	at := min(len(c.pend), avail)
	over := int64(len(c.pend))+c.taken > c.limit // bytes past the limit were kept to check the cut
	if !final && !(over && len(c.pend) >= avail+look) {
		// More may come: hold back what a secret could straddle. (When
		// the stream went past the limit and the bytes after it are all
		// here, the cut at the limit is final and needs no more.)
		at = min(at, c.red.partialStart(c.pend))
	}
	cut := 0
	if at > 0 {
		cut = c.red.safeCut(c.pend, at)
	}
	if final || (over && len(c.pend) >= avail+look) {
		c.full = over
	}
	out := []byte(c.red.text(string(c.pend[:cut])))
	c.taken += int64(cut)
	if c.full {
		c.pend = nil
	} else {
		c.pend = append(c.pend[:0], c.pend[cut:]...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// liveOutput stores the live output of one exec attempt. The goroutine
// reading the program's pipes calls write with what it read and tick
// after each wait on the pipes; tick takes what the chunkers give, at most
// once per outputEvery on the engine clock, and hands it to a committer
// goroutine (started at the first such handover, ended by rest or flush),
// so that a slow commit never keeps the pipes unread and the program
// waiting. rest returns what is left when the program ended, for the
// commit of the attempt's end.
type liveOutput struct {
	st      store.OutputStore
	clk     clock.Clock
	ctx     context.Context // the attempt's, without its cancel: output is stored while the program is stopped too
	runID   string
	key     string
	attempt int
	streams [2]chunker
	next    [2]int // the next chunk number of each stream
	last    time.Time

	mu    sync.Mutex
	queue []store.OutputChunkWrite // taken, not yet committed (mu)

	kick    chan struct{} // a handover for the committer (nil until it starts)
	done    chan struct{} // closed to end the committer
	stopped chan struct{} // closed when the committer has ended
}

// streamNames are the names of the streams, in the order of liveOutput's.
var streamNames = [2]string{store.StreamStdout, store.StreamStderr}

func newLiveOutput(ctx context.Context, st store.OutputStore, clk clock.Clock, red *redactor, limit int64, runID, key string, attempt int) *liveOutput {
	l := &liveOutput{st: st, clk: clk, ctx: context.WithoutCancel(ctx), runID: runID, key: key, attempt: attempt, last: clk.Now()}
	for i := range l.streams {
		l.streams[i] = chunker{red: red, limit: limit}
	}
	return l
}

// write adds bytes the program wrote to stream i (0 stdout, 1 stderr).
func (l *liveOutput) write(i int, p []byte) {
	if l != nil {
		l.streams[i].write(p)
	}
}

// tick hands the output taken since the last handover to the committer
// when outputEvery has passed since it (or since the attempt began).
func (l *liveOutput) tick() {
	if l == nil {
		return
	}
	now := l.clk.Now()
	if now.Sub(l.last) < outputEvery {
		return
	}
	l.mu.Lock()
	l.take(false, now)
	pending := len(l.queue) > 0
	l.mu.Unlock()
	if !pending {
		return
	}
	l.last = now
	if l.kick == nil {
		l.kick, l.done, l.stopped = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go l.commits()
	}
	select {
	case l.kick <- struct{}{}:
	default: // a handover is pending already; it takes this too
	}
}

// commits commits the queue at each handover, one commit at a time, until
// done is closed. A commit that fails leaves its chunks queued for the
// next, or for the attempt's end: the chunks keep their numbers, so one
// whose commit did land is not stored twice.
func (l *liveOutput) commits() {
	defer close(l.stopped)
	for {
		select {
		case <-l.kick:
		case <-l.done:
			return
		}
		l.mu.Lock()
		batch := l.queue[:len(l.queue):len(l.queue)]
		l.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		if l.st.StepOutputAppend(l.ctx, l.runID, batch) == nil {
			l.mu.Lock()
			l.queue = l.queue[len(batch):]
			l.mu.Unlock()
		}
	}
}

// take moves what the chunkers give into the queue, in chunks of at most
// maxChunkBytes stamped at. The caller holds mu or owns l alone.
func (l *liveOutput) take(final bool, at time.Time) {
	for i := range l.streams {
		b := l.streams[i].take(final)
		for len(b) > 0 {
			n := min(len(b), maxChunkBytes)
			l.queue = append(l.queue, store.OutputChunkWrite{StepKey: l.key, Attempt: l.attempt, Stream: streamNames[i], Chunk: l.next[i], At: at, Data: b[:n:n]})
			l.next[i]++
			b = b[n:]
		}
	}
}

// rest ends the committer (waiting for a commit in progress) and returns
// the output not yet committed, everything held back included, when the
// program has ended; the caller stores it with the attempt's end. The
// chunks taken at the end carry no time: they take the commit's.
func (l *liveOutput) rest() []store.OutputChunkWrite {
	if l == nil {
		return nil
	}
	if l.kick != nil {
		close(l.done)
		<-l.stopped
	}
	l.take(true, time.Time{})
	q := l.queue
	l.queue = nil
	return q
}

// flush commits the output not yet committed, for an attempt whose end is
// not committed by its runner (it was abandoned: stopped, or its lease
// lost).
func (l *liveOutput) flush() {
	q := l.rest()
	if len(q) == 0 {
		return
	}
	now := l.clk.Now()
	for i := range q {
		if q[i].At.IsZero() {
			q[i].At = now
		}
	}
	_ = l.st.StepOutputAppend(l.ctx, l.runID, q) // best effort: the attempt is over
}
