package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestWorkerClockIsTheDatabases: hosts' clocks may disagree, so a worker
// whose host runs a day ahead (or behind) is live for its TTL on the
// database's clock, no longer and no shorter, and its last_seen is the
// database's time.
func TestWorkerClockIsTheDatabases(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	real := time.Now()
	for _, skew := range []time.Duration{24 * time.Hour, -24 * time.Hour} {
		w := store.WorkerInfo{ID: "skewed/1/w1", Host: "skewed", PID: 1, Version: "v", Concurrency: 1, StartedAt: real}
		if err := s.WorkerBeat(ctx, store.WorkerBeatParams{Info: w, Now: real.Add(skew), TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
		// The reader's clock is skewed too: it must not matter either.
		ws, err := s.WorkerList(ctx, real.Add(-skew))
		if err != nil || len(ws) != 1 {
			t.Fatalf("WorkerList = %+v, %v", ws, err)
		}
		if !ws[0].Live {
			t.Errorf("skew %v: a worker that beat now with a TTL of a minute is not live", skew)
		}
		if d := ws[0].LastSeen.Sub(real); d < -time.Minute || d > time.Minute {
			t.Errorf("skew %v: last seen %v, %v from the real time; want the database's clock", skew, ws[0].LastSeen, d)
		}
		if err := s.WorkerBeat(ctx, store.WorkerBeatParams{Info: w, Now: real.Add(skew), TTL: time.Microsecond}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		if ws, err := s.WorkerList(ctx, real.Add(-skew)); err != nil || len(ws) != 1 || ws[0].Live {
			t.Errorf("skew %v: a worker whose TTL passed on the database's clock = %+v, %v; want gone", skew, ws, err)
		}
	}
}
