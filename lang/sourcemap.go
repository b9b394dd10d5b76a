package lang

import (
	"math"
	"sort"
	"sync"

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
// Block gives a path's whole range (from its type keyword to its closing
// brace), Label its name label (for the workflow, the name label; for
// unlabeled blocks, the type keyword), and Attr the range of the value
// expression of the attribute at PATH.ATTRIBUTE (for example
// "step.charge.when", "step.charge.retry.when", "workflow.version",
// "input.amount.default").
//
// A long workflow has several ranges per step, kept until the workflow is
// dropped: the map holds them as one slice of entries with their positions
// in 32-bit numbers (a quarter of an hcl.Range each, no map overhead), and
// finds a path by scanning the entries, or by an index built once a map
// has been asked often.
type SourceMap struct {
	File string

	entries []sourceEntry
	// wide holds the ranges whose positions do not fit 32 bits.
	wide []wideEntry

	mu      sync.Mutex
	asked   int
	byPath  []int32 // entries' indices sorted by path and kind; nil until built
	indexed int     // len(entries) when byPath was built
}

// sourceKind says which of a path's ranges an entry holds.
type sourceKind uint8

const (
	kindBlock sourceKind = iota
	kindLabel
	kindAttr
)

// sourceEntry is one range of a SourceMap.
type sourceEntry struct {
	path string
	rng  packedRange
	kind sourceKind
}

// wideEntry is an entry whose range does not pack.
type wideEntry struct {
	path string
	kind sourceKind
	rng  hcl.Range
}

// packedRange is an hcl.Range without its file name, in 32-bit numbers.
type packedRange struct {
	startLine, startCol, startByte uint32
	endLine, endCol, endByte       uint32
}

// pack packs r; ok is false when a position does not fit.
func pack(r hcl.Range) (packedRange, bool) {
	for _, v := range [...]int{r.Start.Line, r.Start.Column, r.Start.Byte, r.End.Line, r.End.Column, r.End.Byte} {
		if v < 0 || v > math.MaxUint32 {
			return packedRange{}, false
		}
	}
	return packedRange{
		uint32(r.Start.Line), uint32(r.Start.Column), uint32(r.Start.Byte),
		uint32(r.End.Line), uint32(r.End.Column), uint32(r.End.Byte),
	}, true
}

func (p packedRange) unpack(file string) hcl.Range {
	return hcl.Range{
		Filename: file,
		Start:    hcl.Pos{Line: int(p.startLine), Column: int(p.startCol), Byte: int(p.startByte)},
		End:      hcl.Pos{Line: int(p.endLine), Column: int(p.endCol), Byte: int(p.endByte)},
	}
}

// indexAfter is how many lookups a map answers by scanning before it
// builds its index: most maps are asked once or twice (the workflow block,
// the version), and sorting a long workflow's entries costs more than a
// few scans.
const indexAfter = 4

func newSourceMap(file string) *SourceMap { return newSourceMapSized(file, 0, 0) }

// newSourceMapSized is newSourceMap with room for about blocks blocks and
// attrs attributes.
func newSourceMapSized(file string, blocks, attrs int) *SourceMap {
	return &SourceMap{File: file, entries: make([]sourceEntry, 0, 2*blocks+attrs)}
}

// add records the range of kind at path. A path is recorded once per kind
// (a block's path is unique, an attribute's too); were it recorded again,
// lookups would find the first.
func (m *SourceMap) add(path string, kind sourceKind, r hcl.Range) {
	if p, ok := pack(r); ok {
		m.entries = append(m.entries, sourceEntry{path: path, rng: p, kind: kind})
		return
	}
	m.wide = append(m.wide, wideEntry{path: path, kind: kind, rng: r})
}

// find returns the range of kind at path.
func (m *SourceMap) find(path string, kind sourceKind) (hcl.Range, bool) {
	if m == nil {
		return hcl.Range{}, false
	}
	for _, w := range m.wide {
		if w.path == path && w.kind == kind {
			return w.rng, true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked++
	if m.byPath == nil || m.indexed != len(m.entries) {
		if m.asked <= indexAfter {
			for _, e := range m.entries {
				if e.kind == kind && e.path == path {
					return e.rng.unpack(m.File), true
				}
			}
			return hcl.Range{}, false
		}
		m.buildIndex()
	}
	less := func(e *sourceEntry) bool { return e.path > path || e.path == path && e.kind >= kind }
	i := sort.Search(len(m.byPath), func(i int) bool { return less(&m.entries[m.byPath[i]]) })
	if i < len(m.byPath) {
		if e := &m.entries[m.byPath[i]]; e.path == path && e.kind == kind {
			return e.rng.unpack(m.File), true
		}
	}
	return hcl.Range{}, false
}

// buildIndex sorts the entries' indices by path and kind, first recorded
// first.
func (m *SourceMap) buildIndex() {
	idx := make([]int32, len(m.entries))
	for i := range idx {
		idx[i] = int32(i)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := &m.entries[idx[a]], &m.entries[idx[b]]
		if x.path != y.path {
			return x.path < y.path
		}
		return x.kind < y.kind
	})
	m.byPath, m.indexed = idx, len(m.entries)
}

// Block returns the range of the block at path, or the workflow block's
// range when path is unknown (so a message always has a place to point).
func (m *SourceMap) Block(path string) hcl.Range {
	if r, ok := m.find(path, kindBlock); ok {
		return r
	}
	r, _ := m.find("workflow", kindBlock)
	return r
}

// Label returns the range of the block's name label at path, falling back
// as Block does.
func (m *SourceMap) Label(path string) hcl.Range {
	if r, ok := m.find(path, kindLabel); ok {
		return r
	}
	return m.Block(path)
}

// Attr returns the range of the attribute value at path (see SourceMap);
// when the attribute was not written it falls back to the block holding it,
// and then as Block does.
func (m *SourceMap) Attr(path string) hcl.Range {
	if r, ok := m.find(path, kindAttr); ok {
		return r
	}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '.' {
			if r, ok := m.find(path[:i], kindBlock); ok {
				return r
			}
		}
	}
	r, _ := m.find("workflow", kindBlock)
	return r
}

// addBlock records a block under path.
func (m *SourceMap) addBlock(path string, b *hcl.Block) {
	if m == nil || b == nil {
		return
	}
	m.add(path, kindBlock, rangeOfBlock(b))
	if len(b.LabelRanges) > 0 {
		m.add(path, kindLabel, b.LabelRanges[0])
	} else {
		m.add(path, kindLabel, b.TypeRange)
	}
}

// addAttrs records every attribute of a decoded body under path, in name
// order (so that two decodes of one file record the same entries).
func (m *SourceMap) addAttrs(path string, attrs hcl.Attributes) {
	if m == nil || len(attrs) == 0 {
		return
	}
	if len(attrs) == 1 {
		for name, a := range attrs {
			m.add(path+"."+name, kindAttr, a.Expr.Range())
		}
		return
	}
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m.add(path+"."+name, kindAttr, attrs[name].Expr.Range())
	}
}

// grow makes room for n more entries.
func (m *SourceMap) grow(n int) {
	if len(m.entries)+n > cap(m.entries) {
		grown := make([]sourceEntry, len(m.entries), len(m.entries)+n)
		copy(grown, m.entries)
		m.entries = grown
	}
}

// merge appends the entries of os, in order, to m's.
func (m *SourceMap) merge(os ...*SourceMap) {
	n := 0
	for _, o := range os {
		if o != nil {
			n += len(o.entries)
		}
	}
	m.grow(n)
	for _, o := range os {
		if o != nil {
			m.entries = append(m.entries, o.entries...)
			m.wide = append(m.wide, o.wide...)
		}
	}
}
