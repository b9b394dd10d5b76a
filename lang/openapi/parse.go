package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/lang/naming"
	"go.yaml.in/yaml/v3"
)

// Error is why a document is not a valid OpenAPI 3.0 or 3.1 document: the
// first mistake Parse met.
type Error struct {
	// Path is where the mistake is, like paths./pets.get.parameters[0];
	// "" for the document as a whole.
	Path string
	// Line is the mistake's line in the document, from 1; 0 when unknown.
	Line int
	// Msg says what is wrong, without a final period.
	Msg string
}

func (e *Error) Error() string {
	switch {
	case e.Path != "" && e.Line > 0:
		return fmt.Sprintf("%s (line %d): %s", e.Path, e.Line, e.Msg)
	case e.Path != "":
		return e.Path + ": " + e.Msg
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// The bounds on the work a document may ask for.
const (
	// maxWork bounds the nodes visited, counting each anchor's and
	// reference's expansion again: a document uses each of its nodes a
	// few times, a hostile one expands a few nodes exponentially often.
	maxWork = 1 << 20
	// maxDepth bounds how deeply the values Parse walks itself (an enum's,
	// a merge of merges) nest.
	maxDepth = 64
	// maxRefHops bounds a chain of references to references.
	maxRefHops = 64
)

// readableVersion says whether v is an OpenAPI version Parse reads:
// 3.0.N or 3.1.N.
func readableVersion(v string) bool {
	patch, ok := strings.CutPrefix(v, "3.0.")
	if !ok {
		patch, ok = strings.CutPrefix(v, "3.1.")
	}
	if !ok || patch == "" {
		return false
	}
	for i := 0; i < len(patch); i++ {
		if patch[i] < '0' || patch[i] > '9' {
			return false
		}
	}
	return true
}

// Parse reads an OpenAPI 3.0.x or 3.1.x document, JSON or YAML. The error,
// when there is one, is an *Error.
func Parse(src []byte) (doc *Document, err error) {
	fieldsOnce.Do(loadFields)
	root, err := readNodes(src)
	if err != nil {
		return nil, err
	}
	p := &parser{
		index:     map[*yaml.Node]map[string]*yaml.Node{},
		schemas:   map[*yaml.Node]*Schema{},
		params:    map[*yaml.Node]*Parameter{},
		bodies:    map[*yaml.Node]*RequestBody{},
		responses: map[*yaml.Node]*Response{},
		items:     map[*yaml.Node]*PathItem{},
		opIDNodes: map[*Operation]*yaml.Node{},
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			doc, err = nil, e
		}
	}()
	return p.document(root), nil
}

// readNodes parses the document's JSON or YAML.
func readNodes(src []byte) (*yaml.Node, error) {
	var jsonErr error
	if looksJSON(src) {
		n, err := jsonNode(bytes.TrimPrefix(src, []byte("\ufeff")))
		if err == nil {
			return n, nil
		}
		var se *jsonSyntaxError
		if !errors.As(err, &se) {
			return nil, err
		}
		jsonErr = se.err // perhaps YAML in flow style: try that
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		if jsonErr != nil {
			return nil, jsonErr
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if i := strings.Index(rest, ": "); i > 0 {
				if l, err := strconv.Atoi(rest[:i]); err == nil {
					line, msg = l, rest[i+2:]
				}
			}
		}
		return nil, &Error{Line: line, Msg: msg}
	}
	return &root, nil
}

// parser holds one Parse's state. Its methods report a mistake with fail,
// which unwinds to Parse.
type parser struct {
	root *yaml.Node
	v31  bool // the document is OpenAPI 3.1
	work int
	// index holds the keys of the mappings a reference was looked up in.
	index map[*yaml.Node]map[string]*yaml.Node
	// The objects decoded so far, by the node they were decoded from: a
	// node referenced twice is decoded once.
	schemas   map[*yaml.Node]*Schema
	params    map[*yaml.Node]*Parameter
	bodies    map[*yaml.Node]*RequestBody
	responses map[*yaml.Node]*Response
	items     map[*yaml.Node]*PathItem
	// opIDNodes holds each operationId's node, for its line.
	opIDNodes map[*Operation]*yaml.Node
	// queue holds the schemas made but not yet filled in: schemas are
	// filled one after another, not by recursion, so a deep or recursive
	// schema takes no stack.
	queue []queued
}

type queued struct {
	n    *yaml.Node
	path string
	s    *Schema
}

// fail reports a mistake at the node n (nil: no line), at path.
func (p *parser) fail(n *yaml.Node, path, format string, args ...any) {
	e := &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line = n.Line
	}
	panic(e)
}

// tick counts a unit of work.
func (p *parser) tick() {
	p.work++
	if p.work > maxWork {
		p.fail(nil, "", "the document is too large to read once its anchors and references are expanded (more than %d nodes)", maxWork)
	}
}

