package interp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/store"
)

// TestSignalDataType: Engine.Signal, which the CLI, flowtui and the HTTP
// API call, refuses data that does not have the type the wait step
// declares, writing nothing; data of that type is delivered and becomes
// the step's output.
func TestSignalDataType(t *testing.T) {
	b := setup(t)
	run := b.run(`workflow "typed" {
  version = "1.0.0"
  step "ask" {
    wait {
      signal = "approval"
      type   = object({ approved = bool, by = string })
    }
  }
}`, nil)
	wantStatus(t, run, store.RunWaiting)
	for _, bad := range []string{`{"approved": "yes", "by": "ana"}`, `{}`, `[true]`, `{"approved": true, "by": "ana", "extra": 1}`} {
		_, err := b.e.Signal(b.ctx, run.ID, "approval", json.RawMessage(bad))
		var de *SignalDataError
		if !errors.As(err, &de) || de.Step != "ask" || !strings.Contains(err.Error(), "object({approved = bool, by = string})") {
			t.Fatalf("signal with %s: %v, want a SignalDataError naming the step and type", bad, err)
		}
	}
	if _, err := b.e.Signal(b.ctx, run.ID, "approval", json.RawMessage(`{"approved": true, "by": "ana"}`)); err != nil {
		t.Fatalf("signal of the type: %v", err)
	}
	done := b.drive(run.ID)
	wantStatus(t, done, store.RunCompleted)
	// The first signal stored is the one the wait takes: none of the
	// refused ones was written.
	wantJSON(t, "ask output", b.show(run.ID).Steps["ask"].Output, `{"approved": true, "by": "ana"}`)
}
