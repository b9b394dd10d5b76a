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
		{"host=db.internal port=5432 user=flowrun password=s3cret dbname=prod", "key=value connection string"},
		{"dbname=prod", "key=value connection string"},
		{"host=db password='a b' dbname=prod", "key=value connection string"},
		{"runs=1.db", ""},          // a file name with "=" in it
		{"my host=x.db", ""},       // a word without "=": a file name
		{"./host=db dbname=x", ""}, // a path
	} {
		got := DSNProblem(tc.dsn)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("DSNProblem(%q) = %q, want it to say %q", tc.dsn, got, tc.want)
		}
	}
}

func TestShownDSN(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u:s3cret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://u@h/db?sslmode=disable&password=s3cret", "postgres://u@h/db?sslmode=disable&password=xxxxx"},
		{"postgres://h/db?user=u&password=s3cret&sslmode=require", "postgres://h/db?user=u&password=xxxxx&sslmode=require"},
		{"mysql://u:s3cret@h/db", "mysql://u:xxxxx@h/db"},
		{"host=db user=u password=s3cret dbname=prod", "host=db user=u password=xxxxx dbname=prod"},
		{"host=db password='s3 cret' dbname=prod", "host=db password=xxxxx dbname=prod"},
		{".flowrun/flowrun.db", ".flowrun/flowrun.db"},
	} {
		if got := ShownDSN(tc.dsn); got != tc.want {
			t.Errorf("ShownDSN(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}
