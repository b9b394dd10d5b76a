package lang

import (
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// VersionRange returns the range of the value of the workflow's version
// attribute (the quoted "1.2.3"), where a diagnostic about the version
// points; the workflow block's header when it has no version attribute.
func (w *Workflow) VersionRange() hcl.Range {
	if r, ok := w.Sources.find("workflow.version", kindAttr); ok {
		return r
	}
	return w.Range
}

// BumpDiagnostic renders the refusal e as an error diagnostic placed on the
// version attribute of w, the workflow whose graph was checked (CheckBump's
// new), so that it prints with the file, line and column and the source
// line like every other diagnostic (WriteDiagnostics with the Module's
// Files). Its detail is the message of Error, the changes one per line,
// and the version to set.
func (w *Workflow) BumpDiagnostic(e *graph.BumpError) *hcl.Diagnostic {
	var summary string
	var b strings.Builder
	switch e.Reason {
	case graph.BumpLower:
		summary = "Version lower than stored"
		fmt.Fprintf(&b, "Workflow %q version %s is lower than the stored version %s; versions only go up.", e.Workflow, e.New, e.Old)
	case graph.BumpSameVersion:
		summary = "Version already stored"
		fmt.Fprintf(&b, "Workflow %q version %s is already stored with a different graph; the changes need a %s bump.", e.Workflow, e.New, e.Required)
	default:
		summary = "Version bump too small"
		fmt.Fprintf(&b, "Workflow %q version %s declares a %s change from the stored version %s, but the changes need %s.", e.Workflow, e.New, e.Declared, e.Old, e.Required)
	}
	if len(e.Changes) > 0 {
		b.WriteString(" The changes:")
		for _, c := range e.Changes {
			b.WriteString("\n  ")
			b.WriteString(c.String())
		}
		b.WriteString("\n")
	} else {
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "Set version = %q or later.", e.Suggested().String())
	rng := w.VersionRange()
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: b.String(), Subject: &rng}
}
