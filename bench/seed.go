package bench

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"
)

// seedParams shape the large store of the list scenario.
type seedParams struct {
	runs        int    // runs of the 10-step exec workflow
	stepsPerRun int    // each with a completed step and one attempt per step
	workflow    string // stored workflow the runs belong to
	version     string
	hash        string
	// long is a run of longWorkflow with longSteps completed set steps.
	long         string
	longWorkflow string
	longHash     string
	longSteps    int
}

// seedRunID is the id of the i-th seeded run: 26 characters, increasing
// with i, in the alphabet of real run ids.
func seedRunID(i int) string { return fmt.Sprintf("0SEED%021d", i) }

// seed fills the store file at path with p.runs finished runs of a
// 10-step exec workflow (every step completed, one attempt each, three
// events per run: run_created, claimed, run_completed), the last 1% of them
// still pending, plus one long run of p.longSteps completed steps.
//
// It writes straight into the schema, in one transaction, with prepared
// INSERTs on a connection of its own: making 1,000,000 attempts through the
// engine would take longer than the whole benchmark. Only the seeding
// bypasses the engine; the scenario then measures through the store.
func seed(ctx context.Context, path string, p seedParams) error {
	db, err := openRaw(path, "OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	defer tx.Rollback()
	prep := func(q string) (*sql.Stmt, error) {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("seeding: preparing %q: %w", q, err)
		}
		return st, nil
	}
	insRun, err := prep(`INSERT INTO runs (id, workflow, version, graph_hash, key, status, outputs,
		created_at, started_at, finished_at, available_at, root_run_id, attempts_used, updated_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?8, ?9, ?9, ?10, ?9, ?1, ?11, COALESCE(?10, ?9))`)
	if err != nil {
		return err
	}
	// Inputs are stored apart from the run's row, as the store does (its
	// migration 0005).
	insInputs, err := prep(`INSERT INTO run_inputs (run_id, inputs) VALUES (?1, ?2)`)
	if err != nil {
		return err
	}
	insStep, err := prep(`INSERT INTO steps (run_id, key, step, status, attempts, output, started_at, finished_at)
		VALUES (?1, ?2, ?2, 'completed', ?3, ?4, ?5, ?5)`)
	if err != nil {
		return err
	}
	insAtt, err := prep(`INSERT INTO step_attempts (run_id, step_key, attempt, status, owner, started_at, finished_at, output, idempotency_key)
		VALUES (?1, ?2, 1, 'completed', 'bench/1/w', ?3, ?3, ?4, ?1 || '/' || ?2)`)
	if err != nil {
		return err
	}
	insEv, err := prep(`INSERT INTO events (run_id, at, kind, step_key, data) VALUES (?1, ?2, ?3, NULL, ?4)`)
	if err != nil {
		return err
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	out := `{"exit_code":0,"stdout":"deployed build 1234\n","stderr":"","json":null}`
	pendingFrom := p.runs - p.runs/100
	for i := range p.runs {
		id := seedRunID(i)
		created := base + int64(i)*1_000_000
		finished, status, outputs := any(created+500_000), "completed", any(`{"ok":true}`)
		if i >= pendingFrom {
			finished, status, outputs = nil, "pending", nil
		} else if i%50 == 0 {
			status = "failed"
		}
		inputs := `{"n":` + strconv.Itoa(i) + `}`
		if _, err := insRun.ExecContext(ctx, id, p.workflow, p.version, p.hash, "key-"+strconv.Itoa(i), status,
			inputs, outputs, created, finished, p.stepsPerRun); err != nil {
			return fmt.Errorf("seeding run %d: %w", i, err)
		}
		if _, err := insInputs.ExecContext(ctx, id, inputs); err != nil {
			return fmt.Errorf("seeding the inputs of run %d: %w", i, err)
		}
		if status == "pending" {
			continue
		}
		for s := range p.stepsPerRun {
			key := "s" + strconv.Itoa(s)
			at := created + int64(s+1)*10_000
			if _, err := insStep.ExecContext(ctx, id, key, 1, out, at); err != nil {
				return fmt.Errorf("seeding a step of run %d: %w", i, err)
			}
			if _, err := insAtt.ExecContext(ctx, id, key, at, out); err != nil {
				return fmt.Errorf("seeding an attempt of run %d: %w", i, err)
			}
		}
		for _, kind := range []string{"run_created", "claimed", "run_" + status} {
			if _, err := insEv.ExecContext(ctx, id, created, kind, `{}`); err != nil {
				return fmt.Errorf("seeding an event of run %d: %w", i, err)
			}
		}
	}
	created := base + int64(p.runs)*1_000_000
	if _, err := insRun.ExecContext(ctx, p.long, p.longWorkflow, "1.0.0", p.longHash, "long", "completed",
		`{}`, `{"v":1}`, created, created+1_000_000, 0); err != nil {
		return fmt.Errorf("seeding the long run: %w", err)
	}
	if _, err := insInputs.ExecContext(ctx, p.long, `{}`); err != nil {
		return fmt.Errorf("seeding the inputs of the long run: %w", err)
	}
	for s := range p.longSteps {
		if _, err := insStep.ExecContext(ctx, p.long, "s"+strconv.Itoa(s), 0, `{"v":`+strconv.Itoa(s)+`}`, created+int64(s)); err != nil {
			return fmt.Errorf("seeding a step of the long run: %w", err)
		}
	}
	// No ANALYZE: the planner sees the store as a real one would be.
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	return nil
}
