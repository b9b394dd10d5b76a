package store

import (
	"context"
	"fmt"
	"time"
)

// Live output of exec steps (semantics.md, "Live output"): what a program
// writes to stdout and stderr is stored while it runs, as chunks of
// redacted bytes, so that logs -f, apply's live view and flowtui show it
// before the step ends, and what was written before a worker died stays
// readable. The engine redacts every chunk before it reaches the store;
// the store keeps bytes and never reads them.

// Output streams.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// OutputChunk is a stored piece of one stream of one attempt.
type OutputChunk struct {
	// Seq increases across the store in commit order: a reader pages
	// through a run's chunks with it (StepOutputChunks).
	Seq     int64  `json:"seq"`
	RunID   string `json:"run_id"`
	StepKey string `json:"step_key"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"` // StreamStdout or StreamStderr
	// Chunk numbers the chunks of one stream of one attempt from 0, in
	// the order of the stream.
	Chunk int       `json:"chunk"`
	At    time.Time `json:"at"`
	Data  []byte    `json:"data"`
}

// OutputChunkWrite stores one chunk. A chunk whose (run, step key,
// attempt, stream, chunk number) is already stored is skipped, so a write
// retried after a commit whose outcome was unknown stores nothing twice.
type OutputChunkWrite struct {
	StepKey string
	Attempt int
	Stream  string
	Chunk   int
	// At is when the chunk was taken from the stream; zero means the
	// transition's Now (Transition.Output).
	At   time.Time
	Data []byte
}

// CheckOutputChunks says, for the backends' StepOutputAppend, which chunk
// cannot be stored on its own: one without a time (only a transition's
// chunks take its Now).
func CheckOutputChunks(chunks []OutputChunkWrite) error {
	for _, c := range chunks {
		if c.At.IsZero() {
			return fmt.Errorf("chunk %d of %s of step %s has no time", c.Chunk, c.Stream, c.StepKey)
		}
	}
	return nil
}

// OutputStore is the live output part of the Store interface.
type OutputStore interface {
	// StepOutputAppend stores chunks of a run in one transaction. Chunks
	// of a run that no longer exists (pruned) are dropped without error.
	StepOutputAppend(ctx context.Context, runID string, chunks []OutputChunkWrite) error
	// StepOutputChunks returns up to limit (0: no limit) chunks of a run
	// whose Seq is above afterSeq, in Seq order. A reader that saw
	// every chunk up to some Seq never later finds one below it.
	StepOutputChunks(ctx context.Context, runID string, afterSeq int64, limit int) ([]OutputChunk, error)
}
