package interp

import (
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestOutputFollower: lines come out when their newline is stored, in
// store order, split at MaxOutputLine; an unended line is held until
// Flush (up to a time) or until a later attempt of its step writes; the
// filter keeps step keys; the cursor moves past every chunk read.
func TestOutputFollower(t *testing.T) {
	b := setup(t)
	if _, err := b.st.RunInsert(b.ctx, store.RunInsertParams{ID: "r", Workflow: "w", Version: "1.0.0", GraphHash: "h", Key: "k", Now: t0, AvailableAt: t0}); err != nil {
		t.Fatal(err)
	}
	put := func(key string, attempt int, stream string, n int, at time.Duration, data string) {
		t.Helper()
		if err := b.st.StepOutputAppend(b.ctx, "r", []store.OutputChunkWrite{{StepKey: key, Attempt: attempt, Stream: stream, Chunk: n, At: t0.Add(at), Data: []byte(data)}}); err != nil {
			t.Fatal(err)
		}
	}
	texts := func(ls []OutputLine) string {
		var s []string
		for _, l := range ls {
			p := ""
			if l.Partial {
				p = "~"
			}
			s = append(s, l.StepKey+"/"+l.Stream+"/"+string(rune('0'+l.Attempt))+":"+l.Text+p)
		}
		return strings.Join(s, ",")
	}
	f := NewOutputFollower(b.st, "r", func(k string) bool { return k != "skip" })
	put("a", 1, store.StreamStdout, 0, time.Second, "one\ntw")
	put("a", 1, store.StreamStderr, 0, time.Second, "err\n")
	put("skip", 1, store.StreamStdout, 0, time.Second, "hidden\n")
	ls, err := f.Next(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(ls); got != "a/stdout/1:one,a/stderr/1:err" {
		t.Fatalf("first lines = %s", got)
	}
	if len(f.Flush("a", t0)) != 0 {
		t.Fatalf("Flush up to a time before the unended line gave it out")
	}
	put("a", 1, store.StreamStdout, 1, 2*time.Second, "o\nthree")
	ls, _ = f.Next(b.ctx)
	if got := texts(ls); got != "a/stdout/1:two" || !ls[0].At.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("second lines = %s (at %v)", got, ls[0].At)
	}
	put("a", 2, store.StreamStdout, 0, 3*time.Second, strings.Repeat("x", MaxOutputLine+5)+"\n")
	ls, _ = f.Next(b.ctx)
	if got := texts(ls); got != "a/stdout/1:three~,a/stdout/2:"+strings.Repeat("x", MaxOutputLine)+"~,a/stdout/2:xxxxx" {
		t.Fatalf("lines after a new attempt = %.80s…", got)
	}
	put("b", 1, store.StreamStdout, 0, 4*time.Second, "unended")
	if ls, _ = f.Next(b.ctx); len(ls) != 0 {
		t.Fatalf("an unended line came out: %s", texts(ls))
	}
	if got := texts(f.Flush("", time.Time{})); got != "b/stdout/1:unended~" {
		t.Fatalf("Flush = %s", got)
	}
	cs, _ := b.st.StepOutputChunks(b.ctx, "r", 0, 0)
	if f.Cursor() != cs[len(cs)-1].Seq {
		t.Fatalf("cursor %d, want the last chunk's %d", f.Cursor(), cs[len(cs)-1].Seq)
	}
}
