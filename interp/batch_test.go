package interp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/store"
)

const batchWorkflow = `workflow "batch" {
  version = "1.0.0"
  input "id" { type = string }
  input "n" {
    type    = number
    default = 1
  }
  key = "input.id"
  step "s" {
    exec { command = ["pwd"] }
  }
  output "dir" { value = "{{ steps.s.output.stdout.trim() }}" }
}`

// countingInserts counts the store's run inserts.
type countingInserts struct {
	store.Store
	single, batches, byKey, byKeys atomic.Int64
}

func (c *countingInserts) RunGetByKey(ctx context.Context, workflow, key string) (store.Run, error) {
	c.byKey.Add(1)
	return c.Store.RunGetByKey(ctx, workflow, key)
}

func (c *countingInserts) RunsByKeys(ctx context.Context, workflow string, keys []string) (map[string]store.Run, error) {
	c.byKeys.Add(1)
	return c.Store.RunsByKeys(ctx, workflow, keys)
}

func (c *countingInserts) RunInsert(ctx context.Context, p store.RunInsertParams) (store.Run, error) {
	c.single.Add(1)
	return c.Store.RunInsert(ctx, p)
}

func (c *countingInserts) RunInsertBatch(ctx context.Context, ps []store.RunInsertParams) error {
	c.batches.Add(1)
	return c.Store.RunInsertBatch(ctx, ps)
}

func (c *countingInserts) RunInsertBatchKeyed(ctx context.Context, workflow string, ps []store.RunInsertParams, seen map[string]string) error {
	c.batches.Add(1)
	return c.Store.RunInsertBatchKeyed(ctx, workflow, ps, seen)
}

func (c *countingInserts) RunInsertKeyed(ctx context.Context, p store.RunInsertParams, keep func(store.Run) (bool, error)) (store.Run, bool, error) {
	c.single.Add(1)
	return c.Store.RunInsertKeyed(ctx, p, keep)
}

// TestStartRunsBatch: a batch reads its keys' runs with one store call and
// creates its runs with one more, in
// item order, each with its key; an item with the key of an unfinished run
// reports that run; the runs execute in the directory recorded with the
// version.
func TestStartRunsBatch(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	m := b.compileAt(batchWorkflow, dir)
	_ = m
	first := b.startKey("batch", map[string]any{"id": "a0"})
	ci := &countingInserts{Store: b.st}
	b.e = New(ci, b.e.opts)
	var items []map[string]any
	for i := range 5 {
		items = append(items, map[string]any{"id": fmt.Sprintf("a%d", i), "n": float64(i)})
	}
	items[0] = map[string]any{"id": "a0"} // the run started above: reported, not created again
	res, err := b.e.StartRuns(b.ctx, BatchParams{Workflow: "batch", Items: items})
	if err != nil {
		t.Fatalf("StartRuns: %v", err)
	}
	if ci.batches.Load() != 1 || ci.single.Load() != 0 || ci.byKeys.Load() != 1 || ci.byKey.Load() != 0 {
		t.Fatalf("store calls: %d batch inserts, %d single inserts, %d key reads of the batch, %d of one key; want 1, 0, 1, 0",
			ci.batches.Load(), ci.single.Load(), ci.byKeys.Load(), ci.byKey.Load())
	}
	if res[0].Created || res[0].Run.ID != first.ID {
		t.Errorf("item 0 = %+v, want the unfinished run %s reported", res[0], first.ID)
	}
	for i := 1; i < 5; i++ {
		r := res[i]
		if !r.Created || r.Run.Key != fmt.Sprintf("a%d", i) || r.Run.Status != store.RunPending || r.Run.WorkDir != dir {
			t.Errorf("item %d = %+v, want a new pending run with key a%d in %s", i, r, i, dir)
		}
		got, err := b.st.RunGet(b.ctx, r.Run.ID)
		if err != nil {
			t.Fatalf("RunGet: %v", err)
		}
		if got.Key != r.Run.Key || got.WorkDir != dir || got.Version != "1.0.0" || got.Attempt != r.Run.Attempt || !got.CreatedAt.Equal(r.Run.CreatedAt) {
			t.Errorf("stored run %+v differs from the result %+v", got, r.Run)
		}
		wantJSON(t, "inputs", got.Inputs, fmt.Sprintf(`{"id":"a%d","n":%d}`, i, i))
	}
	done := b.drive(res[3].Run.ID)
	wantStatus(t, done, store.RunCompleted)
	wantJSON(t, "outputs", done.Outputs, fmt.Sprintf(`{"dir":%q}`, dir))
}

