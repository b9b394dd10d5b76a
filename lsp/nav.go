package lsp

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// definition answers textDocument/definition: the block a reference
// names (steps.X and step.X: the step; input.X; secrets.X and a webhook's
// secret.X: the secret; breaker.X),
// found in the same workflow's syntax tree. nil when off is on no
// reference or the block is not in the file.
func definition(d *document, off int) []Location {
	if d.body == nil {
		return nil // over the size limit
	}
	site := lang.SiteAt(d.body, d.text.src, off)
	ref := site.Ref
	if len(ref.Parts) < 2 || ref.Cursor < 1 || (!site.InCEL && !ref.Static) {
		return nil
	}
	var t string
	switch root := ref.Parts[0].Name; {
	case !ref.Static && root == "steps", ref.Static && root == "step":
		t = "step"
	case !ref.Static && root == "input":
		t = "input"
	case !ref.Static && root == "secrets", ref.Static && root == "secret":
		t = "secret"
	case ref.Static && root == "breaker":
		t = "breaker"
	default:
		return nil
	}
	name := ref.Parts[1].Name
	for _, b := range labelled(workflowBlock(d.body, site.Label("workflow")), t) {
		if b.Labels[0] == name {
			r := b.LabelRanges[0]
			return []Location{{URI: d.uri, Range: d.text.rangeOf(r.Start.Byte, r.End.Byte)}}
		}
	}
	return nil
}

// symbols answers textDocument/documentSymbol: each workflow with its
// inputs and steps (a step's detail is its action), from the syntax tree,
// so a file that does not parse still lists what was read.
func symbols(d *document) []DocumentSymbol {
	out := []DocumentSymbol{}
	if d.body == nil {
		return out
	}
	for _, w := range d.body.Blocks {
		if w.Type != "workflow" || len(w.Labels) == 0 {
			continue
		}
		ws := d.symbol(w, symbolNamespace, "workflow")
		for _, b := range w.Body.Blocks {
			if len(b.Labels) == 0 {
				continue
			}
			switch b.Type {
			case "input":
				ws.Children = append(ws.Children, d.symbol(b, symbolVariable, "input"))
			case "step":
				detail := actionKind(b)
				if detail == "" {
					detail = "no action"
				}
				ws.Children = append(ws.Children, d.symbol(b, symbolFunction, detail))
			}
		}
		out = append(out, ws)
	}
	return out
}

func (d *document) symbol(b *hclsyntax.Block, kind int, detail string) DocumentSymbol {
	r := b.Range()
	l := b.LabelRanges[0]
	return DocumentSymbol{Name: b.Labels[0], Detail: detail, Kind: kind,
		Range: d.text.rangeOf(r.Start.Byte, r.End.Byte), SelectionRange: d.text.rangeOf(l.Start.Byte, l.End.Byte)}
}

// format answers textDocument/formatting with `flowrun fmt`'s layout
// (lang.Format): one edit that replaces the document, none when it is
// formatted already. A file that does not parse cannot be formatted: the
// request fails with the first syntax error.
func format(d *document) ([]TextEdit, error) {
	if d.body == nil {
		return nil, errorf(codeRequestFailed, "cannot format the document: it is over the size limit of a workflow file")
	}
	out, diags := lang.Format(d.path, d.text.src)
	if diags.HasErrors() {
		return nil, errorf(codeRequestFailed, "cannot format the document until it parses: %s", firstError(diags))
	}
	if bytes.Equal(out, d.text.src) {
		return []TextEdit{}, nil
	}
	return []TextEdit{{Range: d.text.rangeOf(0, len(d.text.src)), NewText: string(out)}}, nil
}

func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Subject != nil {
			msg = fmt.Sprintf("%d:%d: %s", d.Subject.Start.Line, d.Subject.Start.Column, msg)
		}
		if d.Detail != "" {
			msg += "; " + strings.TrimSuffix(d.Detail, ".")
		}
		return msg
	}
	return "it does not parse"
}
