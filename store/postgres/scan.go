package postgres

import (
	"strings"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// Column encodings and the row scanners are store/sqlite's, in package
// sqlrow: times are BIGINT unix microseconds, JSON is TEXT, NULL for empty.

// runCols are the columns sqlrow.ScanRun reads, in order.
const runCols = `id, workflow, version, graph_hash, key, status, inputs, outputs, error,
	created_at, started_at, finished_at, available_at, deadline_at,
	lease_owner, lease_epoch, lease_expires_at, parent_run_id, parent_step_key, root_run_id,
	attempts_used, cancel_requested, wait_reason, updated_at, attempt, work_dir,
	trace_id, trace_span_id, trace_parent_span_id`

// qualified prefixes every column of a column list with table + ".", for a
// statement where a bare name would be ambiguous (UPDATE ... FROM).
func qualified(table, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = table + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// scanVersion reads a version row of sqlrow.VersionCols (or VersionHeadCols).
func scanVersion(sc sqlrow.Scanner) (store.Version, error) {
	var v store.Version
	err := sc.Scan(&v.Workflow, &v.Version, &v.Major, &v.Minor, &v.Patch, &v.Hash, &v.Graph, sqlrow.Time(&v.CreatedAt), &v.Revision)
	return v, err
}
