package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestHotStatementsUseIndexes checks the query plans of the statements the
// engine runs all the time: none may scan a whole table.
func TestHotStatementsUseIndexes(t *testing.T) {
	t.Parallel()
	s := scratch(t)
	hot := slices.Clone(hotStatements)
	for _, f := range hotFamilies {
		for n := 2; n <= f.max; n++ {
			hot = append(hot, f.get(n))
		}
	}
	for _, q := range hot {
		plan := queryPlan(t, s, q, strings.Count(q, "?"))
		if q == claimAnySQL && !strings.Contains(strings.Join(plan, "\n"), "COVERING INDEX runs_claim") {
			t.Errorf("the claim reads run rows to skip leased runs:\n\t%s", strings.Join(plan, "\n\t"))
		}
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN json_each") && !strings.HasSuffix(step, "-ROW VALUES CLAUSE") {
				t.Errorf("%s scans a table:\n\t%s", firstLine(q), strings.Join(plan, "\n\t"))
			}
			if q == claimAnySQL && strings.Contains(step, "TEMP B-TREE") {
				t.Errorf("the claim sorts instead of walking runs_claim:\n\t%s", strings.Join(plan, "\n\t"))
			}
		}
	}
}

// TestReadQueriesUseIndexes exercises every read of the store on a small
// database, then checks the plan of each query it prepared (the statement
// cache holds them all, so a query added later is checked without being
// listed here), and the plans of the prune statements: no full table scan
// of a table that grows with the runs. Listings of every version or
// breaker read small tables whole, and are allowed to.
func TestReadQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := scratch(t)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := s.VersionPut(ctx, store.VersionPutParams{Workflow: "wf", Version: "1.0.0", Major: 1, Hash: "h", Graph: []byte(`{}`), Now: now})
	must("VersionPut", err)
	for _, id := range []string{"run-a", "run-b"} {
		_, err := s.RunInsert(ctx, store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h", Key: id, Now: now,
			Events: []store.EventWrite{{Kind: "run_created"}}})
		must("RunInsert", err)
	}
	runs, err := s.RunClaim(ctx, store.RunClaimParams{Owner: "o", Now: now, LeaseFor: time.Minute, Limit: 1, RunID: "run-a"})
	must("RunClaim", err)
	_, err = s.TransitionCommit(ctx, []store.Transition{{RunID: "run-a", Lease: runs[0].Lease, Now: now,
		Steps:    []store.StepWrite{{Key: "s", Step: "s", Index: -1, Iteration: -1, Status: store.StepRunning}},
		Attempts: []store.AttemptWrite{{StepKey: "s", Attempt: 1, Status: store.AttemptRunning, Owner: "o", StartedAt: now}},
		Events:   []store.EventWrite{{Kind: "step_started", StepKey: "s"}}}})
	must("TransitionCommit", err)

	// Every read, with every filter that changes its SQL.
	_, err = s.VersionGet(ctx, "wf", "1.0.0")
	must("VersionGet", err)
	_, err = s.VersionGetByHash(ctx, "wf", "h")
	must("VersionGetByHash", err)
	for _, wf := range []string{"", "wf"} {
		_, err = s.VersionList(ctx, wf)
		must("VersionList", err)
		_, err = s.VersionHeads(ctx, wf)
		must("VersionHeads", err)
	}
	_, err = s.RunGet(ctx, "run-a")
	must("RunGet", err)
	_, err = s.RunFind(ctx, "run-")
	if !errors.Is(err, store.ErrAmbiguous) {
		t.Fatalf("RunFind of a shared prefix: %v", err)
	}
	_, err = s.RunGetByKey(ctx, "wf", "run-a")
	must("RunGetByKey", err)
	_, err = s.RunChildren(ctx, "run-a")
	must("RunChildren", err)
	for _, p := range []store.RunListParams{{}, {Limit: 50}, {Status: store.RunRunning, Limit: 50}, {Workflow: "wf", Limit: 50},
		{Status: store.RunPending, Workflow: "wf", Limit: 50}, {BeforeID: "run-b", Limit: 50}} {
		_, err = s.RunList(ctx, p)
		must("RunList", err)
	}
	_, err = s.RunLeaseOwners(ctx, now)
	must("RunLeaseOwners", err)
	for _, root := range []string{"", "run-a"} {
		_, _, err = s.RunNextAvailable(ctx, root)
		must("RunNextAvailable", err)
	}
	_, err = s.StepList(ctx, "run-a")
	must("StepList", err)
	_, err = s.StepHeads(ctx, "run-a")
	must("StepHeads", err)
	for _, key := range []string{"", "s"} {
		_, err = s.AttemptList(ctx, "run-a", key)
		must("AttemptList", err)
	}
	for _, run := range []string{"", "run-a"} {
		_, err = s.EventList(ctx, store.EventListParams{RunID: run, Limit: 10})
		must("EventList", err)
	}
	for _, pending := range []bool{false, true} {
		_, err = s.SignalList(ctx, "run-a", pending)
		must("SignalList", err)
	}
	for _, p := range []store.DeadLetterListParams{{}, {RunID: "run-a"}, {RunID: "run-a", All: true}} {
		_, err = s.DeadLetterList(ctx, p)
		must("DeadLetterList", err)
	}
	_, err = s.AlertList(ctx, "run-a") // AlertList("") lists the whole table, as asked
	must("AlertList", err)
	_, err = s.SchedulesActivate(ctx, store.SchedulesActivateParams{Workflow: "wf", Version: "1.0.0", Now: now,
		Schedules: []store.ScheduleDef{{Name: "n", Kind: "every", Spec: "1m", Timezone: "UTC", Overlap: "skip", CatchUp: "latest", NextAt: now}}})
	must("SchedulesActivate", err)
	_, err = s.ScheduleGet(ctx, "wf", "n")
	must("ScheduleGet", err)
	_, err = s.ScheduleList(ctx, store.ScheduleListParams{Workflow: "wf"}) // all workflows: the whole table, as asked
	must("ScheduleList", err)
	_, err = s.ScheduleDue(ctx, store.ScheduleDueParams{Now: now, Limit: 10})
	must("ScheduleDue", err)
	for _, p := range []store.ScheduleFireListParams{{Workflow: "wf", Name: "n", Limit: 5}, {RunID: "run-a"}} {
		_, err = s.ScheduleFireList(ctx, p)
		must("ScheduleFireList", err)
	}

	// page and counts are RunList's CTEs, at most one page of rows.
	allowed := map[string]bool{"breakers": true, "workflow_versions": true, "json_each": true, "page": true, "counts": true}
	check := func(q string) {
		t.Helper()
		plan := queryPlan(t, s, q, maxParam(q))
		for _, step := range plan {
			f := strings.Fields(step)
			if len(f) >= 2 && f[0] == "SCAN" && !allowed[f[1]] && !strings.Contains(step, " USING ") {
				t.Errorf("%s scans the table %s:\n\t%s", firstLine(q), f[1], strings.Join(plan, "\n\t"))
			}
		}
	}
	s.mu.Lock()
	var reads []string
	for k := range s.stmts {
		if !k.write {
			reads = append(reads, k.query)
		}
	}
	s.mu.Unlock()
	if len(reads) < 20 {
		t.Fatalf("only %d read queries were prepared; the exercise above misses reads", len(reads))
	}
	for _, q := range reads {
		check(q)
	}
	check(pruneRootsSQL)
	check(pruneTreeSQL)
	check(pruneRunsSQL)
	for _, d := range pruneDeletes {
		check(`DELETE FROM ` + d.table + ` WHERE run_id IN (SELECT value FROM json_each(?1))`)
	}
}

// maxParam is the highest ?N of a query.
// scratch opens a store on a new file, closed when the test ends.
func scratch(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "flowrun.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func maxParam(q string) int {
	n := 0
	for _, m := range regexp.MustCompile(`\?(\d+)`).FindAllStringSubmatch(q, -1) {
		if v, err := strconv.Atoi(m[1]); err == nil && v > n {
			n = v
		}
	}
	return n
}

// queryPlan returns the steps of EXPLAIN QUERY PLAN of q, with nargs NULL
// parameters.
func queryPlan(t *testing.T, s *Store, q string, nargs int) []string {
	t.Helper()
	rows, err := s.w.Query("EXPLAIN QUERY PLAN "+q, make([]any, nargs)...)
	if err != nil {
		t.Fatalf("%s: %v", firstLine(q), err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return plan
}
