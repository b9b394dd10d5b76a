package lang

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/flowrun/flowrun/termtext"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

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
	lines := map[string][]srcLine{}
	for _, d := range diags {
		writeDiagnostic(&buf, files, lines, d, color, width)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write diagnostics: %w", err)
	}
	return nil
}

// srcLine is one line of a source file as hcl.RangeScanner splits it:
// its range and its text without the line break.
type srcLine struct {
	rng  hcl.Range
	text []byte
}

// splitLines splits src into lines once, so that each diagnostic finds its
// lines by search instead of scanning the file again.
func splitLines(src []byte, filename string) []srcLine {
	var out []srcLine
	sc := hcl.NewRangeScanner(src, filename, bufio.ScanLines)
	for sc.Scan() {
		out = append(out, srcLine{rng: sc.Range(), text: sc.Bytes()})
	}
	return out
}

func writeDiagnostic(buf *bytes.Buffer, files map[string]*hcl.File, lines map[string][]srcLine, d *hcl.Diagnostic, color bool, width uint) {
	sev, sevColor := "Error", "\x1b[1;31m"
	if d.Severity == hcl.DiagWarning {
		sev, sevColor = "Warning", "\x1b[1;33m"
	}
	bold, reset, under := "\x1b[1m", "\x1b[0m", "\x1b[1;4m"
	if !color {
		sevColor, bold, reset, under = "", "", "", ""
	}
	fmt.Fprintf(buf, "%s%s:%s %s%s%s\n\n", sevColor, sev, reset, bold, termtext.Line(d.Summary), reset)

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
			ls, ok := lines[subj.Filename]
			if !ok {
				ls = splitLines(file.Bytes, subj.Filename)
				lines[subj.Filename] = ls
			}
			writeSnippet(buf, file.Bytes, ls, subj, d.Context, sevColor, under, reset)
			buf.WriteString("\n")
		}
	}
	if d.Detail != "" {
		// A detail may quote the file (a CEL parser's "token recognition
		// error at: ''"): its control characters are escaped too.
		detail := termtext.Lines(d.Detail)
		if width > 1 {
			detail = wordwrap.WrapString(detail, width-1)
		}
		buf.WriteString(detail)
		buf.WriteString("\n\n")
	}
}

// writeSnippet writes the source lines of subject (and of context, when it
// stays short), each followed by a caret line under the subject's part.
// lines is src split by splitLines.
func writeSnippet(buf *bytes.Buffer, src []byte, lines []srcLine, subj hcl.Range, context *hcl.Range, caretColor, under, reset string) {
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
	// Line numbers only grow from one line to the next: skip to the first
	// line that ends at or after the snippet's start.
	first := sort.Search(len(lines), func(i int) bool { return lines[i].rng.End.Line >= snip.Start.Line })
	for _, l := range lines[first:] {
		line, text := l.rng, l.text
		if line.Start.Line > snip.End.Line {
			break
		}
		if shown == maxSnippetLines {
			buf.WriteString("        ...\n")
			break
		}
		shown++
		prefix := fmt.Sprintf("  %4d: ", line.Start.Line)
		ls, le := line.Start.Byte, line.End.Byte
		if hl.End.Byte <= ls && !(hl.Start.Byte == ls && hl.Empty()) || hl.Start.Byte > le {
			if utf8.RuneCount(text) > maxLineChars {
				fmt.Fprintf(buf, "%s%s%s\n", prefix, snippetText(text[:runeOffset(text, maxLineChars)]), cutMark)
				continue
			}
			fmt.Fprintf(buf, "%s%s\n", prefix, snippetText(text))
			continue
		}
		hs, he := clampInt(hl.Start.Byte, ls, le), clampInt(hl.End.Byte, ls, le)
		rawPre, rawMid, rawPost, cutStart, cutEnd := clipLine(src[ls:hs], src[hs:he], src[he:le])
		// A control character of the file (an escape sequence that would
		// retitle or rewrite the terminal) is shown escaped, as error
		// messages show it; the caret follows the escaped text.
		pre, mid, post := snippetText(rawPre), snippetText(rawMid), snippetText(rawPost)
		lead, trail := "", ""
		if cutStart {
			lead = cutMark
		}
		if cutEnd {
			trail = cutMark
		}
		fmt.Fprintf(buf, "%s%s%s%s%s%s%s%s\n", prefix, lead, pre, under, mid, reset, post, trail)
		n := max(utf8.RuneCountInString(mid), 1)
		fmt.Fprintf(buf, "%s%s%s%s%s\n", strings.Repeat(" ", len(prefix)+len(lead)), indentLike([]byte(pre)), caretColor, strings.Repeat("^", n), reset)
	}
}

// snippetText is source text as a snippet shows it: tabs kept (the caret
// line follows them), every other control character escaped as error
// messages escape it (termtext).
func snippetText(b []byte) string {
	parts := strings.Split(string(b), "\t")
	for i, p := range parts {
		parts[i] = termtext.Line(p)
	}
	return strings.Join(parts, "\t")
}

// maxLineChars is how many characters of one source line a snippet shows.
// A longer line (minified or binary text) is cut to a window around the
// range, marked with cutMark, so that many mistakes on one long line do not
// each repeat all of it: the output stays proportional to the number of
// diagnostics.
const (
	maxLineChars = 160
	leadChars    = 40 // characters kept before the range when the line is cut
	cutMark      = "..."
)

// clipLine cuts a source line, given as the parts before, in and after the
// range, to a window of at most maxLineChars characters that starts
// leadChars before the range (or at the line's start, or so that it ends
// at the line's end). cutStart and cutEnd say which ends were cut. Its
// work is bounded by the window, not by the line's length.
func clipLine(pre, mid, post []byte) (p, m, q []byte, cutStart, cutEnd bool) {
	if len(pre)+len(mid)+len(post) <= maxLineChars ||
		utf8.RuneCount(post[:runeOffset(post, maxLineChars+1)])+
			utf8.RuneCount(mid[:runeOffset(mid, maxLineChars+1)])+
			utf8.RuneCount(pre[runeOffsetBack(pre, len(pre), maxLineChars+1):]) <= maxLineChars {
		return pre, mid, post, false, false
	}
	ps := runeOffsetBack(pre, len(pre), leadChars)
	budget := maxLineChars - utf8.RuneCount(pre[ps:])
	me := runeOffset(mid, budget)
	budget -= utf8.RuneCount(mid[:me])
	qe := runeOffset(post, budget)
	budget -= utf8.RuneCount(post[:qe])
	if budget > 0 {
		// The line's end is in the window: widen it to the left.
		ps = runeOffsetBack(pre, ps, budget)
	}
	return pre[ps:], mid[:me], post[:qe], ps > 0, me < len(mid) || qe < len(post)
}

// runeOffsetBack returns the byte offset k characters before byte end of
// b (or 0), counting an invalid byte as one character.
func runeOffsetBack(b []byte, end, k int) int {
	for ; k > 0 && end > 0; k-- {
		_, size := utf8.DecodeLastRune(b[:end])
		end -= size
	}
	return end
}

// runeOffset returns the byte offset of character k of b (or len(b)),
// counting an invalid byte as one character as utf8.RuneCount does.
func runeOffset(b []byte, k int) int {
	off := 0
	for ; k > 0 && off < len(b); k-- {
		_, size := utf8.DecodeRune(b[off:])
		off += size
	}
	return off
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
	if o, ok := file.Body.(*outlineBody); ok {
		return o.context(offset)
	}
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
			if c := labelContext(b); c != "" {
				ctx = c
			}
			inner = b.Body
			break
		}
		body = inner
	}
	return ctx
}