// deref follows YAML aliases to the node they name.
func (p *parser) deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		p.tick()
		n = n.Alias
	}
	return n
}

// join is the path of key within path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// pair is one key of a mapping and its value (aliases followed).
type pair struct {
	key  string
	kn   *yaml.Node // the key's node, for its line
	v    *yaml.Node
	null bool // the value is null
}

// pairs lists a mapping's keys in order, merge keys (<<) applied; a key
// written twice is a mistake.
func (p *parser) pairs(n *yaml.Node, path string) []pair {
	out, _ := p.mergePairs(n, path, 0)
	return out
}

func (p *parser) mergePairs(n *yaml.Node, path string, depth int) ([]pair, map[string]bool) {
	if depth > maxDepth {
		p.fail(n, path, "merge keys (<<) nest more than %d deep", maxDepth)
	}
	var out []pair
	seen := map[string]bool{}
	var merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		p.tick()
		k, v := p.deref(n.Content[i]), p.deref(n.Content[i+1])
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			var from []*yaml.Node
			switch v.Kind {
			case yaml.MappingNode:
				from = []*yaml.Node{v}
			case yaml.SequenceNode:
				for _, m := range v.Content {
					from = append(from, p.deref(m))
				}
			default:
				from = []*yaml.Node{v}
			}
			for _, m := range from {
				if m.Kind != yaml.MappingNode {
					p.fail(k, path, "a merge key (<<) merges mappings only")
				}
				ps, _ := p.mergePairs(m, path, depth+1)
				merged = append(merged, ps...)
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			p.fail(k, path, "a key must be a string, not %s", describe(k))
		}
		if seen[k.Value] {
			p.fail(k, join(path, k.Value), "the key %q appears twice", k.Value)
		}
		seen[k.Value] = true
		out = append(out, pair{key: k.Value, kn: k, v: v, null: isNull(v)})
	}
	// A key written in the mapping wins over a merged one; of the merged,
	// the first wins.
	for _, m := range merged {
		if !seen[m.key] {
			seen[m.key] = true
			out = append(out, m)
		}
	}
	return out, seen
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names a node's kind of value, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return "the string " + quoteShort(n.Value)
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return n.Value
		case "!!null":
			return "null"
		}
		return "the value " + quoteShort(n.Value)
	}
	return "nothing"
}

func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

// The kinds of a field's value.
type kind int

const (
	kAny          kind = iota
	kString            // a string
	kBool              // true or false
	kNumber            // a number
	kCount             // a whole number, 0 or more
	kList              // a list
	kObject            // an object
	kSchema            // a schema: an object, or in 3.1 a boolean
	kTypes             // a schema's type: a string, or in 3.1 a list of strings
	kBoolOrSchema      // additionalProperties: a boolean or a schema
)

func (k kind) String() string {
	switch k {
	case kString, kTypes:
		return "a string"
	case kBool:
		return "true or false"
	case kNumber:
		return "a number"
	case kCount:
		return "a whole number (0 or more)"
	case kList:
		return "a list"
	case kObject, kSchema:
		return "an object"
	case kBoolOrSchema:
		return "true, false or an object"
	}
	return "a value"
}

// fields reads a mapping of the object kind what, whose fields are known:
// it checks each field's kind and refuses one known does not list (an
// extension, x-..., is always allowed; open lets any other through, for a
// 3.1 schema). A null field counts as absent.
func (p *parser) fields(n *yaml.Node, path, what string, known map[string]kind, open bool) map[string]pair {
	if n.Kind != yaml.MappingNode {
		p.fail(n, path, "%s must be an object, not %s", what, describe(n))
	}
	out := map[string]pair{}
	for _, f := range p.pairs(n, path) {
		if strings.HasPrefix(f.key, "x-") {
			continue
		}
		k, ok := known[f.key]
		if !ok {
			if open {
				continue
			}
			p.unknownField(f, path, what, known)
		}
		if f.null {
			continue
		}
		p.checkKind(f.v, join(path, f.key), k)
		out[f.key] = f
	}
	return out
}

// unknownField reports a field the object does not have.
func (p *parser) unknownField(f pair, path, what string, known map[string]kind) {
	names := naming.NamesSorted(known) // ties go to the first
	hint := ""
	if near := naming.NearestName(f.key, names); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	} else if _, in31 := schema31[f.key]; what == "a schema" && in31 {
		hint = "; it is a keyword of OpenAPI 3.1, so declare openapi: 3.1.0 to use it"
	} else if what == "the document" && f.key == "swagger" {
		hint = "; this looks like a Swagger 2.0 document: convert it to OpenAPI 3"
	}
	p.fail(f.kn, join(path, f.key), "%s has no field %q%s", what, f.key, hint)
}

