package sqlite

import (
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// Column encodings and the row scanners are store/postgres's, in package
// sqlrow: times are unix microseconds, JSON is TEXT, NULL for empty.

// blobCol scans a BLOB column into a slice without the copy that
// database/sql makes for a *[]byte destination: modernc.org/sqlite hands
// each value over in a slice it allocated for that value alone and never
// reuses (conn.columnBlob), so the slice is kept as it is. A stored graph
// is megabytes for a long workflow; the second copy was that much more
// garbage at every graph load (TestVersionGraphsKept checks that rows
// scanned one after another keep their own bytes).
type blobCol struct{ b *[]byte }

func (c blobCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.b = nil
	case []byte:
		*c.b = x
	case string:
		*c.b = []byte(x)
	default:
		return fmt.Errorf("blob column holds %T", v)
	}
	return nil
}

// runCols are the columns sqlrow.ScanRun reads, in order. The inputs are in
// run_inputs (migration 0005), out of the row every transition rewrites.
const runCols = runColsHead + inputsCol + runColsTail

// runColsHead and runColsTail are runCols before and after the inputs.
const runColsHead = `id, workflow, version, graph_hash, key, status,
	`

const runColsTail = `, outputs, error,
	created_at, started_at, finished_at, available_at, deadline_at,
	lease_owner, lease_epoch, lease_expires_at, parent_run_id, parent_step_key, root_run_id,
	attempts_used, cancel_requested, wait_reason, updated_at, attempt, work_dir,
	trace_id, trace_span_id, trace_parent_span_id`

// inputsCol is the inputs column of runCols.
const inputsCol = `(SELECT ri.inputs FROM run_inputs ri WHERE ri.run_id = runs.id)`

// scanVersion reads a version row of sqlrow.VersionCols (or VersionHeadCols).
func scanVersion(sc sqlrow.Scanner) (store.Version, error) {
	var v store.Version
	err := sc.Scan(&v.Workflow, &v.Version, &v.Major, &v.Minor, &v.Patch, &v.Hash, blobCol{&v.Graph}, sqlrow.Time(&v.CreatedAt), &v.Revision)
	return v, err
}
