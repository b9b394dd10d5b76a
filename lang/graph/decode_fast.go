package graph

// A fast decoder for the canonical JSON of a stored graph.
//
// Resuming a run in a new process decodes its graph first, and encoding/json
// (reflection, a token stream per step) made that the largest part of
// resuming a long workflow. decodeFast reads the format of the IR structs
// in graph.go and types.go directly: one pass of a byte-level scanner over
// the record, each struct's members matched by exact name, strings
// unescaped as encoding/json unescapes them, numbers parsed into the field
// types as encoding/json parses them, literal JSON (Input.Default,
// Value.Lit) copied byte for byte as json.RawMessage holds it, and every
// type read once per distinct text and shared through the typeInterner.
//
// What it must not do: accept anything that the reference decode
// (encoding/json with DisallowUnknownFields, then one value and nothing
// after it) rejects, or return a graph that differs from the one the
// reference returns. So it understands a strict subset of what
// encoding/json accepts, and returns ok=false on anything else, valid or
// not: a member name that is not exactly a field's (encoding/json also
// matches names case-insensitively and unescapes them), a member or map key
// given twice (encoding/json merges or overwrites), a value of the wrong
// JSON type, a number that does not fit its field, nesting deeper than
// fastMaxDepth, malformed JSON, data after the graph. Decode then runs the
// reference decode, which returns the same graph or the error users see,
// word for word. The result of decodeFast is in normal form and interned,
// but not validated: Decode validates it.
//
// The decoder of each struct of the IR is generated from its fields
// (ir_gen.go, see the package doc); this file holds the scanner, the
// decoders of the field types (strings, numbers, literal JSON, types, named
// values) and the parallel decode of the steps. The fast decoder must never
// fill a field that encoding/json would not.

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// fastMaxDepth bounds the nesting of arrays and objects the fast decoder
// follows (encoding/json allows 10,000 levels; a stored graph needs a few
// dozen).
const fastMaxDepth = 512

// fastFail is the panic value by which the fast decoder gives up; decodeFast
// recovers it and only it (and fastRetry).
type fastFail struct{}

// fastRetry is the panic value by which the fast decoder gives up on the
// parallel decode of the steps, once every goroutine it started has ended.
type fastRetry struct{}

type fastDecoder struct {
	b     []byte
	i     int
	depth int
	in    *typeInterner
	// inMu guards in while the steps are decoded on several goroutines
	// (nil until then).
	inMu *sync.Mutex
	// split says whether and how to decode the steps in parallel.
	split fastSplit
	// types maps the text of a type to its shared tree, so that a type
	// repeated thousands of times is parsed once.
	types map[string]*Type
	// keys holds the distinct object keys of values and types, shared.
	keys map[string]string
	buf  []byte // scratch for unescaping
	// The strings of a step are made in one allocation: strTo and strings
	// append their bytes to sbuf and note where each goes (spend);
	// flushStrings makes one string of sbuf and hands out its parts. spans
	// holds the places in sbuf of list elements being read.
	sbuf  []byte
	spend []fastPending
	spans []fastSpan
	// rawFree is the rest of a block that literal JSON is copied into.
	rawFree []byte
	// norm puts each node in normal form as it is read.
	norm encNormalizer
	// pool holds the blocks and stacks the decoded structs and lists are
	// made from.
	pool fastPools
}

// fastPools are the blocks a decoder makes the structs and lists of a
// graph from (the types marked slab and stack in ir_gen.go).
type fastPools struct {
	// Stacks of list elements being read, copied into a list of the exact
	// length at the list's end.
	templatePartStack []TemplatePart
	valueStack        []*Value
	// The structs a graph has many of, allocated in blocks.
	stepSlab      fastSlab[Step]
	exprSlab      fastSlab[Expr]
	valueSlab     fastSlab[Value]
	templateSlab  fastSlab[Template]
	setActionSlab fastSlab[SetAction]
	// Lists of strings, template parts and values, cut from blocks.
	strLists          fastLists[string]
	templatePartLists fastLists[TemplatePart]
	valueLists        fastLists[*Value]
}

