package store

import (
	"strings"
	"testing"
)

func TestDSNProblem(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u@h/db", ""},
		{"postgresql://h/db", ""},
		{"sqlite://data.db", ""},
		{".flowrun/flowrun.db", ""},
		{"./data:1.db", ""},
		{"/abs/path.db", ""},
		{"C:1.db", ""}, // a one-letter scheme-like name with no "//": a file
		{"mysql://u@h/db", "mysql:// is not a supported scheme"},
		{"file:///tmp/x.db", "file:// is not a supported scheme"},
		{"POSTGRES://h/db", "write the scheme POSTGRES in lower case, as postgres://"},
		{"postgres:/oops", "must start with postgres:// (two slashes)"},
		{"postgresql:db", "must start with postgresql://"},
		{"sqlite:x.db", "write sqlite://PATH, or the path alone"},
	} {
		got := DSNProblem(tc.dsn)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("DSNProblem(%q) = %q, want it to say %q", tc.dsn, got, tc.want)
		}
	}
}