// checkKind checks a value is of kind k.
func (p *parser) checkKind(v *yaml.Node, path string, k kind) {
	ok := true
	switch k {
	case kString:
		ok = v.Kind == yaml.ScalarNode && v.Tag == "!!str"
		if !ok && v.Kind == yaml.ScalarNode {
			p.fail(v, path, "must be a string, not %s; put it in quotes, like \"%s\"", describe(v), v.Value)
		}
	case kBool:
		ok = v.Kind == yaml.ScalarNode && v.Tag == "!!bool"
	case kNumber:
		ok = v.Kind == yaml.ScalarNode && (v.Tag == "!!int" || v.Tag == "!!float")
	case kCount:
		ok = v.Kind == yaml.ScalarNode && v.Tag == "!!int" && !strings.HasPrefix(v.Value, "-")
	case kList:
		ok = v.Kind == yaml.SequenceNode
	case kObject:
		ok = v.Kind == yaml.MappingNode
	case kSchema:
		ok = v.Kind == yaml.MappingNode || p.v31 && v.Kind == yaml.ScalarNode && v.Tag == "!!bool"
	case kBoolOrSchema:
		ok = v.Kind == yaml.MappingNode || v.Kind == yaml.ScalarNode && v.Tag == "!!bool"
	case kTypes:
		ok = v.Kind == yaml.ScalarNode && v.Tag == "!!str" || p.v31 && v.Kind == yaml.SequenceNode
	}
	if !ok {
		want := k.String()
		if k == kTypes && p.v31 {
			want = "a string or a list of strings"
		}
		if k == kSchema && p.v31 {
			want = "an object or a boolean"
		}
		p.fail(v, path, "must be %s, not %s", want, describe(v))
	}
}

// str is a string field's value; "" when absent.
func str(fs map[string]pair, key string) string {
	if f, ok := fs[key]; ok {
		return f.v.Value
	}
	return ""
}

// flag is a boolean field's value; false when absent.
func flag(fs map[string]pair, key string) bool {
	f, ok := fs[key]
	return ok && isTrue(f.v)
}

// isTrue reports whether a boolean scalar is true.
func isTrue(n *yaml.Node) bool {
	return n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
}

// ref follows the $ref of the object n, if it has one, through chains of
// references: it returns the node the chain ends at and its path. what
// names the kind of object, for messages.
func (p *parser) ref(n *yaml.Node, path string) (*yaml.Node, string) {
	var seen []string
	for hops := 0; ; hops++ {
		if n.Kind != yaml.MappingNode {
			return n, path
		}
		var r *pair
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := p.deref(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == "$ref" {
				v := p.deref(n.Content[i+1])
				r = &pair{key: "$ref", kn: k, v: v}
				break
			}
		}
		if r == nil {
			return n, path
		}
		at := join(path, "$ref")
		if r.v.Kind != yaml.ScalarNode || r.v.Tag != "!!str" {
			p.fail(r.v, at, "must be a string, not %s", describe(r.v))
		}
		for _, s := range seen {
			if s == r.v.Value {
				p.fail(r.v, at, "the references %s → %s go round in a circle; a reference must end at an object", strings.Join(seen, " → "), r.v.Value)
			}
		}
		if hops >= maxRefHops {
			p.fail(r.v, at, "more than %d references lead one to the next", maxRefHops)
		}
		seen = append(seen, r.v.Value)
		n, path = p.resolve(r.v, at)
	}
}

// resolve returns the node a $ref (the string node v, at path) names, and
// its path.
func (p *parser) resolve(v *yaml.Node, path string) (*yaml.Node, string) {
	ref := v.Value
	if !strings.HasPrefix(ref, "#") {
		p.fail(v, path, "%s names another document; flowrun reads one document and follows only references inside it, like \"#/components/schemas/Pet\": copy what it names into this document", quoteShort(ref))
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil || frag != "" && !strings.HasPrefix(frag, "/") {
		p.fail(v, path, "%s is not a reference into this document, like \"#/components/schemas/Pet\"", quoteShort(ref))
	}
	n := p.deref(p.root)
	target := ""
	if frag == "" {
		return n, target
	}
	toks := strings.Split(frag[1:], "/")
	for i, tok := range toks {
		p.tick()
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			next = p.lookup(n, target, tok)
			target = join(target, tok)
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = p.deref(n.Content[i])
			}
			target += "[" + tok + "]"
		default:
			target = join(target, tok)
		}
		if next == nil {
			for _, rest := range toks[i+1:] {
				target = join(target, rest)
			}
			p.fail(v, path, "%s names nothing: the document has no %s", quoteShort(ref), target)
		}
		n = next
	}
	return n, target
}

// lookup returns the value of key in the mapping n (at path).
func (p *parser) lookup(n *yaml.Node, path, key string) *yaml.Node {
	m, ok := p.index[n]
	if !ok {
		m = map[string]*yaml.Node{}
		for _, f := range p.pairs(n, path) {
			m[f.key] = f.v
		}
		p.index[n] = m
	}
	return m[key]
}
