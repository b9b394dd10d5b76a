package interp

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// TestActionClockTimesAttempts: with Options.ActionClock set, an exec
// attempt's timeout runs on it and not on the engine clock: the engine
// clock stands still (as flowrun test's virtual clock does while a real
// program runs) and the attempt still times out when the action clock
// passes its timeout.
func TestActionClockTimesAttempts(t *testing.T) {
	act := clock.NewFake(t0)
	b := setup(t, func(o *Options) { o.ActionClock = act })
	ready := filepath.Join(t.TempDir(), "ready")
	b.compile(fmt.Sprintf(`
workflow "to" {
  version = "1.0.0"
  step "slow" {
    timeout = "5s"
    exec {
      command = "touch %s; exec sleep 300"
      shell   = true
    }
  }
}`, ready))
	run := b.start("to", nil)
	final := b.driveAdvancing(run.ID, act, 5*time.Second, func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	wantStatus(t, final, store.RunFailed)
	if k := errKind(t, final.Error); k != "timeout" {
		t.Fatalf("error = %s", final.Error)
	}
	if !b.clk.Now().Equal(t0) {
		t.Fatalf("the engine clock moved to %s", b.clk.Now())
	}
}
