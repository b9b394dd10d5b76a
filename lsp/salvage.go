package lsp

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/flowrun/flowrun/lang"
)

// salvageRounds bounds how many times salvage blanks blocks out.
const salvageRounds = 4

// salvage gives hover and completion something to work with in a
// document that has not compiled since it was opened (d.good holds no
// graph for a workflow of it): it compiles the document again with every
// block that holds an error and that no expression can reference (a step,
// and a schedule, webhook, alert or output, which nothing reads) blanked
// out (each byte a space, newlines kept, so every position stays), then
// with the steps that failed because of those, a few rounds, and keeps the
// graphs of the workflows that then compile. A graph kept this way lacks
// the blanked blocks, and their steps get no types; every other step is
// typed as written. It writes no diagnostic: the document's own stay those
// of the real compile.
func (s *server) salvage(d *document, diags hcl.Diagnostics, opts lang.LoadOptions) {
	if d.body == nil {
		return
	}
	src := append([]byte(nil), d.text.src...)
	for range salvageRounds {
		blanked := false
		for _, x := range diags {
			if x.Severity != hcl.DiagError || x.Subject == nil || x.Subject.Filename != d.path {
				continue
			}
			if b := salvageBlockAt(d.body, x.Subject.Start.Byte); b != nil {
				r := b.Range()
				if r.Start.Byte < r.End.Byte && r.End.Byte <= len(src) && !isBlank(src[r.Start.Byte:r.End.Byte]) {
					blank(src[r.Start.Byte:r.End.Byte])
					blanked = true
				}
			}
		}
		if !blanked {
			return // an error outside every such block: nothing to leave out
		}
		var mod *lang.Module
		mod, diags = lang.LoadSources([]lang.Source{{Name: d.path, Src: src}}, opts)
		for _, w := range mod.Workflows {
			if w.Graph != nil && d.good[w.Name] == nil {
				d.good[w.Name] = w.Graph
			}
		}
		if !diags.HasErrors() {
			return
		}
	}
}

// needsSalvage reports whether a workflow of d has no graph to type with.
func needsSalvage(d *document, mod *lang.Module) bool {
	for _, w := range mod.Workflows {
		if w.File == d.path && w.Graph == nil && d.good[w.Name] == nil {
			return true
		}
	}
	return false
}

// salvageBlockAt is the block of a workflow of body that holds byte
// offset off and that salvage may leave out, or nil: a step (the steps
// that read it fail in turn and are left out in the next round), or a
// schedule, webhook, alert or output, which no expression reads.
func salvageBlockAt(body *hclsyntax.Body, off int) *hclsyntax.Block {
	for _, w := range body.Blocks {
		if w.Type != "workflow" || w.Body == nil {
			continue
		}
		for _, b := range w.Body.Blocks {
			if r := b.Range(); salvageable(b.Type) && r.Start.Byte <= off && off < r.End.Byte {
				return b
			}
		}
	}
	return nil
}

// salvageable reports whether salvage may leave out a block of the type.
func salvageable(typ string) bool {
	switch typ {
	case "step", "schedule", "webhook", "alert", "output":
		return true
	}
	return false
}

func blank(b []byte) {
	for i, c := range b {
		if c != '\n' {
			b[i] = ' '
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\n' {
			return false
		}
	}
	return true
}
