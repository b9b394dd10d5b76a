package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// insertOutputSQL stores one chunk of live output, unless its run is gone
// (pruned while a stale worker still wrote) or the chunk is stored
// already (a retried write).
const insertOutputSQL = `INSERT INTO step_output (run_id, step_key, attempt, stream, chunk, at, data)
	SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM runs WHERE id = $1)
	ON CONFLICT (run_id, step_key, attempt, stream, chunk) DO NOTHING`

// outputCols are the columns scanOutput reads.
const outputCols = `seq, run_id, step_key, attempt, stream, chunk, at, data`

func scanOutput(sc sqlrow.Scanner) (store.OutputChunk, error) {
	var c store.OutputChunk
	err := sc.Scan(&c.Seq, &c.RunID, &c.StepKey, &c.Attempt, &c.Stream, &c.Chunk, sqlrow.Time(&c.At), &c.Data)
	if c.Data == nil && err == nil {
		c.Data = []byte{}
	}
	return c, err
}

// queuedOutput is a chunk waiting for finish, which inserts chunks under
// the events lock so that seq order is commit order, as event ids are.
type queuedOutput struct {
	runID string
	at    int64
	c     store.OutputChunkWrite
}

// appendOutput queues chunks of a run; a zero At is at.
func (w *wtx) appendOutput(runID string, at int64, chunks []store.OutputChunkWrite) {
	for _, c := range chunks {
		w.output = append(w.output, queuedOutput{runID, at, c})
	}
}

// queueOutput queues the inserts of the queued chunks on b.
func (w *wtx) queueOutput(b *pgx.Batch) {
	for _, q := range w.output {
		at := q.at
		if !q.c.At.IsZero() {
			at = q.c.At.UnixMicro()
		}
		data := q.c.Data
		if data == nil {
			data = []byte{}
		}
		b.Queue(insertOutputSQL, q.runID, q.c.StepKey, q.c.Attempt, q.c.Stream, q.c.Chunk, at, data)
	}
}

// readOutput reads the results of queueOutput's statements.
func (w *wtx) readOutput(br pgx.BatchResults) error {
	for _, q := range w.output {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("storing output chunk %d of %s of step %s attempt %d of run %s: %w", q.c.Chunk, q.c.Stream, q.c.StepKey, q.c.Attempt, q.runID, err)
		}
	}
	return nil
}

// StepOutputAppend stores chunks of live output of a run in one
// transaction.
func (s *Store) StepOutputAppend(ctx context.Context, runID string, chunks []store.OutputChunkWrite) error {
	if len(chunks) == 0 {
		return nil
	}
	if err := store.CheckOutputChunks(chunks); err != nil {
		return fmt.Errorf("storing the output of run %s: %w", runID, err)
	}
	return s.write(ctx, "storing the output of run "+runID, func(w *wtx) error {
		w.appendOutput(runID, 0, chunks)
		return nil
	})
}

// StepOutputChunks pages through a run's output chunks in seq order,
// through step_output_run.
func (s *Store) StepOutputChunks(ctx context.Context, runID string, afterSeq int64, limit int) ([]store.OutputChunk, error) {
	var lim any // Postgres: LIMIT NULL is no limit
	if limit > 0 {
		lim = int64(limit)
	}
	cs, err := all(ctx, s.pool, scanOutput, `SELECT `+outputCols+` FROM step_output WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3::bigint`,
		runID, afterSeq, lim)
	return cs, s.fail("reading the output of run "+runID, err)
}
