package naming

import "testing"

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "ab", 2},
		{"name", "name", 0},
		{"nme", "name", 1},
		{"og", "go", 1},     // a swap of adjacent runes is one edit
		{"stpe", "step", 1}, // likewise inside a name
		{"ca", "abc", 3},    // no substring is edited twice
		{"kitten", "sitting", 3},
		{"héllo", "hello", 1}, // runes, not bytes
	} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := EditDistance(c.b, c.a); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

// NearestName suggests a name within two edits, changing at most half of
// what was given: a short name is not taken for any other short name.
func TestNearestName(t *testing.T) {
	for _, c := range []struct {
		given string
		names []string
		want  string
	}{
		{"zz", []string{"a"}, ""},            // two edits of a two-rune name
		{"x", []string{"y"}, ""},             // one edit of a one-rune name
		{"A", []string{"a"}, "a"},            // case is ignored
		{"og", []string{"go", "stop"}, "go"}, // a swap
		{"s0", []string{"s1", "s22"}, "s1"},
		{"nme", []string{"name", "none"}, "name"},
		{"reciept", []string{"receipt"}, "receipt"},
		{"chekout", []string{"checkout", "ship"}, "checkout"},
		{"shipment", []string{"a", "b"}, ""},
		{"inptu", []string{"input"}, "input"},
	} {
		if got := NearestName(c.given, c.names); got != c.want {
			t.Errorf("NearestName(%q, %q) = %q, want %q", c.given, c.names, got, c.want)
		}
	}
}
