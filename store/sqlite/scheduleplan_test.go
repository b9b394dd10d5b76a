package sqlite

import (
	"strings"
	"testing"
)

// TestScheduleStatementsUseIndexes checks the plans of the scheduler's
// statements: the due query walks schedules_due in its order (one indexed
// query however many schedules are stored, no sort), and the fire's
// statements find their rows by key, the open fires through
// schedule_fires_open (not the schedule's whole history).
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
	for _, q := range []string{advanceFireSQL, advanceSkipSQL, selectScheduleSQL, deactivateSchedulesSQL, lastRunSQL, closeFiresSQL, openFiresSQL} {
		plan := queryPlan(t, s, q, maxParam(q))
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN schedule") {
				t.Errorf("%s scans schedules:\n\t%s", firstLine(q), strings.Join(plan, "\n\t"))
			}
		}
	}
}

// TestOpenFiresUseTheirIndex: finding a schedule's unfinished runs reads
// schedule_fires_open, whose rows are the fires not yet seen finished,
// not the primary key, which holds every slot the schedule ever had.
func TestOpenFiresUseTheirIndex(t *testing.T) {
	t.Parallel()
	s := scratch(t)
	for _, q := range []string{closeFiresSQL, openFiresSQL} {
		plan := strings.Join(queryPlan(t, s, q, maxParam(q)), "\n\t")
		if !strings.Contains(plan, "schedule_fires_open") {
			t.Errorf("%s does not read schedule_fires_open:\n\t%s", firstLine(q), plan)
		}
	}
}
