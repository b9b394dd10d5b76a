package graph

// Canonical encoding of the Graph IR, its normal form, and its hashes.
//
// The canonical JSON of a graph is what encoding/json produces for the IR
// structs (fields in struct order, map keys sorted) with HTML escaping off,
// applied to the graph's normal form. Two graphs with the same meaning have
// the same normal form, hence the same bytes and the same hash, however the
// compiler built them.
//
// The normal form (see NormalizeGraph):
//
//  1. Collections that are always encoded (Graph.Steps, SwitchAction.Cases,
//     SwitchCase.Next, Alert.On, SetAction.Values, Template.Parts) are
//     non-nil; they are empty ([] or {}) when there is nothing in them.
//  2. Optional collections (the fields tagged omitempty: Inputs, Secrets,
//     Breakers, Outputs, Alerts, Needs, DependsOn, SwitchAction.Default,
//     HTTPAction.Expect, Value.List, Value.Object, Type.Fields) are nil when
//     empty, and so are the literal JSON fields Input.Default and Value.Lit.
//  3. Inputs, Secrets, Breakers, Outputs, Alerts, Schedules and Webhooks
//     are sorted by name (Schedules and Webhooks, like the other optional
//     lists, are nil when empty);
//     Needs, DependsOn, SwitchCase.Next, SwitchAction.Default and Alert.On
//     are sorted and without duplicates.
//  4. Literal JSON (Input.Default, Value.Lit) is compact, with object keys
//     sorted, no HTML escaping, and numbers exactly as written.
//  5. Steps are in topological order of Needs, ties broken by name: the
//     first step is the smallest name with no needs, and so on (Kahn's
//     algorithm taking the smallest ready name each time). A graph whose
//     Needs name unknown steps or form a cycle keeps its order (it does not
//     validate anyway).
//
// Rules 1 to 4 follow from the fields' tags (omitempty, set, sorted, the
// field types): ir_gen.go applies them, in the walk of each struct and in
// its decoder; this file holds the rules' helpers and rule 5.
//
// For a graph in normal form, Decode(Encode(g)) deep-equals g. Seal and
// Decode return graphs in normal form.

