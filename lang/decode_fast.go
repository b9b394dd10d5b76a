package lang

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
// When changing a struct of the IR, change its decoder here too: a field
// the fast decoder does not know makes every graph that uses it take the
// slow path (the equivalence tests in decode_fast_test.go fail), and the
// fast decoder must never fill a field that encoding/json would not.

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// fastMaxDepth bounds the nesting of arrays and objects the fast decoder
// follows (encoding/json allows 10,000 levels; a stored graph needs a few
// dozen).
const fastMaxDepth = 512

// fastFail is the panic value by which the fast decoder gives up; decodeFast
// recovers it and only it.
type fastFail struct{}

type fastDecoder struct {
	b     []byte
	i     int
	depth int
	in    *typeInterner
	// types maps the text of a type to its shared tree, so that a type
	// repeated thousands of times is parsed once.
	types map[string]*Type
	// keys holds the distinct object keys of values and types, shared.
	keys map[string]string
	buf  []byte // scratch for unescaping
	// norm puts each node in normal form as it is read.
	norm encNormalizer
	// Stacks of list elements being read, copied into a list of the exact
	// length at the list's end.
	strStack   []string
	partStack  []TemplatePart
	valueStack []*Value
	// The structs a graph has many of, allocated in blocks.
	stepSlab     fastSlab[Step]
	exprSlab     fastSlab[Expr]
	valueSlab    fastSlab[Value]
	templateSlab fastSlab[Template]
	setSlab      fastSlab[SetAction]
}

// fastSlab hands out structs of one type from blocks, growing from 8 to
// 256 structs a block: a long graph makes a few allocations where it made
// thousands, a small one wastes little. The graph keeps them all alive
// together, as it does anyway.
type fastSlab[T any] struct {
	free []T
	next int
}