// fastSpan is the place of a string in fastDecoder.sbuf.
type fastSpan struct{ off, end int }

// fastPending is a string field to be set from fastDecoder.sbuf.
type fastPending struct {
	p *string
	fastSpan
}

// fastLists hands out lists of exact length (and capacity) cut from
// blocks, growing from 8 to 256 elements a block, as fastSlab does
// structs. A list longer than a block gets its own allocation.
type fastLists[T any] struct {
	free []T
	next int
}

func (l *fastLists[T]) make(n int) []T {
	if n == 0 {
		return make([]T, 0) // empty and non-nil, as one pass makes it
	}
	if n > len(l.free) {
		l.next = min(max(2*l.next, 8), 256)
		if n > l.next/2 {
			return make([]T, n)
		}
		l.free = make([]T, l.next)
	}
	list := l.free[:n:n]
	l.free = l.free[n:]
	return list
}

// fastSlab hands out structs of one type from blocks, growing from 8 to
// 256 structs a block (fewer for a large struct: fastSlabBytes): a long
// graph makes a few allocations where it made thousands, a small one
// wastes little. The graph keeps them all alive together, as it does
// anyway.
type fastSlab[T any] struct {
	free []T
	next int
}

// fastSlabBytes bounds a slab's block: a block above 32 KiB is allocated in
// whole 8 KiB pages, and 256 steps (264 bytes each) took nine pages for
// 8.25 pages of steps, a twelfth of a long graph's steps wasted.
const fastSlabBytes = 64 << 10

