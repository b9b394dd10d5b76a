package store

import (
	"fmt"
	"strings"
)

// DSNProblem says what is wrong with a database value (--db, FLOWRUN_DB)
// that looks like a URL flowrun cannot use, as the rest of a sentence that
// names the value ("--db \"mysql://h\" " + problem): a SCHEME:// other than
// postgres://, postgresql:// or sqlite://, a supported scheme in upper
// case, or postgres:, postgresql: or sqlite: without the "//". Taken as a
// file path, such a value would make directories like ./mysql:/h. It
// returns "" for a supported URL and for anything else, which is a file
// path. It opens nothing.
func DSNProblem(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok || !isScheme(scheme) {
		return ""
	}
	switch lower := strings.ToLower(scheme); {
	case lower != scheme && (lower == "postgres" || lower == "postgresql" || lower == "sqlite"):
		return fmt.Sprintf("is not a database flowrun can use: write the scheme %s in lower case, as %s://", scheme, lower)
	case strings.HasPrefix(rest, "//"):
		if scheme == "postgres" || scheme == "postgresql" || scheme == "sqlite" {
			return ""
		}
		return fmt.Sprintf("is not a database flowrun can use: %s:// is not a supported scheme; flowrun stores runs in PostgreSQL (postgres://, postgresql://) or in a SQLite file", scheme)
	case scheme == "postgres" || scheme == "postgresql":
		return fmt.Sprintf("is not a valid PostgreSQL URL: it must start with %s:// (two slashes)", scheme)
	case scheme == "sqlite":
		return "is not a valid SQLite location: write sqlite://PATH, or the path alone"
	}
	return ""
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or ".").
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}
