package schedule

import (
	"strings"
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

// TestInZoneSeconds: an instant with seconds keeps them, in the zone and
// in UTC, so the slots of an every schedule shorter than a minute (or
// not a whole number of minutes) are told apart. Before, "every 20s"
// listed its next three fires as the same minute three times.
func TestInZoneSeconds(t *testing.T) {
	at := time.Date(2026, 12, 6, 1, 0, 20, 0, time.UTC)
	for tz, want := range map[string]string{
		"Europe/Berlin":    "2026-12-06 02:00:20 Europe/Berlin (01:00:20 UTC)",
		"America/New_York": "2026-12-05 20:00:20 America/New_York (2026-12-06 01:00:20 UTC)",
		"UTC":              "2026-12-06 01:00:20 UTC",
	} {
		if got := InZone(at, tz); got != want {
			t.Errorf("InZone(%s) = %q, want %q", tz, got, want)
		}
	}
	// A manual trigger's instant, to the microsecond: the seconds, not the fraction.
	if got, want := InZone(time.Date(2026, 12, 6, 1, 0, 0, 461355000, time.UTC), "UTC"), "2026-12-06 01:00:00 UTC"; got != want {
		t.Errorf("InZone of a trigger's instant = %q, want %q", got, want)
	}
}

// TestAllInZone: a list of fires is written alike, with seconds for all
// when one has them.
func TestAllInZone(t *testing.T) {
	base := time.Date(2026, 12, 6, 1, 0, 20, 0, time.UTC)
	got := AllInZone([]time.Time{base, base.Add(20 * time.Second), base.Add(40 * time.Second)}, "UTC")
	want := []string{"2026-12-06 01:00:20 UTC", "2026-12-06 01:00:40 UTC", "2026-12-06 01:01:00 UTC"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("AllInZone = %q, want %q", got, want)
	}
	hourly := AllInZone([]time.Time{time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC), time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)}, "Europe/Berlin")
	if w := "2026-12-06 02:00 Europe/Berlin (01:00 UTC), 2026-12-06 03:00 Europe/Berlin (02:00 UTC)"; strings.Join(hourly, ", ") != w {
		t.Errorf("AllInZone of whole minutes = %q, want %q", hourly, w)
	}
}