func (s *fastSlab[T]) new() *T {
	if len(s.free) == 0 {
		var zero T
		most := max(8, min(256, fastSlabBytes/max(int(unsafe.Sizeof(zero)), 1)))
		s.next = min(max(2*s.next, 8), most)
		s.free = make([]T, s.next)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// reserve makes the next n structs come from one block of n, unless as
// many are free: a decoder that knows how many it will take leaves no
// block's tail unused.
func (s *fastSlab[T]) reserve(n int) {
	if n > len(s.free) {
		s.free = make([]T, n)
	}
}

// decodeFast decodes a stored graph in normal form, its types and mode
// strings shared through in. It returns false when the record is not
// exactly of the form it understands (see the top of this file); the
// caller then decodes it with encoding/json. A long graph's steps are
// decoded on all the processors (fastDecoder.stepsParallel).
func decodeFast(b []byte, in *typeInterner) (g *Graph, ok bool) {
	return decodeFastSplit(b, in, defaultFastSplit())
}

// decodeFastSplit is decodeFast with the parallel decode of the steps
// configured by sp (tests force it on small graphs).
func decodeFastSplit(b []byte, in *typeInterner, sp fastSplit) (*Graph, bool) {
	g, ok := decodeFastUnordered(b, in, sp)
	if ok {
		fastStepOrder(g)
	}
	return g, ok
}

// decodeFastUnordered is decodeFastSplit but for the order of the steps,
// which fastStepOrder puts in normal form.
func decodeFastUnordered(b []byte, in *typeInterner, sp fastSplit) (*Graph, bool) {
	g, ok, retry := decodeFastOnce(b, in, sp)
	if retry {
		// A chunk of the steps failed: the record is malformed, or a cut
		// was not between two steps. Decoding it in one pass tells which.
		g, ok, _ = decodeFastOnce(b, in, fastSplit{})
	}
	return g, ok
}

// fastStepOrder puts the steps of a graph decoded by decodeFastUnordered in
// the canonical order, unless they are in it (the stored order).
func fastStepOrder(g *Graph) {
	if !fastCanonicalOrder(g.Steps) {
		(&encNormalizer{fix: true, normal: true, stepsDone: true}).stepOrder(g)
	}
}

// decodeFastOnce decodes b in one attempt. retry reports that the parallel
// decode of the steps failed, so that the record is to be decoded again in
// one pass before the caller is told it was not taken.
func decodeFastOnce(b []byte, in *typeInterner, sp fastSplit) (g *Graph, ok, retry bool) {
	d := newFastDecoder(b, in)
	d.split = sp
	defer func() {
		if r := recover(); r != nil {
			switch r.(type) {
			case fastFail:
				g, ok = nil, false
			case fastRetry:
				g, ok, retry = nil, false, true
			default:
				panic(r)
			}
		}
	}()
	g = &Graph{}
	d.graph(g)
	d.ws()
	if d.i != len(d.b) {
		d.fail()
	}
	d.flushStrings()
	// Every struct is put in normal form as it is decoded, and every type
	// and mode string is shared (typ, mode): the caller checks the steps'
	// order.
	return g, true, false
}

func newFastDecoder(b []byte, in *typeInterner) *fastDecoder {
	return &fastDecoder{b: b, in: in, types: map[string]*Type{}, keys: map[string]string{}, norm: encNormalizer{fix: true, normal: true}}
}

func (d *fastDecoder) fail() { panic(fastFail{}) }

// ws skips white space.
func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, without consuming it.
func (d *fastDecoder) peek() byte {
	d.ws()
	if d.i >= len(d.b) {
		d.fail()
	}
	return d.b[d.i]
}

// null consumes a null literal if one is next.
func (d *fastDecoder) null() bool {
	if d.peek() != 'n' {
		return false
	}
	if d.i+4 > len(d.b) || string(d.b[d.i:d.i+4]) != "null" {
		d.fail()
	}
	d.i += 4
	return true
}

// open consumes the opening delimiter c ('{' or '[').
func (d *fastDecoder) open(c byte) {
	if d.peek() != c {
		d.fail()
	}
	d.i++
	d.depth++
	if d.depth > fastMaxDepth {
		d.fail()
	}
}

// more reports whether another member or element follows in the object or
// array whose closing delimiter is end, consuming the separating comma or
// the closing delimiter. first is set on the first call.
func (d *fastDecoder) more(first *bool, end byte) bool {
	c := d.peek()
	if *first {
		*first = false
		if c == end {
			d.i++
			d.depth--
			return false
		}
		return true
	}
	d.i++
	switch c {
	case ',':
		return true
	case end:
		d.depth--
		return false
	}
	d.fail()
	return false
}

// key reads a member name and its colon. Only plain ASCII names are taken
// as they are: one with an escape or another byte goes the slow way.
func (d *fastDecoder) key() []byte {
	if d.peek() != '"' {
		d.fail()
	}
	d.i++
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			k := d.b[start:d.i]
			d.i++
			if d.peek() != ':' {
				d.fail()
			}
			d.i++
			return k
		}
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			d.fail()
		}
		d.i++
	}
	d.fail()
	return nil
}

// seen marks member bit of an object as read, failing on a repeat.
func (d *fastDecoder) seen(set *uint32, bit uint32) {
	if *set&bit != 0 {
		d.fail()
	}
	*set |= bit
}

// strBytes reads a string (or null, as nil) and returns its decoded bytes:
// a slice of the input when it has no escapes and is plain ASCII, else of
// the scratch buffer. The result is valid until the next call.
func (d *fastDecoder) strBytes() (s []byte, null bool) {
	if d.null() {
		return nil, true
	}
	if d.b[d.i] != '"' {
		d.fail()
	}
	d.i++
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			d.i++
			return d.b[start : d.i-1], false
		}
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			return d.unquoteSlow(start), false
		}
		d.i++
	}
	d.fail()
	return nil, false
}

// unquoteSlow decodes the rest of a string whose plain part starts at start
// and ends at d.i, the way encoding/json does: escapes, UTF-16 surrogate
// pairs, and U+FFFD for a lone surrogate or a byte that is not UTF-8.
func (d *fastDecoder) unquoteSlow(start int) []byte {
	out := append(d.buf[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			d.buf = out
			return out
		case c < 0x20:
			d.fail()
		case c == '\\':
			if d.i+1 >= len(d.b) {
				d.fail()
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rr := d.hex4(d.i)
				if rr < 0 {
					d.fail()
				}
				d.i += 4
				if utf16.IsSurrogate(rr) {
					if d.i+6 <= len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
						if rr1 := d.hex4(d.i + 2); rr1 >= 0 {
							if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
								d.i += 6
								out = utf8.AppendRune(out, dec)
								continue
							}
						}
					}
					rr = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, rr)
			default:
				d.fail()
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			d.i += size
			out = utf8.AppendRune(out, r)
		}
	}
	d.fail()
	return nil
}