func (s *fastSlab[T]) new() *T {
	if len(s.free) == 0 {
		s.next = min(max(2*s.next, 8), 256)
		s.free = make([]T, s.next)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// decodeFast decodes a stored graph in normal form, its types and mode
// strings shared through in. It returns false when the record is not
// exactly of the form it understands (see the top of this file); the
// caller then decodes it with encoding/json.
func decodeFast(b []byte, in *typeInterner) (g *Graph, ok bool) {
	d := &fastDecoder{b: b, in: in, types: map[string]*Type{}, keys: map[string]string{}, norm: encNormalizer{fix: true, normal: true}}
	defer func() {
		if r := recover(); r != nil {
			if _, mine := r.(fastFail); !mine {
				panic(r)
			}
			g, ok = nil, false
		}
	}()
	g = &Graph{}
	d.graph(g)
	d.ws()
	if d.i != len(d.b) {
		d.fail()
	}
	// The steps are in normal form and interned already (step), and every
	// type and mode string is shared (typ, mode): the rest of the graph is
	// normalised here, and the steps' order checked.
	n := &encNormalizer{fix: true, normal: true, stepsDone: true}
	n.graph(g)
	if !fastCanonicalOrder(g.Steps) {
		n.stepOrder(g)
	}
	return g, true
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

// mode reads a mode or kind string, shared as modeString shares it.
func (d *fastDecoder) mode() string {
	s, _ := d.strBytes()
	switch string(s) {
	case "":
		return ""
	case "all":
		return "all"
	case "any":
		return "any"
	case "continue":
		return "continue"
	case "dead_letter":
		return "dead_letter"
	case KindSet:
		return KindSet
	case KindExec:
		return KindExec
	case KindHTTP:
		return KindHTTP
	case KindSleep:
		return KindSleep
	case KindWait:
		return KindWait
	case KindWorkflow:
		return KindWorkflow
	case KindSwitch:
		return KindSwitch
	case KindFail:
		return KindFail
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
// json.RawMessage holds it (null is the text null).
func (d *fastDecoder) raw() json.RawMessage {
	t := d.skip()
	return append(json.RawMessage(nil), t...)
}

// strings reads a list of strings (null: nil; a null element: "").
func (d *fastDecoder) strings() []string {
	if d.null() {
		return nil
	}
	d.open('[')
	base := len(d.strStack)
	first := true
	for d.more(&first, ']') {
		d.strStack = append(d.strStack, d.str())
	}
	list := make([]string, len(d.strStack)-base)
	copy(list, d.strStack[base:])
	clear(d.strStack[base:])
	d.strStack = d.strStack[:base]
	return list
}

func (d *fastDecoder) graph(g *Graph) {
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "workflow":
			d.seen(&set, 1<<0)
			g.Workflow = d.str()
		case "version":
			d.seen(&set, 1<<1)
			g.Version = d.str()
		case "description":
			d.seen(&set, 1<<2)
			g.Description = d.str()
		case "inputs":
			d.seen(&set, 1<<3)
			g.Inputs = d.inputs()
		case "secrets":
			d.seen(&set, 1<<4)
			g.Secrets = d.secrets()
		case "key":
			d.seen(&set, 1<<5)
			g.Key = d.expr()
		case "deadline_ms":
			d.seen(&set, 1<<6)
			g.DeadlineMS = d.int64()
		case "concurrency":
			d.seen(&set, 1<<7)
			g.Concurrency = d.concurrency()
		case "breakers":
			d.seen(&set, 1<<8)
			g.Breakers = d.breakers()
		case "limits":
			d.seen(&set, 1<<9)
			d.limits(&g.Limits)
		case "steps":
			d.seen(&set, 1<<10)
			g.Steps = d.steps()
		case "outputs":
			d.seen(&set, 1<<11)
			g.Outputs = d.outputs()
		case "alerts":
			d.seen(&set, 1<<12)
			g.Alerts = d.alerts()
		default:
			d.fail()
		}
	}
}

func (d *fastDecoder) inputs() []Input {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []Input{}
	first := true
	for d.more(&first, ']') {
		var in Input
		if !d.null() {
			d.open('{')
			var set uint32
			first := true
			for d.more(&first, '}') {
				switch string(d.key()) {
				case "name":
					d.seen(&set, 1<<0)
					in.Name = d.str()
				case "type":
					d.seen(&set, 1<<1)
					in.Type = d.typ()
				case "default":
					d.seen(&set, 1<<2)
					in.Default = d.raw()
				default:
					d.fail()
				}
			}
		}
		list = append(list, in)
	}
	return list
}

func (d *fastDecoder) secrets() []Secret {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []Secret{}
	first := true
	for d.more(&first, ']') {
		var s Secret
		if !d.null() {
			d.open('{')
			var set uint32
			first := true
			for d.more(&first, '}') {
				switch string(d.key()) {
				case "name":
					d.seen(&set, 1<<0)
					s.Name = d.str()
				case "env":
					d.seen(&set, 1<<1)
					s.Env = d.str()
				default:
					d.fail()
				}
			}
		}
		list = append(list, s)
	}
	return list
}

func (d *fastDecoder) concurrency() *Concurrency {
	if d.null() {
		return nil
	}
	c := &Concurrency{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "key":
			d.seen(&set, 1<<0)
			c.Key = d.expr()
		case "limit":
			d.seen(&set, 1<<1)
			c.Limit = d.int()
		case "on_conflict":
			d.seen(&set, 1<<2)
			c.OnConflict = d.str()
		default:
			d.fail()
		}
	}
	return c
}

func (d *fastDecoder) breakers() []Breaker {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []Breaker{}
	first := true
	for d.more(&first, ']') {
		var b Breaker
		if !d.null() {
			d.open('{')
			var set uint32
			first := true
			for d.more(&first, '}') {
				switch string(d.key()) {
				case "name":
					d.seen(&set, 1<<0)
					b.Name = d.str()
				case "failures":
					d.seen(&set, 1<<1)
					b.Failures = d.int()
				case "cooldown_ms":
					d.seen(&set, 1<<2)
					b.CooldownMS = d.int64()
				case "on_open":
					d.seen(&set, 1<<3)
					b.OnOpen = d.str()
				default:
					d.fail()
				}
			}
		}
		list = append(list, b)
	}
	return list
}

func (d *fastDecoder) limits(l *Limits) {
	if d.null() {
		return
	}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "attempts":
			d.seen(&set, 1<<0)
			l.Attempts = d.int()
		case "output_bytes":
			d.seen(&set, 1<<1)
			l.OutputBytes = d.int64()
		case "parallel":
			d.seen(&set, 1<<2)
			l.Parallel = d.int()
		default:
			d.fail()
		}
	}
}

func (d *fastDecoder) steps() []*Step {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []*Step{}
	first := true
	for d.more(&first, ']') {
		list = append(list, d.step())
	}
	return list
}

