package interp

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// liveSecret has none of the bytes of liveFiller, in any of its forms, so
// that any byte of it in a chunk is a leak.
const liveSecret = "Q7#zX!W9"

const liveFiller = "abcdefghijk \n"

// TestChunkerHoldsBackSecret: a secret the program writes in two pieces,
// with a take between them, is never stored in part: the first piece is
// held back until the rest shows, and the secret is stored as ***.
func TestChunkerHoldsBackSecret(t *testing.T) {
	red := newRedactor(map[string]string{"s": liveSecret})
	c := &chunker{red: red, limit: 1 << 20}
	var got [][]byte
	take := func(final bool) {
		if b := c.take(final); b != nil {
			got = append(got, b)
		}
	}
	c.write([]byte("line one\nhalf " + liveSecret[:4]))
	take(false)
	if len(got) != 1 || bytes.ContainsAny(got[0], liveSecret) {
		t.Fatalf("first take = %q, want the text before the held-back bytes, with no byte of the secret", got)
	}
	c.write([]byte(liveSecret[4:] + " end\n"))
	take(false)
	take(true)
	all := string(bytes.Join(got, nil))
	if want := "line one\nhalf *** end\n"; all != want {
		t.Fatalf("stored %q, want %q", all, want)
	}
	for _, b := range got {
		if bytes.ContainsAny(b, liveSecret) {
			t.Fatalf("a chunk holds part of the secret: %q", b)
		}
	}
}

// TestChunkerRandomSplits: for random texts holding the secret (and its
// encoded forms) cut into random writes with a take after each, the
// chunks hold no byte of the secret, and together they are the redacted
// text.
func TestChunkerRandomSplits(t *testing.T) {
	red := newRedactor(map[string]string{"s": liveSecret})
	rng := rand.New(rand.NewPCG(7, 11))
	forms := []string{liveSecret, "Q7%23zX%21W9", `Q7#zX!W9`}
	for round := range 500 {
		var text strings.Builder
		for range 1 + rng.IntN(6) {
			for range rng.IntN(40) {
				text.WriteByte(liveFiller[rng.IntN(len(liveFiller))])
			}
			text.WriteString(forms[rng.IntN(len(forms))])
		}
		s := text.String()
		c := &chunker{red: red, limit: 1 << 20}
		var got []byte
		for rest := s; rest != ""; {
			n := 1 + rng.IntN(min(len(rest), 12))
			c.write([]byte(rest[:n]))
			rest = rest[n:]
			if b := c.take(false); b != nil {
				if bytes.ContainsAny(b, "Q7#zX!W9%") {
					t.Fatalf("round %d: chunk %q of %q holds part of a secret", round, b, s)
				}
				got = append(got, b...)
			}
		}
		got = append(got, c.take(true)...)
		if want := red.text(s); string(got) != want {
			t.Fatalf("round %d: stored %q, want %q", round, got, want)
		}
	}
}

// TestChunkerLimit: a stream is stored up to limits.output_bytes, and a
// secret straddling the limit is dropped whole; without secrets the cut
// is exactly at the limit.
func TestChunkerLimit(t *testing.T) {
	red := newRedactor(map[string]string{"s": liveSecret})
	c := &chunker{red: red, limit: 20}
	var got []byte
	c.write([]byte(strings.Repeat("a", 16) + liveSecret + strings.Repeat("b", 100)))
	got = append(got, c.take(false)...)
	c.write([]byte("more"))
	got = append(got, c.take(false)...)
	got = append(got, c.take(true)...)
	if want := strings.Repeat("a", 16); string(got) != want {
		t.Fatalf("stored %q, want %q (the secret straddling the limit dropped whole)", got, want)
	}

	c = &chunker{limit: 10}
	c.write([]byte("0123456"))
	got = append(got[:0], c.take(false)...)
	c.write([]byte("789abc"))
	got = append(got, c.take(false)...)
	got = append(got, c.take(true)...)
	if string(got) != "0123456789" {
		t.Fatalf("stored %q, want the first 10 bytes", got)
	}
}

