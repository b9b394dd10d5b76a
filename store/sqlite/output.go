package sqlite

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// insertOutputSQL stores one chunk of live output, unless its run is gone
// (pruned while a stale worker still wrote) or the chunk is stored
// already (a retried write).
const insertOutputSQL = `INSERT OR IGNORE INTO step_output (run_id, step_key, attempt, stream, chunk, at, data)
	SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1)`

// outputCols are the columns scanOutput reads.
const outputCols = `seq, run_id, step_key, attempt, stream, chunk, at, data`

func scanOutput(sc sqlrow.Scanner) (store.OutputChunk, error) {
	var c store.OutputChunk
	err := sc.Scan(&c.Seq, &c.RunID, &c.StepKey, &c.Attempt, &c.Stream, &c.Chunk, sqlrow.Time(&c.At), blobCol{&c.Data})
	if c.Data == nil && err == nil {
		c.Data = []byte{}
	}
	return c, err
}

// outputWrites stores chunks of a run in the write transaction; a zero At
// is now (unix microseconds).
func (w *wtx) outputWrites(runID string, now int64, chunks []store.OutputChunkWrite) error {
	for _, c := range chunks {
		at := now
		if !c.At.IsZero() {
			at = c.At.UnixMicro()
		}
		data := c.Data
		if data == nil {
			data = []byte{}
		}
		if _, err := w.exec(insertOutputSQL, runID, c.StepKey, c.Attempt, c.Stream, c.Chunk, at, data); err != nil {
			return fmt.Errorf("storing output chunk %d of %s of step %s attempt %d: %w", c.Chunk, c.Stream, c.StepKey, c.Attempt, err)
		}
	}
	return nil
}

// StepOutputAppend stores chunks of live output of a run in one write
// transaction.
func (s *Store) StepOutputAppend(ctx context.Context, runID string, chunks []store.OutputChunkWrite) error {
	if len(chunks) == 0 {
		return nil
	}
	if err := store.CheckOutputChunks(chunks); err != nil {
		return fmt.Errorf("storing the output of run %s: %w", runID, err)
	}
	return s.write(ctx, "storing the output of run "+runID, func(w *wtx) error {
		return w.outputWrites(runID, 0, chunks)
	})
}

// StepOutputChunks pages through a run's output chunks in seq order,
// through step_output_run.
func (s *Store) StepOutputChunks(ctx context.Context, runID string, afterSeq int64, limit int) ([]store.OutputChunk, error) {
	lim := int64(-1) // SQLite: a negative LIMIT is no limit
	if limit > 0 {
		lim = int64(limit)
	}
	cs, err := readAll(ctx, s, scanOutput, `SELECT `+outputCols+` FROM step_output WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3`,
		runID, afterSeq, lim)
	return cs, s.fail("reading the output of run "+runID, err)
}
