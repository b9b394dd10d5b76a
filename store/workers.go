package store

import (
	"context"
	"time"
)

// This file holds the registry of worker processes: each worker writes a
// row when it starts and again at every heartbeat, and deletes it when it
// stops gracefully. A worker killed or cut off stops beating: its row stays
// as gone (until it has been gone a day) so that `flowrun workers` still
// shows it. The registry is informative only: no claim, lease or fence
// reads it; leases alone decide who runs what.

// WorkerInfo is one worker process as it last registered.
type WorkerInfo struct {
	// ID is the worker's lease owner prefix: HOST/PID/wN (Owner.String).
	ID          string
	Host        string
	PID         int
	Version     string // the flowrun build it runs
	Concurrency int    // runs it works on at once at most
	Held        int    // runs it held at its last beat
	StartedAt   time.Time
	LastSeen    time.Time
	// Live reports that the worker beat within its TTL, on the store's
	// clock: the database's on Postgres (hosts' clocks may disagree), the
	// caller's on SQLite (one host).
	Live bool
}

// WorkerBeatParams register a worker or renew its registration.
type WorkerBeatParams struct {
	Info WorkerInfo // LastSeen and Live are set by the store
	Now  time.Time  // the caller's clock; Postgres uses its own instead
	// TTL is how long the worker counts as live after this beat.
	TTL time.Duration
}

// WorkerGoneAfter is how long a worker that stopped beating stays listed
// (as gone) before a beat of any worker deletes its row.
const WorkerGoneAfter = 24 * time.Hour

// Workers is the registry of worker processes.
type Workers interface {
	// WorkerBeat inserts or updates the worker's row, and deletes the rows
	// of workers gone for longer than WorkerGoneAfter.
	WorkerBeat(ctx context.Context, p WorkerBeatParams) error
	// WorkerGone deletes the worker's row (a graceful stop). A missing
	// row is not an error.
	WorkerGone(ctx context.Context, id string) error
	// WorkerList returns every registered worker, live ones first, each
	// group by host and id; now is the caller's clock, used as in
	// WorkerInfo.Live.
	WorkerList(ctx context.Context, now time.Time) ([]WorkerInfo, error)
}
