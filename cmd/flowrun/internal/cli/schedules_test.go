package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// TestSchedulesOverdue: a schedule whose next fire is well past (no worker
// ran on the store since) is listed as overdue, so a next fire in the
// past does not read as one still to come; a next fire just past (a live
// worker fires it within a poll) is not.
func TestSchedulesOverdue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "tick.hcl")
	if err := os.WriteFile(file, []byte(`workflow "tick" {
  version = "0.1.0"
  schedule "hourly" {
    every = "1h"
  }
  step "s" {
    exec { command = ["true"] }
  }
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "flowrun.db")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := func(at time.Time, args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		e := &env{stdout: &out, stderr: &errs, getenv: func(k string) string {
			if k == "FLOWRUN_DB" {
				return db
			}
			return ""
		}, clock: clock.NewFake(at)}
		defer e.close()
		if code := e.main(ctx, args); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errs.String())
		}
		return out.String()
	}
	run(t0, "apply", file)
	// The next fire is 04:00.
	for _, c := range []struct {
		at      time.Time
		overdue bool
	}{
		{t0, false},
		{time.Date(2026, 1, 2, 4, 0, 5, 0, time.UTC), false},
		{time.Date(2026, 1, 2, 6, 30, 0, 0, time.UTC), true},
	} {
		out := run(c.at, "schedules")
		if !strings.Contains(out, "2026-01-02 04:00 UTC") || strings.Contains(out, "overdue") != c.overdue {
			t.Errorf("schedules at %s:\n%s\nwant the next fire 04:00, overdue %v", c.at.Format(time.TimeOnly), out, c.overdue)
		}
	}
}
