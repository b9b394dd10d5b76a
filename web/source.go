package web

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/flowrun/flowrun/termtext"
)

// span is a piece of a highlighted file: its text and its class (""
// for plain text).
type span struct {
	Class, Text string
}

// maxSource bounds the source shown on a page.
const maxSource = 1 << 20

// highlight splits an HCL file into spans by its tokens (hclsyntax's
// lexer): strings, numbers, comments, names and template sequences get a
// class of their own. The text stays text: html/template escapes it, and
// control characters are shown escaped.
func highlight(src []byte) []span {
	if len(src) > maxSource {
		return []span{{Text: termtext.Lines(string(src[:maxSource])) + "\n… (cut: the file is longer)"}}
	}
	toks, diags := hclsyntax.LexConfig(src, "source.hcl", hcl.InitialPos)
	if diags.HasErrors() && len(toks) == 0 {
		return []span{{Text: termtext.Lines(string(src))}}
	}
	var out []span
	last := 0
	for _, t := range toks {
		start, end := t.Range.Start.Byte, t.Range.End.Byte
		if start < last || end > len(src) || start > end {
			continue
		}
		if start > last {
			out = append(out, span{Text: termtext.Lines(string(src[last:start]))})
		}
		out = append(out, span{Class: tokenClass(t.Type), Text: termtext.Lines(string(src[start:end]))})
		last = end
	}
	if last < len(src) {
		out = append(out, span{Text: termtext.Lines(string(src[last:]))})
	}
	return out
}

func tokenClass(t hclsyntax.TokenType) string {
	switch t {
	case hclsyntax.TokenQuotedLit, hclsyntax.TokenOQuote, hclsyntax.TokenCQuote, hclsyntax.TokenStringLit,
		hclsyntax.TokenOHeredoc, hclsyntax.TokenCHeredoc:
		return "str"
	case hclsyntax.TokenNumberLit:
		return "num"
	case hclsyntax.TokenComment:
		return "com"
	case hclsyntax.TokenIdent:
		return "id"
	case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl, hclsyntax.TokenTemplateSeqEnd:
		return "tpl"
	}
	return ""
}
