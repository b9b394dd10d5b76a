package storetest

import (
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// testWorkers: the registry of workers. Liveness is decided on the store's
// clock (the database's on Postgres), so the beats here are written at the
// real time and compared a second later.
func testWorkers(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "beat list gone", newStore, func(t *testing.T, f *fixture) {
		if ws, err := f.s.WorkerList(f.ctx, wallNow()); err != nil || len(ws) != 0 {
			t.Fatalf("WorkerList of a new store = %v, %v; want none", ws, err)
		}
		started := wallNow().Truncate(time.Microsecond)
		a := store.WorkerInfo{ID: "h1/10/w1", Host: "h1", PID: 10, Version: "v1.2.3", Concurrency: 8, StartedAt: started}
		b := store.WorkerInfo{ID: "h2/20/w1", Host: "h2", PID: 20, Version: "v1.2.3", Concurrency: 4, StartedAt: started}
		for _, w := range []store.WorkerInfo{a, b} {
			if err := f.s.WorkerBeat(f.ctx, store.WorkerBeatParams{Info: w, Now: wallNow(), TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
		}
		// A second beat updates what a worker holds, not when it started.
		a2 := a
		a2.Held, a2.StartedAt = 3, started.Add(time.Hour)
		if err := f.s.WorkerBeat(f.ctx, store.WorkerBeatParams{Info: a2, Now: wallNow(), TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		ws, err := f.s.WorkerList(f.ctx, wallNow())
		if err != nil || len(ws) != 2 {
			t.Fatalf("WorkerList = %+v, %v; want two workers", ws, err)
		}
		got := ws[0]
		if got.ID != a.ID || got.Host != "h1" || got.PID != 10 || got.Version != "v1.2.3" || got.Concurrency != 8 ||
			got.Held != 3 || !got.StartedAt.Equal(started) || !got.Live || got.LastSeen.IsZero() {
			t.Errorf("WorkerList[0] = %+v; want h1's row, held 3, started %v, live", got, started)
		}
		if ws[1].ID != b.ID || !ws[1].Live {
			t.Errorf("WorkerList[1] = %+v; want h2's row, live", ws[1])
		}

		// A worker whose registration lapsed is listed as gone, after
		// the live ones.
		if err := f.s.WorkerBeat(f.ctx, store.WorkerBeatParams{Info: a, Now: wallNow(), TTL: time.Microsecond}); err != nil {
			t.Fatal(err)
		}
		ws, err = f.s.WorkerList(f.ctx, wallNow().Add(time.Second))
		if err != nil || len(ws) != 2 || ws[0].ID != b.ID || !ws[0].Live || ws[1].ID != a.ID || ws[1].Live {
			t.Fatalf("WorkerList after h1 lapsed = %+v, %v; want h2 live, then h1 gone", ws, err)
		}

		// A graceful stop removes the row; twice is not an error.
		for range 2 {
			if err := f.s.WorkerGone(f.ctx, b.ID); err != nil {
				t.Fatal(err)
			}
		}
		ws, err = f.s.WorkerList(f.ctx, wallNow())
		if err != nil || len(ws) != 1 || ws[0].ID != a.ID {
			t.Fatalf("WorkerList after h2 stopped = %+v, %v; want h1 alone", ws, err)
		}
	})
}

// wallNow is the real time: the registry's liveness is compared with the
// database's clock on Postgres, so the suite's fixed epoch would not do.
func wallNow() time.Time { return time.Now() }
