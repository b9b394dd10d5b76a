package theme

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 850 * time.Millisecond: "850ms", 12 * time.Second: "12s",
		185 * time.Second: "3m05s", 2*time.Hour + 4*time.Minute: "2h04m", 74 * time.Hour: "3d02h",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCountdownSpanFit(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := Countdown(now.Add(1500*time.Millisecond), now); got != "in 2s" {
		t.Errorf("Countdown = %q", got)
	}
	if got := Countdown(now.Add(-time.Second), now); got != "due now" {
		t.Errorf("past Countdown = %q", got)
	}
	if got := Span(time.Time{}, now, now); got != "" {
		t.Errorf("Span of an unstarted thing = %q", got)
	}
	if got := Fit("abcdef", 4); got != "abc…" {
		t.Errorf("Fit cut = %q", got)
	}
	if got := Fit("ab", 4); got != "ab  " {
		t.Errorf("Fit pad = %q", got)
	}
	if got := PlainBar(3, 6, 4); got != "██░░" {
		t.Errorf("PlainBar = %q", got)
	}
	if got := Lines("a\nb\nc", 5, 2); got != "a\nb" {
		t.Errorf("Lines = %q", got)
	}
}
