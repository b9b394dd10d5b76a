package lang

import (
	"maps"

	"github.com/hashicorp/hcl/v2"
)

// SourceMap keeps the source ranges of one compiled workflow, so that
// tools working on the Graph (diff, plan, graph, validate) can point at the
// file. The Graph itself carries no positions: moving a block must not
// change its hash.
//
// Every range is keyed by a path that names a block the way a reference
// would:
//
//	workflow                     the workflow block
//	input.NAME, secret.NAME      an input or secret block
//	breaker.NAME                 a breaker block
//	concurrency, defaults, limits
//	step.NAME                    a step block
//	step.NAME.ACTION             the step's action block (exec, http, set, ...)
//	output.NAME, alert.NAME      an output or alert block
//
// Blocks maps a path to the block's whole range (from its type keyword to
// its closing brace), Labels to its name label (for the workflow, the name
// label; for unlabeled blocks, the type keyword), and Attrs maps
// PATH.ATTRIBUTE (for example "step.charge.when", "step.charge.retry.when",
// "workflow.version", "input.amount.default") to the range of the
// attribute's value expression.
type SourceMap struct {
	File   string
	Blocks map[string]hcl.Range
	Labels map[string]hcl.Range
	Attrs  map[string]hcl.Range
}

func newSourceMap(file string) *SourceMap { return newSourceMapSized(file, 0, 0) }

// newSourceMapSized is newSourceMap with room for about blocks blocks and
// attrs attributes.
func newSourceMapSized(file string, blocks, attrs int) *SourceMap {
	return &SourceMap{
		File:   file,
		Blocks: make(map[string]hcl.Range, blocks),
		Labels: make(map[string]hcl.Range, blocks),
		Attrs:  make(map[string]hcl.Range, attrs),
	}
}

// Block returns the range of the block at path, or the workflow block's
// range when path is unknown (so a message always has a place to point).
func (m *SourceMap) Block(path string) hcl.Range {
	if r, ok := m.Blocks[path]; ok {
		return r
	}
	return m.Blocks["workflow"]
}

// Label returns the range of the block's name label at path, falling back
// as Block does.
func (m *SourceMap) Label(path string) hcl.Range {
	if r, ok := m.Labels[path]; ok {
		return r
	}
	return m.Block(path)
}

// Attr returns the range of the attribute value at path (see SourceMap);
// when the attribute was not written it falls back to the block holding it,
// and then as Block does.
func (m *SourceMap) Attr(path string) hcl.Range {
	if r, ok := m.Attrs[path]; ok {
		return r
	}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '.' {
			if r, ok := m.Blocks[path[:i]]; ok {
				return r
			}
		}
	}
	return m.Blocks["workflow"]
}

// addBlock records a block under path.
func (m *SourceMap) addBlock(path string, b *hcl.Block) {
	if m == nil || b == nil {
		return
	}
	m.Blocks[path] = rangeOfBlock(b)
	if len(b.LabelRanges) > 0 {
		m.Labels[path] = b.LabelRanges[0]
	} else {
		m.Labels[path] = b.TypeRange
	}
}

// addAttrs records every attribute of a decoded body under path.
func (m *SourceMap) addAttrs(path string, attrs hcl.Attributes) {
	if m == nil {
		return
	}
	for name, a := range attrs {
		m.Attrs[path+"."+name] = a.Expr.Range()
	}
}

// merge adds every range of the maps in os to m, growing m's maps once.
func (m *SourceMap) merge(os ...*SourceMap) {
	m.Blocks = mergeRanges(m.Blocks, os, func(o *SourceMap) map[string]hcl.Range { return o.Blocks })
	m.Labels = mergeRanges(m.Labels, os, func(o *SourceMap) map[string]hcl.Range { return o.Labels })
	m.Attrs = mergeRanges(m.Attrs, os, func(o *SourceMap) map[string]hcl.Range { return o.Attrs })
}

// mergeRanges returns dst with every entry of of(o), o in os, added: a new
// map sized for all of them when they are more than dst holds.
func mergeRanges(dst map[string]hcl.Range, os []*SourceMap, of func(*SourceMap) map[string]hcl.Range) map[string]hcl.Range {
	n := 0
	for _, o := range os {
		n += len(of(o))
	}
	if n > len(dst) {
		grown := make(map[string]hcl.Range, len(dst)+n)
		maps.Copy(grown, dst)
		dst = grown
	}
	for _, o := range os {
		maps.Copy(dst, of(o))
	}
	return dst
}
