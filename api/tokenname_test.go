package api

import (
	"regexp"
	"strings"
	"testing"
)

// TestTokenNameRule: TokenNameProblem accepts exactly the names of the
// documented rule, 1 to 64 ASCII letters, digits, '.', '_' or '-', the
// first a letter or digit.
func TestTokenNameRule(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	names := []string{"", "a", "A", "0", "ci-deploy", "ci.deploy_2", ".hidden", "-x", "_x", "a b", "a/b", "é", "aé", "a\x00",
		strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("-", 63), "a" + strings.Repeat("-", 64)}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "a"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		want := rule.MatchString(n)
		if got := TokenNameProblem(n) == ""; got != want {
			t.Errorf("TokenNameProblem(%q) accepts %v, want %v", n, got, want)
		}
	}
}
