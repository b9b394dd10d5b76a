package lang

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/mitchellh/go-wordwrap"
)

// maxSnippetLines is how many source lines a diagnostic shows at most.
const maxSnippetLines = 6

// WriteDiagnostics renders diagnostics the way Terraform does:
//
//	Error: Unknown step
//
//	  on ship.hcl line 12, in step "route":
//	  12:       next = [step.ship_fast]
//	                    ^^^^^^^^^^^^^^
//
//	No step named "ship_fast" is declared. Did you mean "ship_express"?
//
// files gives the source of each file by the name used in the ranges (the
// Module's Files); a diagnostic whose file is unknown is shown without a
// snippet, as "on FILE line L". Warnings are written the same way, as
// "Warning:". With color, the severity and the underline are coloured with
// ANSI escapes; the caller decides (terminal, NO_COLOR). width > 0 wraps the
// detail text at that many columns.
func WriteDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, color bool, width uint) error {
	var buf bytes.Buffer
	for _, d := range diags {
		writeDiagnostic(&buf, files, d, color, width)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write diagnostics: %w", err)
	}
	return nil
}

func writeDiagnostic(buf *bytes.Buffer, files map[string]*hcl.File, d *hcl.Diagnostic, color bool, width uint) {
	sev, sevColor := "Error", "\x1b[1;31m"
	if d.Severity == hcl.DiagWarning {
		sev, sevColor = "Warning", "\x1b[1;33m"
	}
	bold, reset, under := "\x1b[1m", "\x1b[0m", "\x1b[1;4m"
	if !color {
		sevColor, bold, reset, under = "", "", "", ""
	}
	fmt.Fprintf(buf, "%s%s:%s %s%s%s\n\n", sevColor, sev, reset, bold, d.Summary, reset)

	if d.Subject != nil {
		subj := *d.Subject
		var file *hcl.File
		if files != nil {
			file = files[subj.Filename]
		}
		if file == nil || file.Bytes == nil {
			fmt.Fprintf(buf, "  on %s:%d:%d:\n  (source code not available)\n\n", subj.Filename, subj.Start.Line, subj.Start.Column)
		} else {
			in := ""
			if c := blockContext(file, subj.Start.Byte); c != "" {
				in = ", in " + c
			}
			fmt.Fprintf(buf, "  on %s:%d:%d%s:\n", subj.Filename, subj.Start.Line, subj.Start.Column, in)
			writeSnippet(buf, file.Bytes, subj, d.Context, sevColor, under, reset)
			buf.WriteString("\n")
		}
	}
	if d.Detail != "" {
		detail := d.Detail
		if width > 1 {
			detail = wordwrap.WrapString(detail, width-1)
		}
		buf.WriteString(detail)
		buf.WriteString("\n\n")
	}
}

// writeSnippet writes the source lines of subject (and of context, when it
// stays short), each followed by a caret line under the subject's part.
func writeSnippet(buf *bytes.Buffer, src []byte, subj hcl.Range, context *hcl.Range, caretColor, under, reset string) {
	hl := subj
	if hl.Empty() {
		hl.End.Byte++
		hl.End.Column++
	}
	snip := hl
	if context != nil {
		if over := hcl.RangeOver(hl, *context); over.End.Line-over.Start.Line < maxSnippetLines {
			snip = over
		}
	}
	shown := 0
	sc := hcl.NewRangeScanner(src, subj.Filename, bufio.ScanLines)
	for sc.Scan() {
		line := sc.Range()
		if line.End.Line < snip.Start.Line || line.Start.Line > snip.End.Line {
			continue
		}
		if shown == maxSnippetLines {
			buf.WriteString("        ...\n")
			break
		}
		shown++
		text := sc.Bytes()
		prefix := fmt.Sprintf("  %4d: ", line.Start.Line)
		ls, le := line.Start.Byte, line.End.Byte
		if hl.End.Byte <= ls && !(hl.Start.Byte == ls && hl.Empty()) || hl.Start.Byte > le {
			fmt.Fprintf(buf, "%s%s\n", prefix, text)
			continue
		}
		hs, he := clampInt(hl.Start.Byte, ls, le), clampInt(hl.End.Byte, ls, le)
		pre, mid, post := src[ls:hs], src[hs:he], src[he:le]
		fmt.Fprintf(buf, "%s%s%s%s%s%s\n", prefix, pre, under, mid, reset, post)
		n := max(len([]rune(string(mid))), 1)
		fmt.Fprintf(buf, "%s%s%s%s%s\n", strings.Repeat(" ", len(prefix)), indentLike(pre), caretColor, strings.Repeat("^", n), reset)
	}
}

func clampInt(v, lo, hi int) int { return max(lo, min(v, hi)) }

// indentLike returns blanks that line up under s: tabs stay tabs, every
// other character becomes one space.
func indentLike(s []byte) string {
	var b strings.Builder
	for _, r := range string(s) {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// blockContext names the innermost labeled block around offset, such as
// `step "charge"`, or "" when there is none. A block whose header holds
// offset (its type, its labels) is not around it: a diagnostic there is
// about the block itself, which may be misspelled (`stepp "a"`) or
// misnamed, so the context is the block that holds it, as in Terraform.
func blockContext(file *hcl.File, offset int) string {
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return ""
	}
	ctx := ""
	for body != nil {
		var inner *hclsyntax.Body
		for _, b := range body.Blocks {
			if !b.Range().ContainsOffset(offset) || offset < b.OpenBraceRange.End.Byte {
				continue
			}
			if len(b.Labels) > 0 {
				var s strings.Builder
				s.WriteString(b.Type)
				for _, l := range b.Labels {
					fmt.Fprintf(&s, " %q", l)
				}
				ctx = s.String()
			}
			inner = b.Body
			break
		}
		body = inner
	}
	return ctx
}
