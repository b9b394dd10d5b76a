package sqlrow

import (
	"encoding/json"
	"testing"
	"time"
)

func TestColumnsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 123456000, time.UTC)
	var got time.Time
	if err := Time(&got).Scan(TimeArg(at)); err != nil || !got.Equal(at) {
		t.Errorf("time round trip: %v, %v; want %v", got, err, at)
	}
	if TimeArg(time.Time{}) != nil {
		t.Error("the zero time is not stored as NULL")
	}
	if err := Time(&got).Scan(nil); err != nil || !got.IsZero() {
		t.Errorf("NULL time: %v, %v", got, err)
	}
	if err := Time(&got).Scan("yesterday"); err == nil {
		t.Error("a text in a time column was accepted")
	}

	var s string
	if TextArg("") != nil {
		t.Error("empty text is not stored as NULL")
	}
	if err := Text(&s).Scan([]byte("x")); err != nil || s != "x" {
		t.Errorf("text from bytes: %q, %v", s, err)
	}
	if err := Text(&s).Scan(nil); err != nil || s != "" {
		t.Errorf("NULL text: %q, %v", s, err)
	}

	var j json.RawMessage
	if JSONArg(nil) != nil {
		t.Error("empty JSON is not stored as NULL")
	}
	buf := []byte(`{"a":1}`)
	if err := JSON(&j).Scan(buf); err != nil {
		t.Fatal(err)
	}
	buf[2] = 'b' // a driver may reuse its buffer
	if string(j) != `{"a":1}` {
		t.Errorf("JSON kept the driver's buffer: %s", j)
	}
}
