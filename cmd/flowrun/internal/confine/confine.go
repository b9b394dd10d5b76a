package confine

import (
	"os"
	"strings"
)

// Process confines the running process (see the package comment). It
// must run before anything reads os.Args: the strings the runtime gives
// for them share their bytes with the process's initial stack, which is
// what is overwritten (the environment's strings are the runtime's
// copies; blankEnv overwrites the original).
func Process() {
	nonDumpable()
	for i := 1; i < len(os.Args); i++ {
		a := os.Args[i]
		if a == "--" {
			break
		}
		var val string
		switch {
		case a == "--db" || a == "-db":
			if i+1 < len(os.Args) {
				i++
				val = os.Args[i]
			}
		case strings.HasPrefix(a, "--db="), strings.HasPrefix(a, "-db="):
			val = a[strings.Index(a, "=")+1:]
		default:
			continue
		}
		if start, end, ok := Password(val); ok {
			orig := os.Args[i]
			os.Args[i] = strings.Clone(orig)
			off := len(orig) - len(val)
			blank(orig[off+start : off+end])
		}
	}
	blankEnv("FLOWRUN_DB")
}

// Password returns where the password of a Postgres DSN is in dsn: the
// password of a postgres:// or postgresql:// URL's user information or
// its password query parameter, or the value of a password= keyword. ok is false when dsn has none.
func Password(dsn string) (start, end int, ok bool) {
	if rest, found := cutScheme(dsn); found {
		off := len(dsn) - len(rest)
		host := rest
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		at := strings.LastIndex(host, "@")
		if at >= 0 {
			if colon := strings.Index(host[:at], ":"); colon >= 0 && colon+1 < at {
				return off + colon + 1, off + at, true
			}
		}
		for _, k := range []string{"?password=", "&password="} {
			if i := strings.Index(rest, k); i >= 0 {
				start = off + i + len(k)
				end = start + strings.IndexAny(dsn[start:]+"&", "&#")
				return start, end, end > start
			}
		}
		return 0, 0, false
	}
	i := strings.Index(dsn, "password=")
	if i < 0 || (i > 0 && dsn[i-1] != ' ' && dsn[i-1] != '\t') {
		return 0, 0, false
	}
	start = i + len("password=")
	end = start
	if end < len(dsn) && dsn[end] == '\'' {
		end++
		for end < len(dsn) && dsn[end] != '\'' {
			if dsn[end] == '\\' {
				end++
			}
			end++
		}
		end = min(end+1, len(dsn))
	} else {
		for end < len(dsn) && dsn[end] != ' ' && dsn[end] != '\t' {
			end++
		}
	}
	return start, end, end > start
}

func cutScheme(dsn string) (string, bool) {
	for _, s := range []string{"postgres://", "postgresql://"} {
		if len(dsn) >= len(s) && strings.EqualFold(dsn[:len(s)], s) {
			return dsn[len(s):], true
		}
	}
	return "", false
}
