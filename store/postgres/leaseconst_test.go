package postgres

import "testing"

// TestLeaseNowConstants: the constant forms of leaseNow say what leaseNow
// builds for the same parameters.
func TestLeaseNowConstants(t *testing.T) {
	for _, c := range []struct {
		caller, now int
		got         string
	}{{5, 6, leaseNow56}, {2, 1, leaseNow21}} {
		if want := leaseNow(c.caller, c.now); c.got != want {
			t.Errorf("leaseNow(%d, %d) as a constant is\n%s\nwant\n%s", c.caller, c.now, c.got, want)
		}
	}
}
