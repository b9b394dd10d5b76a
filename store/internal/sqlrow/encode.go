package sqlrow

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TimeArg encodes a time for a parameter: unix microseconds, NULL for the
// zero time.
func TimeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// JSONArg encodes JSON for a parameter: text, NULL when empty.
func JSONArg(j json.RawMessage) any {
	if len(j) == 0 {
		return nil
	}
	return string(j)
}

// TextArg encodes optional text for a parameter: NULL when empty.
func TextArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Time scans a time column into *t.
func Time(t *time.Time) TimeCol { return TimeCol{t} }

// TimeCol scans a time column.
type TimeCol struct{ t *time.Time }

// Scan implements sql.Scanner.
func (c TimeCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.t = time.Time{}
	case int64:
		*c.t = time.UnixMicro(x).UTC()
	default:
		return fmt.Errorf("time column holds %T, want an integer of unix microseconds", v)
	}
	return nil
}

// Text scans an optional text column into *s ("" for NULL).
func Text(s *string) TextCol { return TextCol{s} }

// TextCol scans an optional text column.
type TextCol struct{ s *string }

// Scan implements sql.Scanner.
func (c TextCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.s = ""
	case string:
		*c.s = x
	case []byte:
		*c.s = string(x)
	default:
		return fmt.Errorf("text column holds %T", v)
	}
	return nil
}

// JSON scans a JSON text column into *j (nil for NULL). The bytes are
// copied: a driver may reuse its buffer.
func JSON(j *json.RawMessage) JSONCol { return JSONCol{j} }

// JSONCol scans a JSON text column.
type JSONCol struct{ j *json.RawMessage }

// Scan implements sql.Scanner.
func (c JSONCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.j = nil
	case string:
		*c.j = json.RawMessage(x)
	case []byte:
		*c.j = append(json.RawMessage(nil), x...)
	default:
		return fmt.Errorf("JSON column holds %T", v)
	}
	return nil
}

// ErrorText is what the run listing's text search (RunListParams.Text)
// looks for in a run error: the text of its message, folded by Fold,
// stored beside the error as runs.error_text. The JSON itself is not
// searched: its field names ("kind", "message") would match every run
// with an error, and its escapes ("\u003c" for "<") would hide the text
// they stand for. NULL when the error has no message.
func ErrorText(raw json.RawMessage) any {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return nil
	}
	return Fold(e.Message)
}

// Fold is how the text search ignores case, in Go on both backends (the
// searched text and error_text alike): SQLite's lower() changes only
// ASCII letters, and PostgreSQL's depends on the database's locale.
func Fold(s string) string { return strings.ToLower(s) }

// CanceledError is the error a run ended by a cancel request carries: a
// run error ({kind, message, step}), with no step.
const CanceledError = `{"kind":"canceled","message":"canceled by request","step":""}`

// StepCountArg encodes a version's step count for a parameter: NULL
// (unknown: the runs count their step rows) for 0.
func StepCountArg(n int) any {
	if n <= 0 {
		return nil
	}
	return n
}

// BreakerEventData is the data of a breaker event: its name, state and
// failures, and while it is open when it lets a trial through.
func BreakerEventData(b store.Breaker) []byte {
	s := fmt.Sprintf(`{"breaker":%q,"state":%q,"failures":%d`, b.Name, b.State, b.Failures)
	if !b.OpenUntil.IsZero() && b.State == store.BreakerOpen {
		s += fmt.Sprintf(`,"open_until":%q`, b.OpenUntil.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	}
	return []byte(s + "}")
}

// SignalTypesArg encodes a version's signal types (the caller's JSON) for
// a parameter: NULL (unknown) for nil.
func SignalTypesArg(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// SignalTypes decodes a signal_types column read as a nullable string:
// nil for NULL.
func SignalTypes(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}