func (d *fastDecoder) step() *Step {
	if d.null() {
		return nil
	}
	s := d.stepSlab.new()
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "name":
			d.seen(&set, 1<<0)
			s.Name = d.str()
		case "hash":
			d.seen(&set, 1<<1)
			s.Hash = d.str()
		case "needs":
			d.seen(&set, 1<<2)
			s.Needs = d.strings()
		case "depends_on":
			d.seen(&set, 1<<3)
			s.DependsOn = d.strings()
		case "join":
			d.seen(&set, 1<<4)
			s.Join = d.mode()
		case "when":
			d.seen(&set, 1<<5)
			s.When = d.expr()
		case "action":
			d.seen(&set, 1<<6)
			d.action(&s.Action)
		case "timeout_ms":
			d.seen(&set, 1<<7)
			s.TimeoutMS = d.int64()
		case "retry":
			d.seen(&set, 1<<8)
			s.Retry = d.retry()
		case "breaker":
			d.seen(&set, 1<<9)
			s.Breaker = d.str()
		case "foreach":
			d.seen(&set, 1<<10)
			s.Foreach = d.foreach()
		case "until":
			d.seen(&set, 1<<11)
			s.Until = d.until()
		case "on_error":
			d.seen(&set, 1<<12)
			s.OnError = d.mode()
		case "idempotency_key":
			d.seen(&set, 1<<13)
			s.IdempotencyKey = d.value()
		case "output_type":
			d.seen(&set, 1<<14)
			s.OutputType = d.typ()
		default:
			d.fail()
		}
	}
	// Normal form (encNormalizer.step; the values, actions and types are
	// normal already) and interned (typeInterner.step).
	d.norm.names(&s.Needs, false)
	d.norm.names(&s.DependsOn, false)
	if len(s.DependsOn) > 0 && slices.Equal(s.DependsOn, s.Needs) {
		s.DependsOn = s.Needs[:len(s.Needs):len(s.Needs)]
	}
	return s
}

func (d *fastDecoder) retry() *Retry {
	if d.null() {
		return nil
	}
	r := &Retry{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "attempts":
			d.seen(&set, 1<<0)
			r.Attempts = d.int()
		case "backoff_ms":
			d.seen(&set, 1<<1)
			r.BackoffMS = d.int64()
		case "multiplier":
			d.seen(&set, 1<<2)
			r.Multiplier = d.float64()
		case "max_delay_ms":
			d.seen(&set, 1<<3)
			r.MaxDelayMS = d.int64()
		case "jitter_ms":
			d.seen(&set, 1<<4)
			r.JitterMS = d.int64()
		case "when":
			d.seen(&set, 1<<5)
			r.When = d.expr()
		default:
			d.fail()
		}
	}
	return r
}

func (d *fastDecoder) foreach() *Foreach {
	if d.null() {
		return nil
	}
	f := &Foreach{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "items":
			d.seen(&set, 1<<0)
			f.Items = d.expr()
		case "concurrency":
			d.seen(&set, 1<<1)
			f.Concurrency = d.int()
		case "on_failure":
			d.seen(&set, 1<<2)
			f.OnFailure = d.mode()
		default:
			d.fail()
		}
	}
	return f
}

func (d *fastDecoder) until() *Until {
	if d.null() {
		return nil
	}
	u := &Until{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "cond":
			d.seen(&set, 1<<0)
			u.Cond = d.expr()
		case "interval_ms":
			d.seen(&set, 1<<1)
			u.IntervalMS = d.int64()
		case "max_iterations":
			d.seen(&set, 1<<2)
			u.MaxIterations = d.int()
		default:
			d.fail()
		}
	}
	return u
}

func (d *fastDecoder) action(a *Action) {
	if d.null() {
		return
	}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "kind":
			d.seen(&set, 1<<0)
			a.Kind = d.mode()
		case "exec":
			d.seen(&set, 1<<1)
			a.Exec = d.exec()
		case "http":
			d.seen(&set, 1<<2)
			a.HTTP = d.http()
		case "set":
			d.seen(&set, 1<<3)
			a.Set = d.set()
		case "sleep":
			d.seen(&set, 1<<4)
			a.Sleep = d.sleep()
		case "wait":
			d.seen(&set, 1<<5)
			a.Wait = d.wait()
		case "workflow":
			d.seen(&set, 1<<6)
			a.Workflow = d.workflow()
		case "fail":
			d.seen(&set, 1<<7)
			a.Fail = d.failAction()
		case "switch":
			d.seen(&set, 1<<8)
			a.Switch = d.switchAction()
		default:
			d.fail()
		}
	}
}

