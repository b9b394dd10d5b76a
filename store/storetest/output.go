package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testOutput checks the live output of exec steps: chunks written on
// their own or with a transition come back in commit order, page by seq,
// are stored once when a write is retried, are dropped for a run that is
// gone or a transition fenced off, and go with their run when it is
// pruned.
func testOutput(t *testing.T, newStore func(t *testing.T) store.Store) {
	chunk := func(key string, attempt int, stream string, n int, at time.Time, data string) store.OutputChunkWrite {
		return store.OutputChunkWrite{StepKey: key, Attempt: attempt, Stream: stream, Chunk: n, At: at, Data: []byte(data)}
	}

	parallel(t, "a chunk without a time is refused and none is written", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r1"})
		err := f.s.StepOutputAppend(f.ctx, "r1", []store.OutputChunkWrite{
			chunk("a", 1, store.StreamStdout, 0, at(time.Second), "kept?\n"), chunk("a", 1, store.StreamStdout, 1, time.Time{}, "no time\n")})
		if err == nil || !strings.Contains(err.Error(), "has no time") {
			t.Fatalf("StepOutputAppend of a chunk without a time: %v, want the refusal", err)
		}
		eq(t, "chunks stored", len(f.output("r1", 0, 0)), 0)
	})

	parallel(t, "append and page", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r1"})
		f.insert(store.RunInsertParams{ID: "r2"})
		f.appendOutput("r1", chunk("a", 1, store.StreamStdout, 0, at(time.Second), "one\n"), chunk("a", 1, store.StreamStderr, 0, at(time.Second), "warn\x1b[2J\xff\n"))
		f.appendOutput("r2", chunk("b", 1, store.StreamStdout, 0, at(time.Second), "other run\n"))
		f.appendOutput("r1", chunk("a", 1, store.StreamStdout, 1, at(2*time.Second), "two\n"))

		all := f.output("r1", 0, 0)
		eq(t, "chunks of r1", len(all), 3)
		eq(t, "first", string(all[0].Data), "one\n")
		eq(t, "second (bytes kept exactly)", string(all[1].Data), "warn\x1b[2J\xff\n")
		eq(t, "third", string(all[2].Data), "two\n")
		eq(t, "stream", all[1].Stream, store.StreamStderr)
		eq(t, "step key, attempt, chunk", [3]any{all[2].StepKey, all[2].Attempt, all[2].Chunk}, [3]any{"a", 1, 1})
		eq(t, "run", all[0].RunID, "r1")
		timeEq(t, "time", all[2].At, at(2*time.Second))
		if !(all[0].Seq < all[1].Seq && all[1].Seq < all[2].Seq) {
			t.Fatalf("seqs %d, %d, %d are not increasing", all[0].Seq, all[1].Seq, all[2].Seq)
		}
		page := f.output("r1", all[0].Seq, 1)
		eq(t, "a page of one after the first", len(page), 1)
		eq(t, "the page", page[0].Seq, all[1].Seq)
		eq(t, "after the last", len(f.output("r1", all[2].Seq, 0)), 0)
		eq(t, "chunks of r2", len(f.output("r2", 0, 0)), 1)
		eq(t, "chunks of an unknown run", len(f.output("nope", 0, 0)), 0)
	})

	parallel(t, "a retried write stores nothing twice", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		c := chunk("a", 1, store.StreamStdout, 0, at(time.Second), "once\n")
		f.appendOutput("r", c)
		f.appendOutput("r", c, chunk("a", 1, store.StreamStdout, 1, at(time.Second), "then\n"))
		got := f.output("r", 0, 0)
		eq(t, "chunks", len(got), 2)
		eq(t, "second", string(got[1].Data), "then\n")
	})

	parallel(t, "a chunk of a run that is gone is dropped", newStore, func(t *testing.T, f *fixture) {
		f.appendOutput("gone", chunk("a", 1, store.StreamStdout, 0, at(time.Second), "lost\n"))
		eq(t, "chunks of the unknown run", len(f.output("gone", 0, 0)), 0)
	})

	parallel(t, "a chunk without a time is refused", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		if err := f.s.StepOutputAppend(f.ctx, "r", []store.OutputChunkWrite{chunk("a", 1, store.StreamStdout, 0, time.Time{}, "x")}); err == nil {
			t.Fatalf("StepOutputAppend of a chunk without a time succeeded")
		}
		eq(t, "chunks", len(f.output("r", 0, 0)), 0)
	})

	parallel(t, "with a transition, at its time; not when fenced off", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "r"})
		run := f.claimOne("w", "r", at(time.Second))
		f.appendOutput("r", chunk("a", 1, store.StreamStdout, 0, at(2*time.Second), "live\n"))
		res := f.commit(store.Transition{RunID: "r", Lease: run.Lease, Now: at(3 * time.Second),
			Attempts: []store.AttemptWrite{{StepKey: "a", Attempt: 1, Status: store.AttemptCompleted, FinishedAt: at(3 * time.Second)}},
			Events:   []store.EventWrite{{Kind: "step_completed", StepKey: "a"}},
			Output:   []store.OutputChunkWrite{chunk("a", 1, store.StreamStdout, 1, time.Time{}, "last")}})
		if res.Err != nil {
			t.Fatalf("transition: %v", res.Err)
		}
		got := f.output("r", 0, 0)
		eq(t, "chunks", len(got), 2)
		eq(t, "the transition's chunk", string(got[1].Data), "last")
		timeEq(t, "its time, the transition's", got[1].At, at(3*time.Second))

		stale := run.Lease
		stale.Epoch--
		res = f.commit(store.Transition{RunID: "r", Lease: stale, Now: at(4 * time.Second),
			Output: []store.OutputChunkWrite{chunk("a", 1, store.StreamStdout, 2, time.Time{}, "fenced")}})
		if res.Err == nil {
			t.Fatalf("a transition with a stale lease applied")
		}
		eq(t, "chunks after a fenced-off transition", len(f.output("r", 0, 0)), 2)
	})

	parallel(t, "prune removes the chunks with their run", newStore, func(t *testing.T, f *fixture) {
		f.insert(store.RunInsertParams{ID: "old", Events: []store.EventWrite{{Kind: "run_created"}}})
		f.insert(store.RunInsertParams{ID: "new"})
		f.appendOutput("old", chunk("a", 1, store.StreamStdout, 0, at(time.Second), "1\n"), chunk("a", 1, store.StreamStderr, 0, at(time.Second), "2\n"))
		f.appendOutput("new", chunk("a", 1, store.StreamStdout, 0, at(time.Second), "stays\n"))
		f.end("old", store.RunCompleted, at(time.Minute), 1)
		eq(t, "a dry run counts them", f.prune(store.RunPruneParams{Before: at(time.Hour), DryRun: true}).Output, 2)
		eq(t, "chunks after a dry run", len(f.output("old", 0, 0)), 2)
		res := f.prune(store.RunPruneParams{Before: at(time.Hour)})
		eq(t, "pruned", res, store.PruneResult{Runs: 1, Steps: 1, Attempts: 1, Events: 2, Output: 2})
		eq(t, "chunks of the pruned run", len(f.output("old", 0, 0)), 0)
		eq(t, "chunks of the unfinished run", len(f.output("new", 0, 0)), 1)
	})
}

func (f *fixture) appendOutput(runID string, cs ...store.OutputChunkWrite) {
	f.t.Helper()
	if err := f.s.StepOutputAppend(f.ctx, runID, cs); err != nil {
		f.t.Fatalf("StepOutputAppend(%s): %v", runID, err)
	}
}

func (f *fixture) output(runID string, after int64, limit int) []store.OutputChunk {
	f.t.Helper()
	cs, err := f.s.StepOutputChunks(f.ctx, runID, after, limit)
	if err != nil {
		f.t.Fatalf("StepOutputChunks(%s, %d, %d): %v", runID, after, limit, err)
	}
	return cs
}
