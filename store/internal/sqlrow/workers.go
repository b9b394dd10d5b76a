package sqlrow

import "github.com/flowrun/flowrun/store"

// WorkerCols are the columns ScanWorker reads, in order, before the
// live flag each query computes on its own clock.
const WorkerCols = `id, host, pid, version, concurrency, held, started_at, last_seen`

// ScanWorker reads a worker row of WorkerCols followed by its live flag.
func ScanWorker(sc Scanner) (store.WorkerInfo, error) {
	var w store.WorkerInfo
	err := sc.Scan(&w.ID, &w.Host, &w.PID, &w.Version, &w.Concurrency, &w.Held,
		Time(&w.StartedAt), Time(&w.LastSeen), &w.Live)
	return w, err
}