func (d *fastDecoder) exec() *ExecAction {
	if d.null() {
		return nil
	}
	e := &ExecAction{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "command":
			d.seen(&set, 1<<0)
			e.Command = d.value()
		case "shell":
			d.seen(&set, 1<<1)
			e.Shell = d.bool()
		case "dir":
			d.seen(&set, 1<<2)
			e.Dir = d.value()
		case "env":
			d.seen(&set, 1<<3)
			e.Env = d.value()
		case "stdin":
			d.seen(&set, 1<<4)
			e.Stdin = d.value()
		default:
			d.fail()
		}
	}
	return e
}

func (d *fastDecoder) http() *HTTPAction {
	if d.null() {
		return nil
	}
	h := &HTTPAction{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "method":
			d.seen(&set, 1<<0)
			h.Method = d.str()
		case "url":
			d.seen(&set, 1<<1)
			h.URL = d.value()
		case "headers":
			d.seen(&set, 1<<2)
			h.Headers = d.value()
		case "body":
			d.seen(&set, 1<<3)
			h.Body = d.value()
		case "expect":
			d.seen(&set, 1<<4)
			h.Expect = d.ints()
		default:
			d.fail()
		}
	}
	if len(h.Expect) == 0 {
		h.Expect = nil
	}
	return h
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

func (d *fastDecoder) set() *SetAction {
	if d.null() {
		return nil
	}
	s := d.setSlab.new()
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "values":
			d.seen(&set, 1<<0)
			s.Values = d.valueMap()
		default:
			d.fail()
		}
	}
	if s.Values == nil {
		s.Values = map[string]*Value{}
	}
	return s
}

func (d *fastDecoder) sleep() *SleepAction {
	if d.null() {
		return nil
	}
	s := &SleepAction{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "duration_ms":
			d.seen(&set, 1<<0)
			s.DurationMS = d.int64()
		case "until":
			d.seen(&set, 1<<1)
			s.Until = d.value()
		default:
			d.fail()
		}
	}
	return s
}

func (d *fastDecoder) wait() *WaitAction {
	if d.null() {
		return nil
	}
	w := &WaitAction{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "signal":
			d.seen(&set, 1<<0)
			w.Signal = d.str()
		case "timeout_ms":
			d.seen(&set, 1<<1)
			w.TimeoutMS = d.int64()
		default:
			d.fail()
		}
	}
	return w
}

func (d *fastDecoder) workflow() *WorkflowAction {
	if d.null() {
		return nil
	}
	w := &WorkflowAction{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "name":
			d.seen(&set, 1<<0)
			w.Name = d.str()
		case "version":
			d.seen(&set, 1<<1)
			w.Version = d.str()
		case "input":
			d.seen(&set, 1<<2)
			w.Input = d.value()
		default:
			d.fail()
		}
	}
	return w
}

func (d *fastDecoder) failAction() *FailAction {
	if d.null() {
		return nil
	}
	f := &FailAction{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "message":
			d.seen(&set, 1<<0)
			f.Message = d.value()
		default:
			d.fail()
		}
	}
	return f
}

func (d *fastDecoder) switchAction() *SwitchAction {
	if d.null() {
		return nil
	}
	sw := &SwitchAction{}
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "cases":
			d.seen(&set, 1<<0)
			sw.Cases = d.cases()
		case "default":
			d.seen(&set, 1<<1)
			sw.Default = d.strings()
		default:
			d.fail()
		}
	}
	if sw.Cases == nil {
		sw.Cases = []SwitchCase{}
	}
	for i := range sw.Cases {
		d.norm.names(&sw.Cases[i].Next, true)
	}
	d.norm.names(&sw.Default, false)
	return sw
}

func (d *fastDecoder) cases() []SwitchCase {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []SwitchCase{}
	first := true
	for d.more(&first, ']') {
		var c SwitchCase
		if !d.null() {
			d.open('{')
			var set uint32
			first := true
			for d.more(&first, '}') {
				switch string(d.key()) {
				case "when":
					d.seen(&set, 1<<0)
					c.When = d.expr()
				case "next":
					d.seen(&set, 1<<1)
					c.Next = d.strings()
				default:
					d.fail()
				}
			}
		}
		list = append(list, c)
	}
	return list
}

