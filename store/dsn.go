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
	if keywordDSN(dsn) {
		return "is a PostgreSQL key=value connection string, which flowrun does not take (it would be the name of a SQLite file): write it as a URL, postgres://USER:PASSWORD@HOST:PORT/DATABASE, with other settings as ?sslmode=require&search_path=SCHEMA"
	}
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

// pgKeywords are libpq's connection keywords that a key=value connection
// string names its server and database with.
var pgKeywords = []string{"host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "passfile", "service"}

// keywordDSN reports whether dsn is a PostgreSQL key=value connection
// string: every word is KEY=VALUE and one of them a connection keyword.
func keywordDSN(dsn string) bool {
	words := strings.Fields(dsn)
	known := false
	for _, w := range words {
		k, _, ok := strings.Cut(w, "=")
		if ok && strings.Trim(k, "abcdefghijklmnopqrstuvwxyz_") != "" {
			return false // not a keyword: a path such as ./a=b
		}
		if !ok || k == "" {
			// A quoted value with spaces ('a b') splits into words
			// without "=": they do not make it a file name.
			if strings.HasSuffix(w, "'") {
				continue
			}
			return false
		}
		for _, pk := range pgKeywords {
			if k == pk {
				known = true
			}
		}
	}
	return known
}

// ShownDSN is dsn as a message may show it: the password of a URL
// (postgres://user:PASSWORD@host, ?password=) or of a key=value connection
// string replaced by xxxxx. A file path is shown as it is.
func ShownDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i > 0 && isScheme(dsn[:i]) {
		rest := dsn[i+3:]
		host := rest
		if j := strings.IndexAny(host, "/?#"); j >= 0 {
			host = host[:j]
		}
		if at := strings.LastIndex(host, "@"); at >= 0 {
			if colon := strings.Index(host[:at], ":"); colon >= 0 {
				dsn = dsn[:i+3] + host[:colon+1] + "xxxxx" + rest[at:]
			}
		}
		return maskAfter(dsn, []string{"?password=", "&password="}, "&#")
	}
	if keywordDSN(dsn) {
		return maskAfter(dsn, []string{"password="}, " \t")
	}
	return dsn
}

// maskAfter replaces the value after each key of keys (up to one of the
// bytes of ends) with xxxxx. A value in quotes ('...') ends at its quote.
func maskAfter(s string, keys []string, ends string) string {
	for _, k := range keys {
		for from := 0; ; {
			i := strings.Index(s[from:], k)
			if i < 0 {
				break
			}
			start := from + i + len(k)
			if k == "password=" && from+i > 0 && s[from+i-1] != ' ' && s[from+i-1] != '\t' {
				from = start
				continue
			}
			end := start
			if end < len(s) && s[end] == '\'' {
				end++
				for end < len(s) && s[end] != '\'' {
					if s[end] == '\\' {
						end++
					}
					end++
				}
				end = min(end+1, len(s))
			} else if j := strings.IndexAny(s[start:], ends); j >= 0 {
				end = start + j
			} else {
				end = len(s)
			}
			s = s[:start] + "xxxxx" + s[end:]
			from = start + len("xxxxx")
		}
	}
	return s
}
