package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/postgres"
)

// Sizes of the bulk load of the list plan tests: enough runs and steps
// that a plan counting every run's steps for every run of the page is
// not cheap, few enough to load in a moment.
const (
	bulkRuns         = 5000
	bulkStepsPerRun  = 20
	bulkWorkflows    = 5
	bulkStepsVersion = bulkStepsPerRun
)

// bulkLoad fills a migrated schema with bulkRuns runs, each with
// bulkStepsPerRun top-level steps and as many foreach items, in a few
// statements (generate_series), as an import or a restore does. status is
// the status of every run and step. Autovacuum is off for the tables, so
// they stay as the load left them: without statistics until the test
// analyzes them.
func bulkLoad(t testing.TB, conn *pgx.Conn, status string) {
	t.Helper()
	ctx := context.Background()
	stepStatus := status
	if status == "blocked" {
		stepStatus = "waiting"
	}
	for _, q := range []string{
		`ALTER TABLE runs SET (autovacuum_enabled = false)`,
		`ALTER TABLE steps SET (autovacuum_enabled = false)`,
		`ALTER TABLE workflow_versions SET (autovacuum_enabled = false)`,
		fmt.Sprintf(`INSERT INTO workflow_versions (workflow, version, major, minor, patch, hash, graph, created_at, steps)
			SELECT 'wf' || w, '1.0.0', 1, 0, 0, 'h' || w, '\x00'::bytea, 0, %d FROM generate_series(0, %d) w`,
			bulkStepsVersion, bulkWorkflows-1),
		fmt.Sprintf(`INSERT INTO runs (id, workflow, version, graph_hash, status, created_at, available_at, root_run_id, updated_at, finished_at)
			SELECT 'run-' || lpad(i::text, 6, '0'), 'wf' || (i %% %d), '1.0.0', 'h' || (i %% %d), '%s', i * 1000, i * 1000,
				'run-' || lpad(i::text, 6, '0'), i * 1000, CASE WHEN '%s' = 'completed' THEN i * 1000 + 1 END
			FROM generate_series(1, %d) i`, bulkWorkflows, bulkWorkflows, status, status, bulkRuns),
		fmt.Sprintf(`INSERT INTO steps (run_id, key, step, status)
			SELECT 'run-' || lpad(i::text, 6, '0'), 's' || j, 's' || j, '%s'
			FROM generate_series(1, %d) i, generate_series(1, %d) j`, stepStatus, bulkRuns, bulkStepsPerRun),
		fmt.Sprintf(`INSERT INTO steps (run_id, key, step, idx, status)
			SELECT 'run-' || lpad(i::text, 6, '0'), 's1[' || j || ']', 's1', j, '%s'
			FROM generate_series(1, %d) i, generate_series(0, %d) j`, stepStatus, bulkRuns, bulkStepsPerRun-1),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	IndexCond    string     `json:"Index Cond"`
	RecheckCond  string     `json:"Recheck Cond"`
	Filter       string     `json:"Filter"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) String() string {
	var b strings.Builder
	var walk func(n planNode, depth int)
	walk = func(n planNode, depth int) {
		fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth), n.NodeType)
		if n.RelationName != "" {
			fmt.Fprintf(&b, " on %s", n.RelationName)
		}
		if n.IndexName != "" {
			fmt.Fprintf(&b, " using %s", n.IndexName)
		}
		for _, c := range []struct{ k, v string }{{"index cond", n.IndexCond}, {"recheck", n.RecheckCond}, {"filter", n.Filter}} {
			if c.v != "" {
				fmt.Fprintf(&b, " [%s %s]", c.k, c.v)
			}
		}
		b.WriteByte('\n')
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// explain returns the plan of the prepared query q executed with args,
// under plan_cache_mode mode: force_custom_plan is the plan of the first
// executions of a statement, force_generic_plan the plan Postgres may
// switch to after five (pgx prepares and caches every statement).
func explain(t *testing.T, conn *pgx.Conn, mode, q string, args []any) planNode {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DEALLOCATE ALL`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `PREPARE listq AS `+q); err != nil {
		t.Fatalf("PREPARE: %v\n%s", err, q)
	}
	lits := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			lits[i] = "NULL"
		case string:
			lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		default:
			lits[i] = fmt.Sprint(v)
		}
	}
	exec := `EXPLAIN (FORMAT JSON) EXECUTE listq`
	if len(lits) > 0 {
		exec += "(" + strings.Join(lits, ", ") + ")"
	}
	var out []byte
	if err := conn.QueryRow(ctx, exec, pgx.QueryExecModeSimpleProtocol).Scan(&out); err != nil {
		t.Fatalf("%s: %v", exec, err)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN output %s: %v", out, err)
	}
	return plans[0].Plan
}

