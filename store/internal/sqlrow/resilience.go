package sqlrow

import "github.com/flowrun/flowrun/store"

// AlertCols are the columns ScanAlert reads, in order.
const AlertCols = `id, run_id, alert, event, step_key, message, status, attempts, last_error, created_at, next_at, sent_at`

// ScanAlert reads an alert delivery row of AlertCols.
func ScanAlert(sc Scanner) (store.AlertDelivery, error) {
	var a store.AlertDelivery
	var status string
	err := sc.Scan(&a.ID, &a.RunID, &a.Alert, &a.Event, Text(&a.StepKey), Text(&a.Message), &status,
		&a.Attempts, Text(&a.LastError), Time(&a.CreatedAt), Time(&a.NextAt), Time(&a.SentAt))
	a.Status = store.AlertStatus(status)
	return a, err
}

// BreakerCols are the columns ScanBreaker reads, in order.
const BreakerCols = `name, state, failures, opened_at, open_until, trial_run_id, trial_step_key, trial_until, updated_at`

// ScanBreaker reads a breaker row of BreakerCols.
func ScanBreaker(sc Scanner) (store.Breaker, error) {
	var b store.Breaker
	var state string
	err := sc.Scan(&b.Name, &state, &b.Failures, Time(&b.OpenedAt), Time(&b.OpenUntil),
		Text(&b.TrialRunID), Text(&b.TrialStepKey), Time(&b.TrialUntil), Time(&b.UpdatedAt))
	b.State = store.BreakerState(state)
	return b, err
}

// DeadLetterCols are the columns ScanDeadLetter reads, in order.
const DeadLetterCols = `id, run_id, step, step_key, idx, item, error, status, output, created_at, closed_at, claim_owner, claim_until`

// ScanDeadLetter reads a dead letter row of DeadLetterCols.
func ScanDeadLetter(sc Scanner) (store.DeadLetter, error) {
	var d store.DeadLetter
	var status string
	err := sc.Scan(&d.ID, &d.RunID, &d.Step, &d.StepKey, &d.Index, JSON(&d.Item), JSON(&d.Error),
		&status, JSON(&d.Output), Time(&d.CreatedAt), Time(&d.ClosedAt), Text(&d.ClaimOwner), Time(&d.ClaimUntil))
	d.Status = store.DeadLetterStatus(status)
	return d, err
}

// ScanString reads a row of one text column.
func ScanString(sc Scanner) (string, error) {
	var s string
	err := sc.Scan(&s)
	return s, err
}
