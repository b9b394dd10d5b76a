package interp

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
)

// This file starts many runs of one workflow at once (POST
// /v1/workflows/{workflow}/runs/batch): every item is checked before
// anything is written, and the new runs are created in one transaction.

// maxKeyRaceTries bounds how often StartRuns reads and decides again when
// another start of one of its keys came between its read and its insert,
// beyond once per key of the batch: each lost race means one of the
// batch's keys got a run since the read, which the next read finds and
// the batch then answers with, so concurrent starts of the same keys
// cost a batch at most a read per key; the few more tries are for keys
// whose runs end and start again meanwhile.
const maxKeyRaceTries = 5

// MaxBatchRuns is the most runs one StartRuns call takes.
const MaxBatchRuns = 10000

// BatchParams name the runs to start: one version of one workflow, the
// inputs of each run.
type BatchParams struct {
	Workflow string
	// Version is the stored version to run; "" runs the newest one.
	Version string
	// Items are the given inputs of each run, in order.
	Items []map[string]any
	// New starts a new run for every item, even when one with its key
	// exists.
	New bool
	// WorkDir is where the runs execute; "" the directory recorded when
	// the version was applied (see StartParams.WorkDir).
	WorkDir string
}

// BatchResult is what became of one item: the run it started (Created),
// or the run with its key that it reports instead, as StartRun does.
type BatchResult struct {
	Run     store.Run
	Created bool
}

// BatchItemError is an item that rejects the whole batch: nothing is
// written. Err is an *InputError, a *KeyError, a *KeyInUseError or a
// *DuplicateKeyError.
type BatchItemError struct {
	Index int
	Err   error
}

func (e *BatchItemError) Error() string { return fmt.Sprintf("runs[%d]: %v", e.Index, e.Err) }

func (e *BatchItemError) Unwrap() error { return e.Err }

// DuplicateKeyError is a batch item whose run key an earlier item of the
// same batch has: the two would be one run.
type DuplicateKeyError struct {
	Key   string
	First int // the index of the earlier item
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("its run key %q is the key of runs[%d]; give each run of a batch its own key (or set \"new\")", e.Key, e.First)
}

// BatchSizeError is a batch with no item or too many.
type BatchSizeError struct{ N int }

func (e *BatchSizeError) Error() string {
	if e.N == 0 {
		return "the batch holds no run; give at least one item in \"runs\""
	}
	return fmt.Sprintf("the batch holds %d runs, more than %d; split it", e.N, MaxBatchRuns)
}

// StartRuns starts a batch of runs of one version. Every item is checked
// first, as StartRun checks one (its inputs, its key, the run with its
// key); one bad item rejects the batch with a *BatchItemError naming its
// index and writes nothing. Then the new runs are created in one store
// transaction (store.RunInsertBatch), all or none. An item whose key names
// a run to continue reports that run (Created false), as StartRun does.
func (e *Engine) StartRuns(ctx context.Context, p BatchParams) ([]BatchResult, error) {
	if len(p.Items) == 0 || len(p.Items) > MaxBatchRuns {
		return nil, &BatchSizeError{N: len(p.Items)}
	}
	v, l, err := e.startVersion(ctx, p.Workflow, p.Version)
	if err != nil {
		return nil, err
	}
	type checked struct {
		inputs map[string]any
		key    string
	}
	items := make([]checked, len(p.Items))
	firstOfKey := make(map[string]int, len(p.Items))
	for i, given := range p.Items {
		inputs, err := checkInputs(l.g, given)
		if err != nil {
			return nil, &BatchItemError{Index: i, Err: err}
		}
		key, err := runKey(ctx, l.g, l.prog, inputs)
		if err != nil {
			return nil, &BatchItemError{Index: i, Err: err}
		}
		if j, dup := firstOfKey[key]; dup && !p.New {
			return nil, &BatchItemError{Index: i, Err: &DuplicateKeyError{Key: key, First: j}}
		}
		firstOfKey[key] = i
		items[i] = checked{inputs: inputs, key: key}
	}
	workDir, err := e.startDir(ctx, v, p.WorkDir)
	if err != nil {
		return nil, err
	}
	// The keys are read, the batch decided and the new runs inserted; the
	// insert checks in its transaction that no key got a run since the
	// read (store.ErrKeyRace), and the batch is then read and decided
	// again: concurrent starts of a key agree on one run (language.md §2).
	var out []BatchResult
	var ins []store.RunInsertParams
	var at []int
	for try := 1; ; try++ {
		out = make([]BatchResult, len(items))
		seen := map[string]string{}
		if !p.New {
			// one read for every key of the batch
			keys := make([]string, len(items))
			for i, it := range items {
				keys[i] = it.key
			}
			byKey, err := e.st.RunsByKeys(ctx, p.Workflow, keys)
			if err != nil {
				return nil, fmt.Errorf("start workflow %q: look up the runs of the batch's keys: %w", p.Workflow, err)
			}
			for i, it := range items {
				old, found := byKey[it.key]
				if it.key != "" {
					seen[it.key] = old.ID
				}
				if !found || !continues(old, v) {
					continue
				}
				if !old.Status.Terminal() {
					if differ := differingInputs(p.Items[i], it.inputs, old); len(differ) > 0 {
						return nil, &BatchItemError{Index: i, Err: &KeyInUseError{Workflow: p.Workflow, Key: it.key, Run: old.ID, Status: old.Status, Inputs: differ}}
					}
				}
				out[i] = BatchResult{Run: old}
			}
		}
		ins, at = ins[:0], at[:0]
		for i, it := range items {
			if out[i].Run.ID != "" {
				continue
			}
			ip := e.insertParams(l, v, it.inputs, it.key)
			ip.WorkDir = workDir
			ins = append(ins, ip)
			at = append(at, i)
		}
		err := e.st.RunInsertBatchKeyed(ctx, p.Workflow, ins, seen)
		if errors.Is(err, store.ErrKeyRace) && try < len(firstOfKey)+maxKeyRaceTries {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("start %d runs of workflow %q: %w", len(ins), p.Workflow, err)
		}
		break
	}
	for k, ip := range ins {
		out[at[k]] = BatchResult{Run: insertedRun(ip), Created: true}
	}
	if len(ins) > 0 {
		e.wakePools()
	}
	return out, nil
}

// insertedRun is the run a RunInsert of p creates, as the store reads it
// back: pending, first attempt, nothing else yet.
func insertedRun(p store.RunInsertParams) store.Run {
	root := p.RootRunID
	if root == "" {
		root = p.ID
	}
	avail := p.AvailableAt
	if avail.IsZero() {
		avail = p.Now
	}
	return store.Run{
		ID: p.ID, Workflow: p.Workflow, Version: p.Version, GraphHash: p.GraphHash, Key: p.Key,
		Status: store.RunPending, Inputs: p.Inputs, CreatedAt: p.Now, AvailableAt: avail, DeadlineAt: p.DeadlineAt,
		ParentRunID: p.ParentRunID, ParentStepKey: p.ParentStepKey, RootRunID: root, Attempt: 1,
		WorkDir: p.WorkDir, UpdatedAt: p.Now,
	}
}

// IsBatchItem reports whether err rejects a batch because of one item, and
// which.
func IsBatchItem(err error) (int, bool) {
	var be *BatchItemError
	if errors.As(err, &be) {
		return be.Index, true
	}
	return 0, false
}
