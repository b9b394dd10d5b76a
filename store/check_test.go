package store

import (
	"strings"
	"testing"
	"time"
)

// TestParamChecks: the checks both backends make before writing a signal
// or output chunks, stated once here.
func TestParamChecks(t *testing.T) {
	if err := (SignalSendParams{RunID: "r"}).Check(); err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("a signal without a name: %v", err)
	}
	if err := (SignalSendParams{RunID: "r", Name: "go"}).Check(); err != nil {
		t.Errorf("a named signal: %v", err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	chunks := []OutputChunkWrite{{StepKey: "a", Stream: "stdout", Chunk: 0, At: at}, {StepKey: "a", Stream: "stderr", Chunk: 1}}
	if err := CheckOutputChunks(chunks); err == nil || err.Error() != "chunk 1 of stderr of step a has no time" {
		t.Errorf("a chunk without a time: %v", err)
	}
	if err := CheckOutputChunks(chunks[:1]); err != nil {
		t.Errorf("chunks with times: %v", err)
	}
}
