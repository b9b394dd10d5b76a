// Package testsrc holds what the tests and benchmarks of lang and its
// packages share: the sources of long workflows, and the process's
// processor time. Only tests import it; it must not import lang or any
// package of lang, so that a test of any of them can use it.
package testsrc

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Chain generates a workflow of n steps in a chain, each with a when and
// a template reading the previous step.
func Chain(n int) []byte {
	var b strings.Builder
	b.WriteString("workflow \"big\" {\n  version = \"1.0.0\"\n  input \"limit\" { type = number }\n")
	b.WriteString("  step \"s0\" {\n    set { n = 0 }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n", i)
		fmt.Fprintf(&b, "    when = \"steps.s%d.output.n < input.limit\"\n", i-1)
		fmt.Fprintf(&b, "    set {\n      n = \"{{ steps.s%d.output.n + 1 }}\"\n      label = \"step %d of %d\"\n    }\n  }\n", i-1, i, n)
	}
	b.WriteString("  output \"last\" { value = \"{{ steps.s" + fmt.Sprint(n-1) + ".output.n }}\" }\n}\n")
	return []byte(b.String())
}

// TemplateChain generates bench's store-chain workflow (bench.exprChain):
// n set steps, each but the first reading the one before it in a {{ }}
// template.
func TemplateChain(n int) []byte {
	var b strings.Builder
	b.WriteString("workflow \"chain\" {\n  version = \"1.0.0\"\n  step \"s0\" {\n    set { v = 0 }\n  }\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n  }\n", i, i-1)
	}
	fmt.Fprintf(&b, "  output \"v\" { value = \"{{ steps.s%d.output.v }}\" }\n}\n", n-1)
	return []byte(b.String())
}

// ReportCPU reports the process's processor time since cpu per iteration.
func ReportCPU(b *testing.B, cpu time.Duration) {
	if now := ProcessCPU(); now > 0 {
		b.ReportMetric(float64(now-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}
