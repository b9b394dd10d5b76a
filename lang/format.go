package lang

// Canonical formatting of workflow files, for `flowrun fmt`.

import (
	"bytes"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns the canonical layout of an HCL file. A file with syntax
// errors is not formatted: Format returns nil and hclsyntax's diagnostics,
// unchanged, with their source ranges in filename.
//
// The canonical layout is hclwrite.Format's (two-space indentation, aligned
// "=" in runs of attributes, spacing inside expressions), and then:
//
//   - CRLF line endings become LF;
//   - trailing spaces and tabs are removed from every line, comments
//     included;
//   - blank lines at the start of the file are removed, runs of blank lines
//     become one, and the file ends with exactly one newline (an empty file
//     stays empty);
//   - heredoc bodies, closing marker included, are left byte for byte as
//     they are, since their whitespace is part of the value.
//
// Comments are kept. Format is idempotent: Format(Format(x)) == Format(x).
func Format(filename string, src []byte) ([]byte, hcl.Diagnostics) {
	if d := checkShape(filename, src); d != nil {
		return nil, hcl.Diagnostics{d}
	}
	_, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	out := bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	// hclwrite and the line pass are each idempotent and neither undoes the
	// other, but running to a fixed point (twice in practice) guarantees it.
	for range 4 {
		next := formatLines(filename, hclwrite.Format(out))
		if bytes.Equal(next, out) {
			break
		}
		out = next
	}
	if _, more := hclsyntax.ParseConfig(out, filename, hcl.InitialPos); more.HasErrors() {
		return nil, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Formatting failed",
			Detail:   "Formatting " + filename + " produced a file that does not parse; the file is left unchanged. Please report this as a flowrun bug with the file attached.",
		})
	}
	return out, diags
}

// formatLines trims trailing whitespace and collapses blank lines outside
// heredoc bodies.
func formatLines(filename string, src []byte) []byte {
	protected := formatHeredocs(filename, src)
	inHeredoc := func(off int) bool {
		i := sort.Search(len(protected), func(i int) bool { return protected[i][1] > off })
		return i < len(protected) && protected[i][0] <= off
	}
	var out bytes.Buffer
	blanks := 0
	started := false
	off := 0
	for len(src) > 0 {
		line := src
		rest := []byte(nil)
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, rest = src[:i], src[i+1:]
		}
		if inHeredoc(off) {
			if started && blanks > 0 {
				out.WriteByte('\n')
			}
			blanks = 0
			out.Write(line)
			out.WriteByte('\n')
			started = true
		} else if t := bytes.TrimRight(line, " \t"); len(t) == 0 {
			blanks++
		} else {
			if started && blanks > 0 {
				out.WriteByte('\n')
			}
			blanks = 0
			out.Write(t)
			out.WriteByte('\n')
			started = true
		}
		off += len(line) + 1
		src = rest
	}
	return out.Bytes()
}

// formatHeredocs returns the byte ranges [start, end) of the lines holding
// heredoc bodies and closing markers, sorted.
func formatHeredocs(filename string, src []byte) [][2]int {
	toks, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	var spans [][2]int
	start := -1
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOHeredoc:
			start = t.Range.End.Byte // the opening token ends after its newline
		case hclsyntax.TokenCHeredoc:
			if start >= 0 {
				spans = append(spans, [2]int{start, t.Range.End.Byte})
				start = -1
			}
		}
	}
	return spans
}
