package store

import "testing"

func TestParseStepKey(t *testing.T) {
	for _, c := range []struct {
		step       string
		index, itr int
	}{
		{"a", -1, -1}, {"fetch_2", 3, -1}, {"loop", -1, 0}, {"each", 12, 7}, {"_x", 0, 0},
	} {
		key := StepKey(c.step, c.index, c.itr)
		step, index, itr, ok := ParseStepKey(key)
		if !ok || step != c.step || index != c.index || itr != c.itr {
			t.Errorf("ParseStepKey(%q) = %q, %d, %d, %v; want %q, %d, %d", key, step, index, itr, ok, c.step, c.index, c.itr)
		}
	}
	for _, bad := range []string{"", "[1]", "#2", "a[", "a[x]", "a[-1]", "a[01]", "a#", "a#1x", "a[1]x", "a#1[2]", "a[1]#2#3"} {
		if step, index, itr, ok := ParseStepKey(bad); ok {
			t.Errorf("ParseStepKey(%q) = %q, %d, %d, true; want not ok", bad, step, index, itr)
		}
	}
}
