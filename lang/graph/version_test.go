package graph

import (
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	good := map[string]SemVer{
		"0.0.0":    {0, 0, 0},
		"1.4.0":    {1, 4, 0},
		"10.20.30": {10, 20, 30},
		"0.1.12":   {0, 1, 12},
	}
	for s, want := range good {
		v, err := ParseVersion(s)
		if err != nil || v != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", s, v, err, want)
		}
		if v.String() != s {
			t.Errorf("%v.String() = %q, want %q", v, v.String(), s)
		}
	}
	bad := map[string]string{
		"":                "expected MAJOR.MINOR.PATCH",
		"1":               "expected MAJOR.MINOR.PATCH",
		"1.4":             "expected MAJOR.MINOR.PATCH",
		"1.4.0.1":         "expected MAJOR.MINOR.PATCH",
		"v1.4.0":          `"v1" is not a whole number`,
		"1.04.0":          `"04" has a leading zero`,
		"1.4.0-rc1":       `"0-rc1" is not a whole number`,
		"1..0":            "a part is empty",
		"1.4.-1":          `"-1" is not a whole number`,
		" 1.4.0":          `" 1" is not a whole number`,
		"1.4.99999999999": `"99999999999" is too large`,
	}
	for s, want := range bad {
		_, err := ParseVersion(s)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `such as "1.4.0"`) {
			t.Errorf("ParseVersion(%q) error = %v, want it to contain %q and the expected form", s, err, want)
		}
	}
}

func TestSemVerCompareBumpNext(t *testing.T) {
	v := func(s string) SemVer {
		x, err := ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	cmp := []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0}, {"1.0.0", "1.0.1", -1}, {"1.2.0", "1.1.9", 1},
		{"2.0.0", "1.99.99", 1}, {"0.9.0", "0.10.0", -1},
	}
	for _, c := range cmp {
		if got := v(c.a).Compare(v(c.b)); got != c.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	bumps := []struct {
		a, b string
		want Bump
	}{
		{"1.2.3", "1.2.3", BumpNone}, {"1.2.3", "1.2.4", BumpPatch}, {"1.2.3", "1.3.0", BumpMinor},
		{"1.2.3", "1.3.7", BumpMinor}, {"1.2.3", "2.0.0", BumpMajor},
	}
	for _, c := range bumps {
		if got := v(c.a).BumpTo(v(c.b)); got != c.want {
			t.Errorf("%s.BumpTo(%s) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
	next := map[Bump]string{BumpNone: "1.2.3", BumpPatch: "1.2.4", BumpMinor: "1.3.0", BumpMajor: "2.0.0"}
	for b, want := range next {
		if got := v("1.2.3").Next(b).String(); got != want {
			t.Errorf("1.2.3.Next(%s) = %s, want %s", b, got, want)
		}
	}
	if BumpNone >= BumpPatch || BumpPatch >= BumpMinor || BumpMinor >= BumpMajor {
		t.Fatal("bumps are not ordered")
	}
	for b, want := range map[Bump]string{BumpNone: "none", BumpPatch: "PATCH", BumpMinor: "MINOR", BumpMajor: "MAJOR"} {
		if b.String() != want {
			t.Errorf("Bump(%d).String() = %q, want %q", int(b), b.String(), want)
		}
	}
}

func TestParsePin(t *testing.T) {
	cases := []struct {
		pin     string
		matches []string
		misses  []string
	}{
		{"1", []string{"1.0.0", "1.2.3", "1.99.0"}, []string{"0.9.9", "2.0.0"}},
		{"1.2", []string{"1.2.0", "1.2.9"}, []string{"1.3.0", "1.1.9", "2.2.0"}},
		{"1.2.3", []string{"1.2.3"}, []string{"1.2.4", "1.2.2"}},
		{"0", []string{"0.1.0"}, []string{"1.0.0"}},
	}
	for _, c := range cases {
		p, err := ParsePin(c.pin)
		if err != nil {
			t.Fatalf("ParsePin(%q): %v", c.pin, err)
		}
		if p.String() != c.pin {
			t.Errorf("pin %q renders as %q", c.pin, p.String())
		}
		for _, s := range c.matches {
			v, _ := ParseVersion(s)
			if !p.Matches(v) {
				t.Errorf("pin %q should match %s", c.pin, s)
			}
		}
		for _, s := range c.misses {
			v, _ := ParseVersion(s)
			if p.Matches(v) {
				t.Errorf("pin %q should not match %s", c.pin, s)
			}
		}
	}
	for _, s := range []string{"", "1.2.3.4", "v1", "01", "1.x", "1.", "^1.2"} {
		_, err := ParsePin(s)
		if err == nil || !strings.Contains(err.Error(), "expected MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH") {
			t.Errorf("ParsePin(%q) error = %v", s, err)
		}
	}
}