func (d *fastDecoder) outputs() []Output {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []Output{}
	first := true
	for d.more(&first, ']') {
		var o Output
		if !d.null() {
			d.open('{')
			var set uint32
			first := true
			for d.more(&first, '}') {
				switch string(d.key()) {
				case "name":
					d.seen(&set, 1<<0)
					o.Name = d.str()
				case "value":
					d.seen(&set, 1<<1)
					o.Value = d.value()
				case "type":
					d.seen(&set, 1<<2)
					o.Type = d.typ()
				default:
					d.fail()
				}
			}
		}
		list = append(list, o)
	}
	return list
}

func (d *fastDecoder) alerts() []Alert {
	if d.null() {
		return nil
	}
	d.open('[')
	list := []Alert{}
	first := true
	for d.more(&first, ']') {
		var a Alert
		if !d.null() {
			d.open('{')
			var set uint32
			first := true
			for d.more(&first, '}') {
				switch string(d.key()) {
				case "name":
					d.seen(&set, 1<<0)
					a.Name = d.str()
				case "on":
					d.seen(&set, 1<<1)
					a.On = d.strings()
				case "action":
					d.seen(&set, 1<<2)
					d.action(&a.Action)
				default:
					d.fail()
				}
			}
		}
		list = append(list, a)
	}
	return list
}

func (d *fastDecoder) expr() *Expr {
	if d.null() {
		return nil
	}
	e := d.exprSlab.new()
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "cel":
			d.seen(&set, 1<<0)
			e.CEL = d.str()
		case "type":
			d.seen(&set, 1<<1)
			e.Type = d.typ()
		default:
			d.fail()
		}
	}
	return e
}

func (d *fastDecoder) value() *Value {
	if d.null() {
		return nil
	}
	v := d.valueSlab.new()
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "lit":
			d.seen(&set, 1<<0)
			v.Lit = d.raw()
		case "template":
			d.seen(&set, 1<<1)
			v.Template = d.template()
		case "list":
			d.seen(&set, 1<<2)
			v.List = d.values()
		case "object":
			d.seen(&set, 1<<3)
			v.Object = d.valueMap()
		case "type":
			d.seen(&set, 1<<4)
			v.Type = d.typ()
		default:
			d.fail()
		}
	}
	// Normal form (encNormalizer.value; the elements are normal already).
	d.norm.raw(&v.Lit)
	if v.Template != nil && v.Template.Parts == nil {
		v.Template.Parts = []TemplatePart{}
	}
	if len(v.List) == 0 {
		v.List = nil
	}
	if len(v.Object) == 0 {
		v.Object = nil
	}
	return v
}

func (d *fastDecoder) values() []*Value {
	if d.null() {
		return nil
	}
	d.open('[')
	base := len(d.valueStack)
	first := true
	for d.more(&first, ']') {
		v := d.value()
		d.valueStack = append(d.valueStack, v)
	}
	list := make([]*Value, len(d.valueStack)-base)
	copy(list, d.valueStack[base:])
	clear(d.valueStack[base:])
	d.valueStack = d.valueStack[:base]
	return list
}

// valueMap reads an object of values (null: nil; a repeated key goes the
// slow way).
func (d *fastDecoder) valueMap() map[string]*Value {
	if d.null() {
		return nil
	}
	d.open('{')
	m := map[string]*Value{}
	first := true
	for d.more(&first, '}') {
		k := d.mapKey()
		if _, dup := m[k]; dup {
			d.fail()
		}
		m[k] = d.value()
	}
	return m
}

func (d *fastDecoder) template() *Template {
	if d.null() {
		return nil
	}
	t := d.templateSlab.new()
	d.open('{')
	var set uint32
	first := true
	for d.more(&first, '}') {
		switch string(d.key()) {
		case "parts":
			d.seen(&set, 1<<0)
			t.Parts = d.parts()
		default:
			d.fail()
		}
	}
	return t
}

func (d *fastDecoder) parts() []TemplatePart {
	if d.null() {
		return nil
	}
	d.open('[')
	base := len(d.partStack)
	first := true
	for d.more(&first, ']') {
		var p TemplatePart
		if !d.null() {
			d.open('{')
			var set uint32
			first := true
			for d.more(&first, '}') {
				switch string(d.key()) {
				case "text":
					d.seen(&set, 1<<0)
					p.Text = d.str()
				case "expr":
					d.seen(&set, 1<<1)
					p.Expr = d.expr()
				default:
					d.fail()
				}
			}
		}
		d.partStack = append(d.partStack, p)
	}
	list := make([]TemplatePart, len(d.partStack)-base)
	copy(list, d.partStack[base:])
	clear(d.partStack[base:])
	d.partStack = d.partStack[:base]
	return list
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
	t = d.in.intern(t)
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
