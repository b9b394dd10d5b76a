// Package naming words names in messages: lists of quoted names, and the
// nearest of a set of names for a "did you mean". It must not import any
// other package of flowrun.
package naming

import (
	"fmt"
	"sort"
	"strings"
)

// DidYouMean returns ` Did you mean "x"?` for the nearest of names, or "".
func DidYouMean(given string, names []string) string {
	if s := NearestName(given, names); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

// NearestName is the name within edit distance 2 of given, ignoring case,
// or "": the "did you mean" of every diagnostic, and of the CLI's. The
// edits may change at most half of given, so a short name is not "meant"
// as any other short name (zz is not a).
func NearestName(given string, names []string) string {
	best, bestDist := "", min(3, len([]rune(given))/2+1)
	for _, n := range names {
		d := EditDistance(strings.ToLower(given), strings.ToLower(n))
		if d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// EditDistance is the number of single-rune edits between a and b: an
// insertion, a deletion, a substitution, or a swap of two adjacent runes
// (the optimal string alignment distance), so "og" is one edit from "go",
// the slip typing makes most.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func ContainsName(names []string, s string) bool {
	for _, n := range names {
		if n == s {
			return true
		}
	}
	return false
}

func NamesSorted[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ValidIdent reports whether s is a CEL identifier: a letter or
// underscore, then letters, digits and underscores.
func ValidIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// ValidWorkflowName reports whether s is a workflow name
// (spec/language.md §1): up to 64 letters, digits, "-" and "_", starting
// with a letter.
func ValidWorkflowName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_'):
		default:
			return false
		}
	}
	return true
}

// QuotedNames renders names for a message as "a", "b" and "c".
func QuotedNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// QuoteList renders names for a message: `a`, `b` and `c`.
func QuoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return QuotedNames(names)
}