// checkPagedPlan fails the test unless the plan reads steps only for the
// runs of the page: no scan of steps that is not an index lookup of one
// run (run_id = the page's id) on the inner side of a nested loop whose
// outer side is the page, a LIMIT over runs. Such a plan costs a few index
// lookups a listed run whatever the statistics say.
func checkPagedPlan(t *testing.T, what string, plan planNode, limited bool) {
	t.Helper()
	var problems []string
	var walk func(n planNode, perRun bool)
	walk = func(n planNode, perRun bool) {
		if n.RelationName == "steps" {
			cond := n.IndexCond + n.RecheckCond
			switch {
			case !perRun:
				problems = append(problems, fmt.Sprintf("%s on steps is not the inner side of a nested loop over the page", n.NodeType))
			case n.NodeType == "Seq Scan":
				problems = append(problems, "steps is read by a sequential scan")
			case !strings.Contains(cond, "run_id = "):
				problems = append(problems, fmt.Sprintf("%s on steps looks up no run_id (index cond %q)", n.NodeType, cond))
			}
		}
		for i, c := range n.Plans {
			inner := perRun
			if n.NodeType == "Nested Loop" && i == 1 && pageSide(n.Plans[0], limited) {
				inner = true
			}
			walk(c, inner)
		}
	}
	walk(plan, false)
	if len(problems) > 0 {
		t.Errorf("%s: the list query reads steps beyond the page's runs (%s):\n%s", what, strings.Join(problems, "; "), plan)
	}
}

// pageSide reports whether n is the page: runs read under a Limit (when
// the listing has one), with no steps.
func pageSide(n planNode, limited bool) bool {
	var runs, steps, limit bool
	var walk func(n planNode)
	walk = func(n planNode) {
		runs = runs || n.RelationName == "runs"
		steps = steps || n.RelationName == "steps"
		limit = limit || n.NodeType == "Limit"
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(n)
	return runs && !steps && (limit || !limited)
}

// listCases are the filter combinations of the listings people and API
// clients page through.
var listCases = []store.RunListParams{
	{Workflow: "wf1", Status: store.RunCompleted, Limit: 1000},
	{Workflow: "wf1", Status: store.RunCompleted, Limit: 50, BeforeID: "run-004000"},
	{Status: store.RunCompleted, Limit: 1000},
	{Workflow: "wf1", Limit: 1000},
	{Limit: 50},
	{Workflow: "wf1", Status: store.RunFailed, Limit: 1000},
	{IDPrefix: "run-0042", Limit: 6},
}

// TestRunListPlanWithoutStatistics: right after a bulk load, before
// anything analyzed runs and steps, the listing's plan reads steps only
// for the page's runs, in every filter combination and for both the
// custom and the generic plan of the prepared statement. (The old query's
// plan counted steps for the whole table, or the page once for every step.)
func TestRunListPlanWithoutStatistics(t *testing.T) {
	dsn, _ := newSchema(t)
	openDSN(t, dsn) // migrates the schema
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	bulkLoad(t, conn, "completed")
	var analyzed bool
	if err := conn.QueryRow(ctx, `SELECT bool_or(last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)
		FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname IN ('runs', 'steps')`).Scan(&analyzed); err != nil {
		t.Fatal(err)
	}
	if analyzed {
		t.Fatal("runs or steps was analyzed: the test needs them without statistics")
	}
	for _, p := range listCases {
		var before int64
		if p.BeforeID != "" {
			if err := conn.QueryRow(ctx, `SELECT created_at FROM runs WHERE id = $1`, p.BeforeID).Scan(&before); err != nil {
				t.Fatal(err)
			}
		}
		q, args := postgres.RunListSQL(p, before)
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			pl := explain(t, conn, mode, q, args)
			checkPagedPlan(t, fmt.Sprintf("%+v, %s", p, mode), pl, p.Limit > 0)
		}
	}
}

// TestRunListPlanWithStaleStatistics: statistics taken while every run
// and step was pending, then the runs completed. The listing of completed
// runs still reads steps only for the page.
func TestRunListPlanWithStaleStatistics(t *testing.T) {
	dsn, _ := newSchema(t)
	openDSN(t, dsn)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	bulkLoad(t, conn, "pending")
	for _, q := range []string{
		`ANALYZE runs`, `ANALYZE steps`, `ANALYZE workflow_versions`,
		`UPDATE runs SET status = 'completed', finished_at = created_at + 1`,
		`UPDATE steps SET status = 'completed'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, p := range listCases {
		var before int64
		if p.BeforeID != "" {
			if err := conn.QueryRow(ctx, `SELECT created_at FROM runs WHERE id = $1`, p.BeforeID).Scan(&before); err != nil {
				t.Fatal(err)
			}
		}
		q, args := postgres.RunListSQL(p, before)
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			checkPagedPlan(t, fmt.Sprintf("stale, %+v, %s", p, mode), explain(t, conn, mode, q, args), p.Limit > 0)
		}
	}
}

// BenchmarkRunListAfterBulkLoad lists a page of 1,000 completed runs of one
// workflow right after a bulk load, before anything analyzed the tables:
// the case whose plan used to cost every step once a listed run.
func BenchmarkRunListAfterBulkLoad(b *testing.B) {
	dsn, _ := newSchema(b)
	s := openDSN(b, dsn)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	bulkLoad(b, conn, "completed")
	p := store.RunListParams{Workflow: "wf1", Status: store.RunCompleted, Limit: 1000}
	b.ResetTimer()
	for b.Loop() {
		rs, err := s.RunList(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		if len(rs) != 1000 || rs[0].StepsDone != bulkStepsPerRun {
			b.Fatalf("%d runs, the first with %d steps done", len(rs), rs[0].StepsDone)
		}
	}
}
