package lang

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Decoding step blocks while the file is parsed.
//
// A long file is parsed in pieces side by side (parseconfig.go). The
// pieces are runs of the blocks nested one level deep: a workflow's steps.
// Each piece's step blocks are decoded by the goroutine that parsed them,
// as soon as they are parsed, and their bodies are then emptied: a step's
// syntax (and the piece's tokens) is garbage before the next piece is
// parsed, so the file's whole syntax tree is never held at once.
//
// decodeStepBlocks takes a step block's declaration from the predecoded
// steps when it is there (by the offset of its type keyword), with the
// diagnostics and source ranges its decode gave, in the block's place:
// the declarations, diagnostics and source map are those decoding the
// blocks there would give. A step block that decodeWorkflowBlock does not
// decode (a second step of one name, a block with other labels) leaves
// its predecoded declaration unused.

// predecoded holds the step blocks decoded while the file was parsed.
type predecoded struct {
	byStart map[int]*preStep
}

// preStep is one predecoded step block: its declaration, its diagnostics,
// and its source ranges (entries [from, to) and wide [wfrom, wto) of sm,
// the map of its piece).
type preStep struct {
	start      int // the byte offset of the block's type keyword
	decl       *stepDecl
	diags      hcl.Diagnostics
	sm         *SourceMap
	from, to   int
	wfrom, wto int
}

// step returns the predecoded declaration of block, or nil.
func (p *predecoded) step(block *hcl.Block) *preStep {
	if p == nil {
		return nil
	}
	return p.byStart[block.TypeRange.Start.Byte]
}

// entries counts the source ranges of blocks' predecoded steps.
func (p *predecoded) entries(blocks []*hcl.Block) int {
	n := 0
	for _, b := range blocks {
		if s := p.step(b); s != nil {
			n += s.to - s.from
		}
	}
	return n
}

// addTo appends the step's source ranges to sm.
func (s *preStep) addTo(sm *SourceMap) {
	sm.entries = append(sm.entries, s.sm.entries[s.from:s.to]...)
	sm.wide = append(sm.wide, s.sm.wide[s.wfrom:s.wto]...)
}

// predecodeSteps decodes the step blocks among blocks (a piece's blocks,
// which will be nested in the file's workflow blocks) into a source map of
// their own, and empties each decoded block's body, keeping its range.
func predecodeSteps(blocks hclsyntax.Blocks, filename string) []*preStep {
	var out []*preStep
	var sm *SourceMap
	for _, b := range blocks {
		if b.Type != "step" || len(b.Labels) != 1 || b.Body == nil {
			continue
		}
		if sm == nil {
			// Room for a step and its action block, each with its label,
			// and one attribute per step: most steps have no more.
			sm = newSourceMapSized(filename, 2*len(blocks), len(blocks))
		}
		from, wfrom := len(sm.entries), len(sm.wide)
		decl, diags := decodeStepBlock(b.AsHCLBlock(), sm)
		out = append(out, &preStep{start: b.TypeRange.Start.Byte, decl: decl, diags: diags, sm: sm,
			from: from, to: len(sm.entries), wfrom: wfrom, wto: len(sm.wide)})
		*b.Body = hclsyntax.Body{SrcRange: b.Body.SrcRange, EndRange: b.Body.EndRange}
	}
	return out
}
