package cli

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/flowrun/flowrun/telemetry"
)

// healthLog logs what a worker's Observer hears about its store and its
// leases (spec/observability.md, Logs): a WARN when the store begins to
// fail, once per failing period, with the error; an INFO when it answers
// again; a WARN for each run whose lease another process took; an INFO
// for each batch of runs retention deleted. The other
// reports are the metrics' and traces' (telemetry.Nop).
type healthLog struct {
	telemetry.Nop
	log *slog.Logger
}

func (h healthLog) StoreFailing(err error) {
	msg := oneLine(err.Error())
	h.log.Warn(fmt.Sprintf("the store is failing: %s; this worker keeps its runs and takes them back once it answers", msg), "error", msg)
}

func (h healthLog) StoreRecovered(d time.Duration) {
	h.log.Info(fmt.Sprintf("the store answers again after failing for %s; taking back this worker's runs", d.Round(time.Millisecond)),
		"failed_for", d.Round(time.Millisecond).String())
}

// ScheduleSlotFailed: a slot that starts no run because the schedule's
// inputs fail is the workflow's mistake, which only the log tells of
// while it happens (flowrun schedules shows the last fire).
func (h healthLog) ScheduleSlotFailed(workflow, schedule string, slot time.Time, err error) {
	msg := oneLine(err.Error())
	h.log.Warn(msg+"; the slot is recorded skipped and starts no run: fix the schedule's inputs in the workflow file and apply it",
		"workflow", workflow, "schedule", schedule, "slot", slot.UTC().Format(time.RFC3339Nano), "error", msg)
}

func (h healthLog) RunsPruned(workflow string, n int) {
	h.log.Info(fmt.Sprintf("retention: deleted %d finished runs of %s", n, workflow), "workflow", workflow, "runs", n)
}

func (h healthLog) LeaseLost(l telemetry.LeaseLoss) {
	by := l.TakenBy
	if by == "" {
		by = "no one"
	}
	msg := fmt.Sprintf("lost the lease of run %s to %s; stopped working on it", l.Run.ID, by)
	if len(l.Steps) > 0 {
		msg += " (abandoned step " + strings.Join(l.Steps, ", ") + ")"
	}
	h.log.Warn(msg, "run_id", l.Run.ID, "workflow", l.Run.Workflow, "taken_by", l.TakenBy, "steps", strings.Join(l.Steps, ","))
}