import (
	"bytes"
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Encode returns the canonical JSON of g's normal form (see NormalizeGraph).
// It does not modify g: a graph not in normal form is copied and the copy
// normalised first. It fails only when the graph holds something JSON cannot
// represent (invalid literal JSON, a NaN multiplier).
func Encode(g *Graph) ([]byte, error) {
	if g == nil {
		return nil, errors.New("encode graph: the graph is nil")
	}
	if !encNormalize(g, false) {
		c, err := encNormalCopy(g)
		if err != nil {
			return nil, fmt.Errorf("encode graph %q: %w", g.Workflow, err)
		}
		g = c
	}
	b, err := encGraph(g)
	if err != nil {
		return nil, fmt.Errorf("encode graph %q: %w", g.Workflow, err)
	}
	return b, nil
}

// Decode reads a graph written by Encode. It is strict: unknown fields,
// trailing data, and a graph that ValidateGraph rejects (unknown kinds, a
// need or switch target that names no step, ...) are errors. The result is
// in normal form. Decode does not check step hashes, so a graph sealed by an
// older flowrun still decodes; Hash checks them.
//
// Equal types and mode strings of the result are shared (decode_intern.go),
// and the steps are decoded one at a time, so that decoding a long graph
// holds little more than the graph it returns. The steps of a long graph
// are decoded on all the processors (decode_fast.go), and its steps' order
// checked while it is validated (decodeCheck); every goroutine ends before
// Decode returns.
func Decode(b []byte) (*Graph, error) {
	return decodeSplit(b, defaultFastSplit())
}

// decodeSplit is Decode with the parallel decode of the steps configured
// by sp (tests force it on small graphs).
func decodeSplit(b []byte, sp fastSplit) (*Graph, error) {
	in := newTypeInterner()
	if g, ok := decodeFastUnordered(b, in, sp); ok && decodeCheck(g, sp) == nil {
		// No runtime.GC here (see decodeReference): the fast decoder
		// allocates little besides the graph it returns (10,000 steps:
		// 11.3 MB allocated, 9.8 MB kept), so a collection would free
		// about 1.5 MB and cost several milliseconds.
		return g, nil
	}
	// Anything the fast decoder does not take, and a graph that does not
	// validate: the reference decode gives the same graph or its error.
	return decodeReference(b)
}

// decodeCheck puts the steps of a graph from decodeFastUnordered in the
// canonical order and validates the graph. A long graph is validated while
// another goroutine checks that its steps are in the canonical order (as
// stored graphs are; else they are ordered, and the graph validated again).
// ValidateGraph and fastCanonicalOrder only read the graph.
func decodeCheck(g *Graph, sp fastSplit) error {
	if sp.Workers < 2 || len(g.Steps) < sp.orderSteps {
		fastStepOrder(g)
		return ValidateGraph(g)
	}
	var canonical bool
	var wg sync.WaitGroup
	wg.Go(func() { canonical = fastCanonicalOrder(g.Steps) })
	err := ValidateGraph(g)
	wg.Wait()
	if canonical {
		return err
	}
	fastStepOrder(g)
	return ValidateGraph(g)
}

// decodeReference is Decode through encoding/json (decodeStream, or the
// whole record when the stream decoder does not take it): what decodeFast
// must agree with, and what reports every error.
func decodeReference(b []byte) (*Graph, error) {
	in := newTypeInterner()
	g, ok := decodeStream(b, in)
	if !ok {
		// Whatever the stream decoder did not take, decoded whole: the same
		// graph, or the error encoding/json gives for the whole record.
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		g = &Graph{}
		if err := dec.Decode(g); err != nil {
			return nil, fmt.Errorf("decode graph: the stored graph is not valid graph JSON: %w", err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, errors.New("decode graph: the stored graph has data after its closing brace; store exactly one graph per record")
		}
	}
	encNormalize(g, true)
	if err := ValidateGraph(g); err != nil {
		return nil, fmt.Errorf("decode graph: %w", err)
	}
	in.graph(g)
	if len(b) >= decodeCollectBytes {
		// Decoding a long graph allocates several times the graph it keeps,
		// and the collector paces the heap on what it found live meanwhile;
		// collecting now paces it on the graph itself.
		runtime.GC()
	}
	return g, nil
}

// NormalizeGraph puts g into normal form in place (see the list at the top
// of encode.go: non-nil always-encoded collections, nil empty optional ones,
// sorted names and edge lists, canonical literal JSON, canonical step
// order). It is idempotent. Seal calls it; the compiler need not.
func NormalizeGraph(g *Graph) {
	if g != nil {
		encNormalize(g, true)
	}
}

// Seal puts g into normal form and sets every Step.Hash to the hex SHA-256
// of the canonical JSON of the step's definition: Name, Needs, DependsOn,
// Join, When, Action, Foreach, Until, OnError, IdempotencyKey and
// OutputType. The run policy (TimeoutMS, Retry, Breaker) is left out, so a
// PATCH change such as a longer timeout keeps every step hash, and the
// migration rule "same hash, same upstream, same output" holds.
//
// The compiler calls Seal as its last step. A step whose definition cannot
// be encoded (invalid literal JSON) gets an empty hash, which Hash reports.
// Seal remembers which steps it hashed, so that EncodeHashed (storing the
// graph) does not hash them again.
func Seal(g *Graph) {
	if g == nil {
		return
	}
	encNormalize(g, true)
	// Step hashes are independent: a large graph spreads them over the
	// processors (each of workers takes every workers-th step; the caller
	// is one of them, the others are goroutines that end before Seal
	// returns). A small graph is hashed on the caller's goroutine alone: a
	// new goroutine's stack would be copied as the encoder's calls deepen,
	// mapping the function metadata of the packages on it.
	workers := min(runtime.GOMAXPROCS(0), len(g.Steps)/ParallelStepDecode)
	workers = max(workers, 1)
	hash := func(w int) {
		for i := w; i < len(g.Steps); i += workers {
			s := g.Steps[i]
			if s == nil {
				continue
			}
			h, err := StepHash(s)
			if err != nil {
				h = ""
			}
			s.Hash = h
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { hash(w) })
	}
	hash(0)
	wg.Wait()
	markSealed(g)
}

// StepHash returns the hash Seal gives s: the hex SHA-256 of the canonical
// JSON of the step's definition fields (not TimeoutMS, Retry, Breaker, nor
// Hash itself). s should be part of a graph in normal form.
func StepHash(s *Step) (string, error) {
	stepHashes.Add(1)
	// The encoding of stepDefOf(s), the fields of Step tagged def, by the
	// generated encoder (ir_gen.go) into a pooled buffer.
	buf := encBufs.Get().(*[]byte)
	defer encBufs.Put(buf)
	b, err := s.appendDefJSON((*buf)[:0])
	if err != nil {
		if b, err = encMarshal(stepDefOf(s)); err != nil { // encoding/json's error
			return "", fmt.Errorf("hash step %q: %w", s.Name, err)
		}
	}
	*buf = b
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Hash returns the hex SHA-256 of Encode(g). The graph must be sealed: every
// Step.Hash must equal StepHash of the step as it is now. Hash recomputes
// them and returns an error (rather than sealing a copy) when one is
// missing or stale, because a graph changed after Seal would carry hashes
// that lie to migration.
func Hash(g *Graph) (string, error) {
	if g == nil {
		return "", errors.New("hash graph: the graph is nil")
	}
	if err := checkSealed(g); err != nil {
		return "", err
	}
	_, h, err := encodeHashed(g)
	return h, err
}

// encMarshal is json.Marshal without HTML escaping (CEL's && and < stay
// readable) and without the trailing newline of json.Encoder.
func encMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encNormalCopy returns a normalised deep copy of g, made through JSON.
func encNormalCopy(g *Graph) (*Graph, error) {
	b, err := encMarshal(g)
	if err != nil {
		return nil, err
	}
	var c Graph
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	encNormalize(&c, true)
	return &c, nil
}

// encCanonicalJSON returns the canonical form of a JSON literal: compact,
// object keys sorted, numbers as written, no HTML escaping.
func encCanonicalJSON(b []byte) ([]byte, error) {
	if encCanonicalScalar(b) {
		return b, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return encMarshal(v)
}

// encNormalizer walks a graph and either reports (fix false) or repairs
// (fix true) every departure from the normal form.
type encNormalizer struct {
	fix    bool
	normal bool
	// stepsDone leaves the steps and their order to the caller: the fast
	// decoder normalises each step as it reads it (decode_fast.go).
	stepsDone bool
}

// encNormalize reports whether g was already in normal form, and puts it in
// normal form when fix is set.
func encNormalize(g *Graph, fix bool) bool {
	n := &encNormalizer{fix: fix, normal: true}
	n.graph(g)
	return n.normal
}

func (n *encNormalizer) change() bool {
	n.normal = false
	return n.fix
}

// steps puts the steps of g and their order in normal form, unless the
// caller does (stepsDone).
func (n *encNormalizer) steps(g *Graph) {
	if n.stepsDone {
		return
	}
	for _, s := range g.Steps {
		n.step(s)
	}
	// Steps already in the canonical order (a graph sealed, or decoded,
	// and normalised again before it is stored) are recognised without
	// encTopoOrder's maps and heap of names.
	if fastCanonicalOrder(g.Steps) {
		return
	}
	n.stepOrder(g)
}

// namedValues sorts named values by name and puts their values in normal
// form.
func (n *encNormalizer) namedValues(nv NamedValues) {
	cmp := func(x, y NamedValue) int { return strings.Compare(x.Name, y.Name) }
	if !slices.IsSortedFunc(nv, cmp) && n.change() {
		slices.SortStableFunc(nv, cmp)
	}
	for _, e := range nv {
		n.value(e.Value)
	}
}

func (n *encNormalizer) typ(t *Type) {
	if t == nil {
		return
	}
	if len(t.Fields) == 0 && t.Fields != nil && n.change() {
		t.Fields = nil
	}
	n.typ(t.Elem)
	for _, f := range t.Fields {
		n.typ(f)
	}
}

// raw canonicalises a literal JSON field. Invalid JSON is left as it is:
// Encode and ValidateGraph report it.
func (n *encNormalizer) raw(p *json.RawMessage) {
	if *p == nil {
		return
	}
	if len(*p) == 0 {
		if n.change() {
			*p = nil
		}
		return
	}
	c, err := encCanonicalJSON(*p)
	if err != nil || bytes.Equal(c, *p) {
		return
	}
	if n.change() {
		*p = c
	}
}

// names sorts and deduplicates a list of names; an empty list becomes nil,
// or empty and non-nil when keep is set (an always-encoded field).
func (n *encNormalizer) names(p *[]string, keep bool) {
	switch {
	case keep && *p == nil:
		if n.change() {
			*p = []string{}
		}
		return
	case !keep && *p != nil && len(*p) == 0:
		if n.change() {
			*p = nil
		}
		return
	}
	for i := 1; i < len(*p); i++ {
		if (*p)[i-1] >= (*p)[i] {
			if n.change() {
				s := slices.Clone(*p)
				slices.Sort(s)
				*p = slices.Compact(s)
			}
			return
		}
	}
}

// encSortByName sorts a name-keyed list in place (stable, so duplicates
// keep their order for ValidateGraph to report).
func encSortByName[T any](n *encNormalizer, list []T, name func(T) string) {
	if slices.IsSortedFunc(list, func(a, b T) int { return encCmp(name(a), name(b)) }) {
		return
	}
	if n.change() {
		slices.SortStableFunc(list, func(a, b T) int { return encCmp(name(a), name(b)) })
	}
}

func encCmp(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// stepOrder puts the steps in canonical topological order when the needs
// form a DAG over known, uniquely named steps.
func (n *encNormalizer) stepOrder(g *Graph) {
	order, ok := encTopoOrder(g.Steps)
	if !ok {
		return
	}
	for i := range order {
		if order[i] != g.Steps[i] {
			if n.change() {
				copy(g.Steps, order)
			}
			return
		}
	}
}

// encTopoOrder returns the steps in Kahn order taking the smallest ready
// name first, or false when a step is nil, a name repeats, a need is
// unknown or the needs form a cycle.
func encTopoOrder(steps []*Step) ([]*Step, bool) {
	byName := make(map[string]*Step, len(steps))
	for _, s := range steps {
		if s == nil {
			return nil, false
		}
		if _, dup := byName[s.Name]; dup {
			return nil, false
		}
		byName[s.Name] = s
	}
	waiting := make(map[string]int, len(steps))
	users := make(map[string][]string, len(steps))
	ready := &encNameHeap{}
	for _, s := range steps {
		for _, d := range s.Needs {
			if _, ok := byName[d]; !ok {
				return nil, false
			}
			users[d] = append(users[d], s.Name)
		}
		// Needs may hold duplicates before normalisation; count each once.
		waiting[s.Name] = len(encUniq(s.Needs))
		if waiting[s.Name] == 0 {
			heap.Push(ready, s.Name)
		}
	}
	order := make([]*Step, 0, len(steps))
	for ready.Len() > 0 {
		name := heap.Pop(ready).(string)
		order = append(order, byName[name])
		for _, u := range encUniq(users[name]) {
			waiting[u]--
			if waiting[u] == 0 {
				heap.Push(ready, u)
			}
		}
	}
	return order, len(order) == len(steps)
}

// encUniq returns the distinct names of list, sorted; list is not modified.
func encUniq(list []string) []string {
	for i := 1; i < len(list); i++ {
		if list[i-1] >= list[i] {
			s := slices.Clone(list)
			slices.Sort(s)
			return slices.Compact(s)
		}
	}
	return list
}

// encNameHeap is a min-heap of step names.
type encNameHeap []string

func (h encNameHeap) Len() int           { return len(h) }
func (h encNameHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h encNameHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *encNameHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *encNameHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// encCanonicalScalar reports whether b is a JSON value that encMarshal
// would write unchanged, recognising cheaply the common cases: true, false,
// null, a plain decimal integer, and a string of printable ASCII with no
// character that needs escaping. Anything else goes the long way.
func encCanonicalScalar(b []byte) bool {
	switch string(b) {
	case "true", "false", "null", "0":
		return true
	}
	if len(b) == 0 {
		return false
	}
	if b[0] == '"' {
		if len(b) < 2 || b[len(b)-1] != '"' {
			return false
		}
		for _, c := range b[1 : len(b)-1] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	digits := b
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
