package schedule

import (
	"testing"
	"time"
)

func TestInZone(t *testing.T) {
	at := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	for tz, want := range map[string]string{
		"Europe/Berlin":    "2026-12-06 02:00 Europe/Berlin (01:00 UTC)",
		"America/New_York": "2026-12-05 20:00 America/New_York (2026-12-06 01:00 UTC)",
		"UTC":              "2026-12-06 01:00 UTC",
		"":                 "2026-12-06 01:00 UTC",
	} {
		if got := InZone(at, tz); got != want {
			t.Errorf("InZone(%s) = %q, want %q", tz, got, want)
		}
	}
}
