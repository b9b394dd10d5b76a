package expr

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestErrorFieldWarnings: an unguarded read of error.status or
// error.exit_code is a warning at the read; has() on the left of && or
// ||, or in the condition of ?:, guards it; error.kind and message need no
// guard.
func TestErrorFieldWarnings(t *testing.T) {
	cases := []struct {
		src  string
		want []string // the fields warned about, in order
	}{
		{"error.status >= 500", []string{"status"}},
		{"error.exit_code == 75", []string{"exit_code"}},
		{"error.kind == 'exec' && error.exit_code == 75", []string{"exit_code"}},
		{"error.status == 429 || error.status >= 500", []string{"status", "status"}},
		{"has(error.status) && error.status >= 500", nil},
		{"error.kind == 'timeout' || (has(error.status) && error.status >= 500)", nil},
		{"!has(error.status) || error.status >= 500", nil},
		{"has(error.status) ? error.status >= 500 : false", nil},
		{"has(error.status) && error.exit_code == 1", []string{"exit_code"}},
		{"error.kind == 'timeout' && error.message.contains('x')", nil},
		{"[429, 503].exists(s, s == error.status)", []string{"status"}},
	}
	for _, c := range cases {
		p, diags := ParseExpr(c.src, hcl.Range{Filename: "f.hcl", Start: hcl.Pos{Line: 1, Column: 1}, End: hcl.Pos{Line: 1, Column: len(c.src) + 3, Byte: len(c.src) + 2}})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", c.src, diags)
		}
		var got []string
		for _, d := range p.ErrorFieldWarnings(RetryWhenFails) {
			if d.Severity != hcl.DiagWarning {
				t.Errorf("%s: severity %v, want a warning", c.src, d.Severity)
			}
			f := strings.TrimSuffix(strings.TrimPrefix(d.Summary, "error."), " may be absent")
			got = append(got, f)
			if !strings.Contains(d.Detail, "has(error."+f+")") {
				t.Errorf("%s: the detail does not show the guard: %s", c.src, d.Detail)
			}
			// The subject covers error.FIELD in the source.
			if s := c.src[d.Subject.Start.Column-2 : d.Subject.End.Column-2]; s != "error."+f {
				t.Errorf("%s: the warning covers %q, want %q", c.src, s, "error."+f)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: warned about %v, want %v", c.src, got, c.want)
		}
	}
}