// TestStartRunsBadItem: one bad item rejects the batch, naming its index,
// and nothing is written.
func TestStartRunsBadItem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items []map[string]any
		index int
		want  string
		as    any
	}{
		{"wrong type", []map[string]any{{"id": "x"}, {"id": "y", "n": "many"}}, 1, `input "n"`, new(*InputError)},
		{"unknown input", []map[string]any{{"id": "x"}, {"id": "y"}, {"id": "z", "m": 1.0}}, 2, `"m"`, new(*InputError)},
		{"missing input", []map[string]any{{}}, 0, `"id"`, new(*InputError)},
		{"same key twice", []map[string]any{{"id": "x"}, {"id": "y"}, {"id": "x"}}, 2, "key of runs[0]", new(*DuplicateKeyError)},
		{"key in use with other inputs", []map[string]any{{"id": "x"}, {"id": "busy", "n": 9.0}}, 1, "still pending", new(*KeyInUseError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			b.compile(batchWorkflow)
			b.startKey("batch", map[string]any{"id": "busy"})
			_, err := b.e.StartRuns(b.ctx, BatchParams{Workflow: "batch", Items: tc.items})
			i, ok := IsBatchItem(err)
			if !ok || i != tc.index || !strings.Contains(err.Error(), fmt.Sprintf("runs[%d]", tc.index)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want item %d rejected with %q", err, tc.index, tc.want)
			}
			if !errors.As(err, tc.as) {
				t.Errorf("err = %T %v, want it to wrap %T", err, err, tc.as)
			}
			runs, err := b.st.RunList(b.ctx, store.RunListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 {
				t.Errorf("%d runs stored, want only the one started before the batch", len(runs))
			}
		})
	}
	b := setup(t)
	b.compile(batchWorkflow)
	var se *BatchSizeError
	if _, err := b.e.StartRuns(b.ctx, BatchParams{Workflow: "batch"}); !errors.As(err, &se) {
		t.Errorf("empty batch: %v, want a BatchSizeError", err)
	}
	if _, err := b.e.StartRuns(b.ctx, BatchParams{Workflow: "batch", Items: make([]map[string]any, MaxBatchRuns+1)}); !errors.As(err, &se) {
		t.Errorf("batch over the limit: %v, want a BatchSizeError", err)
	}
	if _, err := b.e.StartRuns(b.ctx, BatchParams{Workflow: "nope", Items: []map[string]any{{}}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown workflow: %v, want ErrNotFound", err)
	}
}

// TestStartRunsKeyRace: eight batches and eight single starts of the same
// twenty keys, all at once, create one run per key, and every start
// answers with that run (language.md §2). A batch that reads its keys
// before another start of one of them commits reads and decides again
// (store.ErrKeyRace) instead of creating a second run.
func TestStartRunsKeyRace(t *testing.T) {
	b := setup(t)
	b.compileAt(batchWorkflow, t.TempDir())
	var items []map[string]any
	for i := range 20 {
		items = append(items, map[string]any{"id": fmt.Sprintf("k%d", i)})
	}
	var mu sync.Mutex
	byKey := map[string]map[string]bool{}
	note := func(r store.Run) {
		mu.Lock()
		defer mu.Unlock()
		if byKey[r.Key] == nil {
			byKey[r.Key] = map[string]bool{}
		}
		byKey[r.Key][r.ID] = true
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if g%2 == 0 {
				res, err := b.e.StartRuns(b.ctx, BatchParams{Workflow: "batch", Items: items})
				if err != nil {
					t.Errorf("StartRuns: %v", err)
					return
				}
				for _, r := range res {
					note(r.Run)
				}
				return
			}
			for _, it := range items {
				r, _, err := b.e.StartRun(b.ctx, StartParams{Workflow: "batch", Inputs: it})
				if err != nil {
					t.Errorf("StartRun: %v", err)
					return
				}
				note(r)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(byKey) != 20 {
		t.Fatalf("%d keys answered, want 20", len(byKey))
	}
	for k, ids := range byKey {
		if len(ids) != 1 {
			t.Errorf("key %s was answered with %d runs, want one", k, len(ids))
		}
	}
	runs, err := b.st.RunList(b.ctx, store.RunListParams{Workflow: "batch"})
	if err != nil || len(runs) != 20 {
		t.Fatalf("the store holds %d runs of the workflow (%v), want 20", len(runs), err)
	}
}

// losingInserts is a store where, before each of the first left batch
// inserts, another start wins the race for one more of the batch's keys.
type losingInserts struct {
	store.Store
	left int
}

func (l *losingInserts) RunInsertBatchKeyed(ctx context.Context, workflow string, ps []store.RunInsertParams, seen map[string]string) error {
	if l.left > 0 && len(ps) > 0 {
		l.left--
		if err := l.Store.RunInsertBatchKeyed(ctx, workflow, ps[:1], map[string]string{ps[0].Key: seen[ps[0].Key]}); err != nil {
			return err
		}
	}
	return l.Store.RunInsertBatchKeyed(ctx, workflow, ps, seen)
}

// TestStartRunsLosesManyRaces: a batch whose keys other starts take one
// by one, between each of its reads and its insert, more times than a
// fixed number of tries, still answers every item: the runs the others
// started, and the ones it creates. Each lost race hands it a run, so the
// tries it needs grow with its keys.
func TestStartRunsLosesManyRaces(t *testing.T) {
	b := setup(t)
	b.compileAt(batchWorkflow, t.TempDir())
	const keys, lost = 12, 10
	b.e = New(&losingInserts{Store: b.st, left: lost}, b.e.opts)
	var items []map[string]any
	for i := range keys {
		items = append(items, map[string]any{"id": fmt.Sprintf("k%d", i)})
	}
	res, err := b.e.StartRuns(b.ctx, BatchParams{Workflow: "batch", Items: items})
	if err != nil {
		t.Fatalf("StartRuns: %v", err)
	}
	created := 0
	for i, r := range res {
		if r.Run.Key != fmt.Sprintf("k%d", i) {
			t.Errorf("item %d: run %s of key %q", i, r.Run.ID, r.Run.Key)
		}
		if r.Created {
			created++
		}
		if got, err := b.st.RunGetByKey(b.ctx, "batch", r.Run.Key); err != nil || got.ID != r.Run.ID {
			t.Errorf("key %s: the store holds run %s (%v), the batch answered %s", r.Run.Key, got.ID, err, r.Run.ID)
		}
	}
	if created != keys-lost {
		t.Errorf("the batch created %d runs, want %d (the others started %d)", created, keys-lost, lost)
	}
}
