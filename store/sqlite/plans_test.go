package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestHotStatementsUseIndexes checks the query plans of the statements the
// engine runs all the time: none may scan a whole table.
func TestHotStatementsUseIndexes(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "flowrun.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range hotStatements {
		rows, err := s.w.Query("EXPLAIN QUERY PLAN "+q, make([]any, strings.Count(q, "?"))...)
		if err != nil {
			t.Fatalf("%s: %v", firstLine(q), err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if q == claimAnySQL && !strings.Contains(strings.Join(plan, "\n"), "COVERING INDEX runs_claim") {
			t.Errorf("the claim reads run rows to skip leased runs:\n\t%s", strings.Join(plan, "\n\t"))
		}
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN json_each") {
				t.Errorf("%s scans a table:\n\t%s", firstLine(q), strings.Join(plan, "\n\t"))
			}
			if q == claimAnySQL && strings.Contains(step, "TEMP B-TREE") {
				t.Errorf("the claim sorts instead of walking runs_claim:\n\t%s", strings.Join(plan, "\n\t"))
			}
		}
	}
}