// hex4 returns the value of the four hex digits at i, or -1.
func (d *fastDecoder) hex4(i int) rune {
	if i+4 > len(d.b) {
		return -1
	}
	var r rune
	for _, c := range d.b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// str reads a string field (null leaves it empty, as encoding/json leaves
// the zero value).
func (d *fastDecoder) str() string {
	s, _ := d.strBytes()
	if len(s) == 0 {
		return ""
	}
	return string(s)
}

// strTo reads a string field into *p (null leaves it empty) when the
// decoder next calls flushStrings: until then *p must not be read.
func (d *fastDecoder) strTo(p *string) {
	s, _ := d.strBytes()
	if len(s) == 0 {
		*p = ""
		return
	}
	d.spend = append(d.spend, fastPending{p, d.span(s)})
}

// span appends s to sbuf and returns its place there.
func (d *fastDecoder) span(s []byte) fastSpan {
	off := len(d.sbuf)
	d.sbuf = append(d.sbuf, s...)
	return fastSpan{off, len(d.sbuf)}
}

// pend notes that *p is to be set to the string at sp.
func (d *fastDecoder) pend(p *string, sp fastSpan) {
	if sp.end > sp.off {
		d.spend = append(d.spend, fastPending{p, sp})
	}
}

// flushStrings sets the fields strTo and strings noted, from one new
// string.
func (d *fastDecoder) flushStrings() {
	if len(d.spend) == 0 {
		return
	}
	all := string(d.sbuf)
	for _, p := range d.spend {
		*p.p = all[p.off:p.end]
	}
	clear(d.spend)
	d.spend = d.spend[:0]
	d.sbuf = d.sbuf[:0]
}

// names puts a set of names read by strings in normal form (encNormalizer.names),
// flushing the strings first when there are two to compare.
func (d *fastDecoder) names(p *[]string, keep bool) {
	if len(*p) > 1 {
		d.flushStrings()
	}
	d.norm.names(p, keep)
}

// mode reads a mode or kind string, shared as modeString shares it (the
// lookup of string(s) does not allocate).
func (d *fastDecoder) mode() string {
	s, _ := d.strBytes()
	if m, ok := modeStrings[string(s)]; ok {
		return m
	}
	return string(s)
}

// mapKey reads an object key of a map field, shared with equal keys.
func (d *fastDecoder) mapKey() string {
	if d.peek() != '"' {
		d.fail()
	}
	s, _ := d.strBytes()
	k, ok := d.keys[string(s)]
	if !ok {
		k = string(s)
		d.keys[k] = k
	}
	if d.peek() != ':' {
		d.fail()
	}
	d.i++
	return k
}

// number returns the extent of a JSON number at the next position.
func (d *fastDecoder) number() []byte {
	d.ws()
	start := d.i
	b := d.b
	i := d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		d.fail()
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			d.fail()
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			d.fail()
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	d.i = i
	return b[start:i]
}

// int64 reads an integer field as encoding/json does (strconv.ParseInt of
// the number's text: no fraction, no exponent, no overflow); null leaves
// it 0.
func (d *fastDecoder) int64() int64 {
	if d.null() {
		return 0
	}
	n := d.number()
	neg := n[0] == '-'
	if neg {
		n = n[1:]
	}
	var v uint64
	for _, c := range n {
		if c < '0' || c > '9' {
			d.fail() // a fraction or exponent: encoding/json refuses it
		}
		if v > (1<<63)/10 {
			d.fail()
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			d.fail()
		}
		return -int64(v)
	}
	if v > 1<<63-1 {
		d.fail()
	}
	return int64(v)
}

// int reads an int field (int is 64 bits wide where flowrun runs; a value
// that does not fit a narrower int goes the slow way).
func (d *fastDecoder) int() int {
	v := d.int64()
	if int64(int(v)) != v {
		d.fail()
	}
	return int(v)
}

// float64 reads a float field as encoding/json does (strconv.ParseFloat,
// failing out of range).
func (d *fastDecoder) float64() float64 {
	if d.null() {
		return 0
	}
	f, err := strconv.ParseFloat(string(d.number()), 64)
	if err != nil {
		d.fail()
	}
	return f
}

// bool reads a bool field (null leaves it false).
func (d *fastDecoder) bool() bool {
	switch d.peek() {
	case 't':
		if d.i+4 <= len(d.b) && string(d.b[d.i:d.i+4]) == "true" {
			d.i += 4
			return true
		}
	case 'f':
		if d.i+5 <= len(d.b) && string(d.b[d.i:d.i+5]) == "false" {
			d.i += 5
			return false
		}
	case 'n':
		d.null()
		return false
	}
	d.fail()
	return false
}

// skip consumes one JSON value, checking that it is well formed, and
// returns its text.
func (d *fastDecoder) skip() []byte {
	c := d.peek()
	start := d.i
	switch c {
	case '{':
		d.open('{')
		first := true
		for d.more(&first, '}') {
			if d.peek() != '"' {
				d.fail()
			}
			d.strBytes()
			if d.peek() != ':' {
				d.fail()
			}
			d.i++
			d.skip()
		}
	case '[':
		d.open('[')
		first := true
		for d.more(&first, ']') {
			d.skip()
		}
	case '"':
		d.strBytes()
	case 't':
		d.bool()
	case 'f':
		d.bool()
	case 'n':
		d.null()
	default:
		d.number()
	}
	return d.b[start:d.i]
}

// raw reads a literal JSON field: a copy of the value's text, as
// json.RawMessage holds it (null is the text null). The copies are cut
// from blocks, their capacity their length, so that appending to one
// cannot write another.
func (d *fastDecoder) raw() json.RawMessage {
	t := d.skip()
	if len(t) > len(d.rawFree) {
		if len(t) > fastRawBlock/4 {
			return append(json.RawMessage(nil), t...)
		}
		d.rawFree = make([]byte, fastRawBlock)
	}
	n := copy(d.rawFree, t)
	r := d.rawFree[:n:n]
	d.rawFree = d.rawFree[n:]
	return r
}

// fastRawBlock is the size of a block of literal JSON.
const fastRawBlock = 4096

// strings reads a list of strings (null: nil; a null element: ""), whose
// elements are set by the next flushStrings.
func (d *fastDecoder) strings() []string {
	if d.null() {
		return nil
	}
	d.open('[')
	base := len(d.spans)
	first := true
	for d.more(&first, ']') {
		s, _ := d.strBytes()
		d.spans = append(d.spans, d.span(s))
	}
	list := d.pool.strLists.make(len(d.spans) - base)
	for i, sp := range d.spans[base:] {
		d.pend(&list[i], sp)
	}
	d.spans = d.spans[:base]
	return list
}

func (d *fastDecoder) steps() []*Step {
	if d.null() {
		return nil
	}
	d.open('[')
	if list, ok := d.stepsParallel(); ok {
		return list
	}
	list := []*Step{}
	first := true
	for d.more(&first, ']') {
		list = append(list, d.step())
	}
	return list
}

// ints reads a list of ints (null: nil; a null element: 0).
func (d *fastDecoder) ints() []int {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []int{}
	first := true
	for d.more(&first, ']') {
		list = append(list, d.int())
	}
	return list
}

// namedValues reads an object of values in name order (null: nil; a
// repeated name or names out of order go the slow way).
func (d *fastDecoder) namedValues() NamedValues {
	if d.null() {
		return nil
	}
	d.open('{')
	var nv NamedValues
	first := true
	for d.more(&first, '}') {
		k := d.mapKey()
		if len(nv) > 0 && nv[len(nv)-1].Name >= k {
			d.fail()
		}
		nv = append(nv, NamedValue{Name: k, Value: d.value()})
	}
	if nv == nil {
		nv = NamedValues{}
	}
	return nv
}

// typ reads a type and returns its shared tree. The text of each distinct
// type is parsed once: a repeat is checked to be well-formed JSON and
// looked up by its text.
func (d *fastDecoder) typ() *Type {
	if d.null() {
		return nil
	}
	start := d.i
	// A text equal to one parsed before is that complete, valid type: its
	// end is found by matching braces, without checking it again.
	if end := d.matchBrace(start); end > 0 {
		if t, ok := d.types[string(d.b[start:end])]; ok {
			d.i = end
			return t
		}
	}
	t := d.parseType()
	// Normal form (no empty field map), then shared.
	(&encNormalizer{fix: true}).typ(t)
	if d.inMu != nil {
		d.inMu.Lock()
		t = d.in.intern(t)
		d.inMu.Unlock()
	} else {
		t = d.in.intern(t)
	}
	d.types[string(d.b[start:d.i])] = t
	return t
}

// matchBrace returns the end of the object starting at i by counting
// braces outside strings, or -1. It does not check the text: only a text
// that equals a type parsed before may be taken on its word.
func (d *fastDecoder) matchBrace(i int) int {
	b := d.b
	if b[i] != '{' {
		return -1
	}
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

// fastCanonicalOrder reports whether steps, with sorted needs and unique
// names, are in the canonical order of encTopoOrder (Kahn's algorithm
// taking the smallest ready name first). False means "not known to be":
// the caller then runs encNormalizer.stepOrder.
func fastCanonicalOrder(steps []*Step) bool {
	idx := make(map[string]int32, len(steps))
	for i, s := range steps {
		if s == nil {
			return false
		}
		if _, dup := idx[s.Name]; dup {
			return false
		}
		idx[s.Name] = int32(i)
	}
	// waiting[i]: needs of step i not yet taken; users in CSR form.
	waiting := make([]int32, len(steps))
	start := make([]int32, len(steps)+1)
	total := 0
	for i, s := range steps {
		for j, need := range s.Needs {
			if j > 0 && s.Needs[j-1] >= need {
				return false // not sorted and unique
			}
			k, ok := idx[need]
			if !ok {
				return false
			}
			start[k+1]++
		}
		waiting[i] = int32(len(s.Needs))
		total += len(s.Needs)
	}
	for i := range steps {
		start[i+1] += start[i]
	}
	users := make([]int32, total)
	fill := slices.Clone(start[:len(steps)])
	for i, s := range steps {
		for _, need := range s.Needs {
			k := idx[need]
			users[fill[k]] = int32(i)
			fill[k]++
		}
	}
	less := func(a, b int32) bool { return steps[a].Name < steps[b].Name }
	var ready []int32 // a binary min-heap by name
	push := func(x int32) {
		ready = append(ready, x)
		for c := len(ready) - 1; c > 0; {
			p := (c - 1) / 2
			if !less(ready[c], ready[p]) {
				break
			}
			ready[c], ready[p] = ready[p], ready[c]
			c = p
		}
	}
	pop := func() int32 {
		x := ready[0]
		last := len(ready) - 1
		ready[0] = ready[last]
		ready = ready[:last]
		for p := 0; ; {
			c := 2*p + 1
			if c >= last {
				break
			}
			if c+1 < last && less(ready[c+1], ready[c]) {
				c++
			}
			if !less(ready[c], ready[p]) {
				break
			}
			ready[c], ready[p] = ready[p], ready[c]
			p = c
		}
		return x
	}
	for i := range steps {
		if waiting[i] == 0 {
			push(int32(i))
		}
	}
	pos := int32(0)
	for len(ready) > 0 {
		x := pop()
		if x != pos {
			return false
		}
		pos++
		for _, u := range users[start[x]:start[x+1]] {
			waiting[u]--
			if waiting[u] == 0 {
				push(u)
			}
		}
	}
	return int(pos) == len(steps)
}

func (d *fastDecoder) parseType() *Type {
	if d.null() {
		return nil
	}
	t := &Type{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "kind":
			d.seen(&set, 1<<0)
			t.Kind = TypeKind(d.str())
		case "elem":
			d.seen(&set, 1<<1)
			t.Elem = d.parseType()
		case "fields":
			d.seen(&set, 1<<2)
			if d.null() {
				t.Fields = nil
				continue
			}
			d.open('{')
			t.Fields = map[string]*Type{}
			first := true
			for d.more(&first, '}') {
				k := d.mapKey()
				if _, dup := t.Fields[k]; dup {
					d.fail()
				}
				t.Fields[k] = d.parseType()
			}
		default:
			d.fail()
		}
	}
	return t
}

// Decoding the steps of a long graph in parallel.
//
// The steps are most of a stored graph, and each is decoded on its own: a
// long list is cut into contiguous chunks, decoded at once by up to
// GOMAXPROCS goroutines, each with its own decoder (scratch, slabs, caches
// of type texts and keys), and the chunks' steps are put together in
// order. What the graph shares is shared all the same: the goroutines
// intern types in the one typeInterner, under a lock taken only for a type
// text a decoder meets for the first time (a few per chunk), and the mode
// strings are the package's constants. Which of equal trees becomes the
// shared one may differ from run to run; every equal type is the one
// shared tree either way, so the graph is the same.
//
// The cuts are found without scanning the steps: from each target offset,
// the next `},{"name":"...","hash":` (how every step but the first begins
// in the canonical encoding). Such text may also stand inside a literal,
// so a cut is only a guess, which the decode proves: the first chunk
// starts right after the list's '[', and each chunk must decode as whole
// steps separated by commas ending exactly at the comma of the next cut
// (its decoder does not see the bytes past that comma, so a step cut in
// two fails). By induction every cut then lies between two steps, and the
// chunks decode exactly what one pass decodes. If any chunk fails, the
// whole record is decoded again in one pass (decodeFastSplit): a cut in
// the wrong place costs time, never a different result, and a malformed
// step fails there too and goes to the reference decode.

// fastSplit configures the parallel decode of the steps.
type fastSplit struct {
	// workers is the number of goroutines decoding steps, the caller's
	// included; below 2 the steps are decoded in one pass.
	Workers int
	// minBytes is the least size of the record from the steps on for which
	// the steps are split.
	MinBytes int
	// chunkBytes is the least size of a chunk.
	ChunkBytes int
	// orderSteps is the number of steps from which Decode checks their
	// order while it validates the graph (decodeCheck).
	orderSteps int
}

// fastSplitBytes is the size of the steps from which Decode splits them
// (128 KiB: some 250 steps of a compiled chain, from about half a
// millisecond of decoding), and fastChunkBytes the least size of a chunk.
const (
	fastSplitBytes = 128 << 10
	fastChunkBytes = 32 << 10
)

func defaultFastSplit() fastSplit {
	return fastSplit{Workers: runtime.GOMAXPROCS(0), MinBytes: fastSplitBytes, ChunkBytes: fastChunkBytes, orderSteps: 256}
}

// fastChunk is a run of steps decoded by one goroutine.
type fastChunk struct {
	start int // just after the '[' of the list or the comma before
	// end is the position of the comma after the chunk's last step, or -1
	// for the last chunk, which ends with the list's ']'.
	end   int
	steps []*Step
	next  int // the last chunk: the position after the ']'
	ok    bool
	bug   any // a panic other than fastFail, raised again by the caller
}

// stepStart is how a step after the first begins in the canonical encoding.
var fastStepStart = []byte(`},{"name":"`)

// stepsParallel decodes the elements of the steps list, d.i just after its
// '[', on several goroutines. It returns false, having consumed nothing,
// when the list is not worth splitting or no cut was found; it panics with
// fastRetry when a chunk fails.
func (d *fastDecoder) stepsParallel() ([]*Step, bool) {
	sp := d.split
	start := d.i
	size := len(d.b) - start
	if sp.Workers < 2 || size < sp.MinBytes {
		return nil, false
	}
	n := min(4*sp.Workers, size/max(sp.ChunkBytes, 1))
	cuts := fastCuts(d.b, start, n)
	if len(cuts) == 0 {
		return nil, false
	}
	chunks := make([]fastChunk, len(cuts)+1)
	for k := range chunks {
		c := &chunks[k]
		c.start, c.end = start, -1
		if k > 0 {
			c.start = cuts[k-1] + 1
		}
		if k < len(cuts) {
			c.end = cuts[k]
		}
	}
	if d.inMu == nil {
		d.inMu = &sync.Mutex{}
	}
	// The goroutines take chunks in order until none is left; each ends
	// before stepsParallel returns.
	var taken atomic.Int32
	work := func() {
		for {
			k := int(taken.Add(1)) - 1
			if k >= len(chunks) {
				return
			}
			d.chunk(&chunks[k])
		}
	}
	var wg sync.WaitGroup
	for range min(sp.Workers, len(chunks)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	total := 0
	for k := range chunks {
		if chunks[k].bug != nil {
			panic(chunks[k].bug)
		}
	}
	for k := range chunks {
		if !chunks[k].ok {
			panic(fastRetry{})
		}
		total += len(chunks[k].steps)
	}
	list := make([]*Step, 0, total)
	for k := range chunks {
		list = append(list, chunks[k].steps...)
	}
	d.i = chunks[len(chunks)-1].next
	d.depth--
	return list, true
}

// chunk decodes the steps of c with a decoder of its own, recovering its
// failure.
func (d *fastDecoder) chunk(c *fastChunk) {
	b := d.b
	if c.end >= 0 {
		b = b[:c.end]
	}
	cd := newFastDecoder(b, d.in)
	cd.inMu = d.inMu
	cd.i = c.start
	cd.depth = d.depth
	// Every step of the chunk but the first starts as a cut does: their
	// count (a few more when a later field of the last chunk looks the
	// same) sizes the chunk's block of steps and its list. A chunk's
	// steps are a twelfth of a long graph's memory, and grown in doubling
	// blocks each chunk left half a block unused.
	steps := bytes.Count(b[c.start:], fastStepStart) + 1
	cd.pool.stepSlab.reserve(steps)
	defer func() {
		if r := recover(); r != nil {
			if _, mine := r.(fastFail); !mine {
				c.bug = r
			}
			c.steps, c.ok = nil, false
		}
	}()
	list := make([]*Step, 0, steps)
	for {
		list = append(list, cd.step())
		if c.end >= 0 {
			// A chunk ends exactly at the comma of the next cut, the end
			// of the bytes its decoder sees.
			cd.ws()
			if cd.i == len(cd.b) {
				break
			}
			if cd.b[cd.i] != ',' {
				cd.fail()
			}
			cd.i++
			continue
		}
		ch := cd.peek()
		cd.i++
		if ch == ']' {
			c.next = cd.i
			break
		}
		if ch != ',' {
			cd.fail()
		}
	}
	c.steps, c.ok = list, true
}

// fastCuts returns up to n-1 positions of commas that likely separate two
// steps, in increasing order, found after start at about equal distances.
func fastCuts(b []byte, start, n int) []int {
	var cuts []int
	from := start
	for k := 1; k < n; k++ {
		t := max(start+int(int64(len(b)-start)*int64(k)/int64(n)), from)
		for {
			j := bytes.Index(b[t:], fastStepStart)
			if j < 0 {
				return cuts
			}
			comma := t + j + 1
			t = comma + 1
			if fastHashNext(b, t+len(fastStepStart)-2) {
				cuts = append(cuts, comma)
				from = t
				break
			}
		}
	}
	return cuts
}

// fastHashNext reports whether the string at i (after its opening quote)
// is followed by `,"hash":`, as a step's name is.
func fastHashNext(b []byte, i int) bool {
	for ; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return bytes.HasPrefix(b[i+1:], []byte(`,"hash":`))
		}
	}
	return false
}
