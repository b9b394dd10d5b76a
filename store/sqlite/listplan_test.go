package sqlite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestRunListReadsNoRunRows checks that every run listing page is read
// from a covering index: the listing never reads a run's row, so the size
// of its inputs, outputs and error (stored before finished_at, and walked
// over to reach it) never slows a page down (BenchmarkRunListBigRows); nor
// a version's row, whose graph is stored before its step count.
func TestRunListReadsNoRunRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := scratch(t)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range []string{"run-a", "run-b"} {
		if _, err := s.RunInsert(ctx, store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h", Key: id, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []store.RunListParams{{}, {Limit: 50}, {Status: store.RunRunning, Limit: 50}, {Workflow: "wf", Limit: 50},
		{Status: store.RunPending, Workflow: "wf", Limit: 50}, {BeforeID: "run-b", Limit: 50},
		{Status: store.RunCompleted, BeforeID: "run-b", Limit: 50}, {Workflow: "wf", BeforeID: "run-b", Limit: 50}} {
		if _, err := s.RunList(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	var pages []string
	for k := range s.stmts {
		if !k.write && strings.Contains(k.query, "WITH page AS") {
			pages = append(pages, k.query)
		}
	}
	s.mu.Unlock()
	if len(pages) < 6 {
		t.Fatalf("only %d listing queries were prepared, want one per filter combination", len(pages))
	}
	for _, q := range pages {
		plan := queryPlan(t, s, q, maxParam(q))
		for _, step := range plan {
			f := strings.Fields(step)
			if len(f) >= 2 && (f[0] == "SCAN" || f[0] == "SEARCH") && f[1] == "runs" && !strings.Contains(step, "COVERING INDEX") {
				t.Errorf("a listing reads run rows:\n\t%s\nquery:\n%s", strings.Join(plan, "\n\t"), q)
			}
			// The step count of a run's version (steps_total) is stored
			// after the graph: it is read from an index, never the row.
			if len(f) >= 2 && (f[0] == "SCAN" || f[0] == "SEARCH") && f[1] == "v" && !strings.Contains(step, "COVERING INDEX") {
				t.Errorf("a listing reads version rows:\n\t%s\nquery:\n%s", strings.Join(plan, "\n\t"), q)
			}
			// A page's step counts come from steps_top alone, never a step
			// row; the engine's rows among them (store.GraphStep) from
			// steps_saga, which holds only those.
			if len(f) >= 2 && (f[0] == "SCAN" || f[0] == "SEARCH") && f[1] == "steps" &&
				!strings.Contains(step, "COVERING INDEX steps_top") && !strings.Contains(step, "INDEX steps_saga") &&
				!strings.Contains(step, "INDEX steps_dropped") {
				t.Errorf("a listing reads step rows:\n\t%s\nquery:\n%s", strings.Join(plan, "\n\t"), q)
			}
		}
	}
}

// TestVersionHeadsReadNoGraphs checks that listing versions without their
// graphs is read from a covering index: created_at is stored after the
// graph, so reading the row would walk the graph's overflow pages.
func TestVersionHeadsReadNoGraphs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := scratch(t)
	for _, wf := range []string{"", "wf"} {
		if _, err := s.VersionHeads(ctx, wf); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	var heads []string
	for k := range s.stmts {
		if !k.write && strings.Contains(k.query, "FROM workflow_versions") && strings.Contains(k.query, "NULL, created_at") {
			heads = append(heads, k.query)
		}
	}
	s.mu.Unlock()
	if len(heads) != 2 {
		t.Fatalf("%d version head queries were prepared, want 2", len(heads))
	}
	for _, q := range heads {
		plan := queryPlan(t, s, q, maxParam(q))
		for _, step := range plan {
			if !strings.Contains(step, "COVERING INDEX") {
				t.Errorf("a version head listing reads version rows:\n\t%s\nquery:\n%s", strings.Join(plan, "\n\t"), q)
			}
		}
	}
}

// TestVersionSignalTypesReadNoGraphs: a signal's data check reads a
// version's signal types (stored after its graph) from the covering
// (workflow, hash, signal_types) indexes, never from the row.
func TestVersionSignalTypesReadNoGraphs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := scratch(t)
	if _, err := s.VersionSignalTypes(ctx, "wf", "h"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("VersionSignalTypes of nothing: %v, want ErrNotFound", err)
	}
	s.mu.Lock()
	var qs []string
	for k := range s.stmts {
		if !k.write && strings.Contains(k.query, "SELECT signal_types FROM") {
			qs = append(qs, k.query)
		}
	}
	s.mu.Unlock()
	if len(qs) != 2 {
		t.Fatalf("%d signal type queries were prepared, want 2", len(qs))
	}
	for _, q := range qs {
		for _, step := range queryPlan(t, s, q, maxParam(q)) {
			if (strings.Contains(step, "SEARCH") || strings.Contains(step, "SCAN")) && !strings.Contains(step, "COVERING INDEX") {
				t.Errorf("a signal type lookup reads version rows: %s\nquery:\n%s", step, q)
			}
		}
	}
}
