package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/flowrun/flowrun/store/postgres"
)

// TestScheduleDueUsesIndex checks that the due query can be answered from
// schedules_due: with sequential and bitmap scans priced out, its plan walks
// the index and sorts nothing (the index is in the query's order). On a small table
// the planner may prefer a scan; what this proves is that the index fits.
func TestScheduleDueUsesIndex(t *testing.T) {
	dsn, _ := newSchema(t)
	openDSN(t, dsn) // migrates the schema
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off; SET enable_bitmapscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `EXPLAIN `+postgres.ScheduleDueSQL, int64(0), 10)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(plan, "\n\t")
	if !strings.Contains(joined, "Index Scan using schedules_due") || strings.Contains(joined, "Sort") {
		t.Errorf("the due query does not walk schedules_due in order:\n\t%s", joined)
	}
}
