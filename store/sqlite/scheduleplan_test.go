package sqlite

import (
	"strings"
	"testing"
)

// TestScheduleStatementsUseIndexes checks the plans of the scheduler's
// statements: the due query walks schedules_due in its order (one indexed
// query however many schedules are stored, no sort), and the fire's
// writes find their rows by primary key.
func TestScheduleStatementsUseIndexes(t *testing.T) {
	t.Parallel()
	s := scratch(t)
	plan := queryPlan(t, s, scheduleDueSQL, maxParam(scheduleDueSQL))
	joined := strings.Join(plan, "\n\t")
	if !strings.Contains(joined, "USING INDEX schedules_due") {
		t.Errorf("the due query does not read schedules_due:\n\t%s", joined)
	}
	if strings.Contains(joined, "TEMP B-TREE") {
		t.Errorf("the due query sorts instead of walking schedules_due in order:\n\t%s", joined)
	}
	for _, q := range []string{advanceFireSQL, advanceSkipSQL, selectScheduleSQL, deactivateSchedulesSQL} {
		plan := queryPlan(t, s, q, maxParam(q))
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN schedules") {
				t.Errorf("%s scans schedules:\n\t%s", firstLine(q), strings.Join(plan, "\n\t"))
			}
		}
	}
}
