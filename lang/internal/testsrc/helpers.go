package testsrc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// Describe renders diagnostics one a line, with the line each is on, for a
// test's failure message.
func Describe(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		line := 0
		if d.Subject != nil {
			line = d.Subject.Start.Line
		}
		fmt.Fprintf(&b, "  line %d: %s: %s\n", line, d.Summary, d.Detail)
	}
	return b.String()
}

// Stored returns v as stored: through JSON, so that what reads it sees
// fresh pointers and types.
func Stored[T any](tb testing.TB, v *T) *T {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatal(err)
	}
	return &out
}