// outputRecorder is an OutputStore that records each commit and counts
// the calls, failing them while fail is set.
type outputRecorder struct {
	mu      sync.Mutex
	commits [][]store.OutputChunkWrite
	calls   int
	fail    bool
}

func (o *outputRecorder) StepOutputAppend(_ context.Context, _ string, cs []store.OutputChunkWrite) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	if o.fail {
		return fmt.Errorf("disk full")
	}
	o.commits = append(o.commits, append([]store.OutputChunkWrite(nil), cs...))
	return nil
}

func (o *outputRecorder) StepOutputChunks(context.Context, string, int64, int) ([]store.OutputChunk, error) {
	return nil, nil
}

// state returns the commits so far and the number of calls.
func (o *outputRecorder) state() ([][]store.OutputChunkWrite, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([][]store.OutputChunkWrite(nil), o.commits...), o.calls
}

// waitCalls waits until the committer has made n calls (it commits in
// its own goroutine); the limit is a safety net, not a timing assumption.
func (o *outputRecorder) waitCalls(t *testing.T, n int) [][]store.OutputChunkWrite {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, calls := o.state()
		if calls >= n {
			return cs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d commit calls, want %d", calls, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func (o *outputRecorder) setFail(f bool) {
	o.mu.Lock()
	o.fail = f
	o.mu.Unlock()
}

// TestLiveOutputBatching: commits come at most once per outputEvery on the
// engine clock; output of an attempt that ends sooner commits nothing of
// its own (rest); a failed commit is tried again with the chunks' numbers
// kept; big output is split into chunks of maxChunkBytes; rest ends the
// committer.
func TestLiveOutputBatching(t *testing.T) {
	clk := clock.NewFake(t0)
	rec := &outputRecorder{}
	l := newLiveOutput(context.Background(), rec, clk, nil, 1<<20, "r", "s", 2)

	l.write(0, []byte("1\n"))
	l.tick()
	if l.kick != nil {
		t.Fatalf("a handover before %s had passed", outputEvery)
	}
	clk.Advance(outputEvery)
	l.write(1, []byte("err\n"))
	l.tick()
	cs := rec.waitCalls(t, 1)
	if len(cs) != 1 || len(cs[0]) != 2 {
		t.Fatalf("after %s: commits %v, want one with a chunk of each stream", outputEvery, cs)
	}
	c := cs[0]
	if c[0].Stream != store.StreamStdout || string(c[0].Data) != "1\n" || c[1].Stream != store.StreamStderr || string(c[1].Data) != "err\n" ||
		c[0].Attempt != 2 || c[0].StepKey != "s" || !c[0].At.Equal(clk.Now()) {
		t.Fatalf("first commit = %+v", c)
	}
	for i := range 5 { // chatty: many writes and ticks within one interval
		clk.Advance(outputEvery / 10)
		l.write(0, fmt.Appendf(nil, "%d\n", i+2))
		l.tick()
	}
	if _, calls := rec.state(); calls != 1 {
		t.Fatalf("%d commits within one interval, want none", calls-1)
	}
	clk.Advance(outputEvery)
	rec.setFail(true)
	l.tick()
	rec.waitCalls(t, 2)
	rec.setFail(false)
	l.write(0, []byte("7\n"))
	clk.Advance(outputEvery)
	l.tick()
	cs = rec.waitCalls(t, 3)
	if len(cs) != 2 {
		t.Fatalf("commits = %d, want 2 (the failed one tried again)", len(cs))
	}
	c = cs[1]
	if len(c) != 2 || c[0].Chunk != 1 || c[1].Chunk != 2 || string(c[0].Data) != "2\n3\n4\n5\n6\n" || string(c[1].Data) != "7\n" {
		t.Fatalf("second commit = %+v", c)
	}

	l.write(0, bytes.Repeat([]byte("x"), 2*maxChunkBytes+1))
	rest := l.rest()
	if len(rest) != 3 || len(rest[0].Data) != maxChunkBytes || len(rest[2].Data) != 1 || rest[2].Chunk != 5 || !rest[0].At.IsZero() {
		t.Fatalf("rest = %d chunks (%d, numbers from %d), want 3 of at most %d bytes, untimed", len(rest), len(rest[0].Data), rest[0].Chunk, maxChunkBytes)
	}
	select {
	case <-l.stopped:
	default:
		t.Fatalf("rest left the committer running")
	}
	if _, calls := rec.state(); calls != 3 {
		t.Fatalf("rest committed on its own")
	}
}

// TestLiveOutputRestKeepsFailed: chunks whose commit failed are returned
// by rest, for the commit of the attempt's end.
func TestLiveOutputRestKeepsFailed(t *testing.T) {
	clk := clock.NewFake(t0)
	rec := &outputRecorder{fail: true}
	l := newLiveOutput(context.Background(), rec, clk, nil, 1<<20, "r", "s", 1)
	clk.Advance(outputEvery)
	l.write(0, []byte("kept\n"))
	l.tick()
	rec.waitCalls(t, 1)
	l.write(0, []byte("end"))
	rest := l.rest()
	if len(rest) != 2 || string(rest[0].Data) != "kept\n" || rest[0].Chunk != 0 || string(rest[1].Data) != "end" || rest[1].Chunk != 1 {
		t.Fatalf("rest = %+v, want the failed chunk and the end", rest)
	}
}

// TestExecOutputStoredLive: an exec step's output is in the store while
// the program runs (before its end is committed), and all of it, redacted,
// once it ends; a secret the program writes in two pieces with a pause
// between them is never stored in part, in any chunk or anywhere in the
// database.
func TestExecOutputStoredLive(t *testing.T) {
	b := setup(t, func(o *Options) { o.Clock = clock.Real{} })
	b.env["MY_TOKEN"] = straddler
	dir := t.TempDir()
	b.compile(fmt.Sprintf(`
workflow "live" {
  version = "1.0.0"
  secret "tok" { env = "MY_TOKEN" }
  step "talk" {
    exec {
      command = ["sh", "-c", "echo first; printf 'x%%s' \"$${T%%?????????}\"; sleep 0.4; printf '%%s\\n' \"$${T#????????}\"; echo 'padding past the holdback'; echo err >&2; while [ ! -e %s/go ]; do sleep 0.05; done; echo last"]
      env     = { T = "{{ secrets.tok }}" }
    }
  }
}`, dir))
	run := b.start("live", nil)
	done := make(chan store.Run, 1)
	go func() { done <- b.drive(run.ID) }()
	var seen string
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(seen, "err") {
		if time.Now().After(deadline) {
			t.Fatalf("the output stored while the step runs is %q, want its first lines", seen)
		}
		time.Sleep(20 * time.Millisecond)
		cs, err := b.st.StepOutputChunks(b.ctx, run.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen = ""
		for _, c := range cs {
			seen += string(c.Data)
			if strings.Contains(string(c.Data), "TOPS") || strings.Contains(string(c.Data), "VALUE") {
				t.Fatalf("a chunk holds part of the secret: %q", c.Data)
			}
		}
	}
	if !strings.Contains(seen, "first\nx***\n") {
		t.Fatalf("stored while running: %q, want the secret as ***", seen)
	}
	if s, err := b.st.StepGet(b.ctx, run.ID, "talk"); err != nil || s.Status != store.StepRunning {
		t.Fatalf("step while its output is read: %v %v, want running", s.Status, err)
	}
	if err := os.WriteFile(dir+"/go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, <-done, store.RunCompleted)
	cs, err := b.st.StepOutputChunks(b.ctx, run.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out, errs string
	for _, c := range cs {
		if c.StepKey != "talk" || c.Attempt != 1 {
			t.Fatalf("chunk of %s attempt %d", c.StepKey, c.Attempt)
		}
		if c.Stream == store.StreamStdout {
			out += string(c.Data)
		} else {
			errs += string(c.Data)
		}
	}
	if out != "first\nx***\npadding past the holdback\nlast\n" || errs != "err\n" {
		t.Fatalf("stored stdout %q, stderr %q", out, errs)
	}
	wantNoLeak(t, b, run.ID, straddler, "TOPS", "OPSE", "VALUE")
}
