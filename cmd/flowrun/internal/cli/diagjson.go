package cli

import (
	"github.com/flowrun/flowrun/lang"
	"github.com/hashicorp/hcl/v2"
)

// writeDiags prints diagnostics for people on stderr or, while a verb
// prints JSON (validate --json), collects them for its output.
func (e *env) writeDiags(files map[string]*hcl.File, diags hcl.Diagnostics) error {
	if e.diags != nil {
		for _, d := range diags {
			*e.diags = append(*e.diags, diagnosticJSON(d))
		}
		return nil
	}
	return lang.WriteDiagnostics(e.stderr, files, diags, e.useColor(e.stderr), width(e.stderr))
}

// diagJSON is one diagnostic of validate --json (spec/semantics.md §16).
type diagJSON struct {
	Severity string     `json:"severity"` // error or warning
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	File     *string    `json:"file"`  // null when the problem has no file
	Range    *rangeJSON `json:"range"` // null when it has no position
}

// rangeJSON is a source range: from start up to (not including) end.
type rangeJSON struct {
	Start posJSON `json:"start"`
	End   posJSON `json:"end"`
}

// posJSON is a position: line and column count from 1 (the column in
// characters), byte from 0.
type posJSON struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

func diagnosticJSON(d *hcl.Diagnostic) diagJSON {
	out := diagJSON{Severity: "error", Summary: d.Summary, Detail: d.Detail}
	if d.Severity == hcl.DiagWarning {
		out.Severity = "warning"
	}
	if r := d.Subject; r != nil {
		if r.Filename != "" {
			name := r.Filename
			out.File = &name
		}
		out.Range = &rangeJSON{
			Start: posJSON{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
			End:   posJSON{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte},
		}
	}
	return out
}

// errorDiagJSON is a mistake that is no diagnostic of a file (no files
// given, no workflow found) as a diagnostic without file or range.
func errorDiagJSON(xe *exitError) diagJSON {
	return diagJSON{Severity: "error", Summary: xe.message(), Detail: xe.hintText}
}
