package lang

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/naming"
	"github.com/flowrun/flowrun/lang/openapi"
)

// This file compiles an openapi action (language.md §8.10) to the http
// action it stands for: the operation's method, its path with the path
// parameters placed (each escaped as one segment), its query and header
// parameters where the document puts them, and the body; parameters and
// body are checked against the document's schemas, and the output's body
// takes the type of the success response's schema. Nothing at run time
// reads the document.

// maxSchemaDepth bounds how deep a schema is followed, for the output type
// and the checks: a recursive schema is typed any below it.
const maxSchemaDepth = 16

// openapiDocs returns the load's document cache.
func (c *compiler) openapiDocs() *docCache {
	if c.children != nil && c.children.docs != nil {
		return c.children.docs
	}
	if c.docs == nil {
		c.docs = newDocCache("", nil, nil)
	}
	return c.docs
}

// buildOpenAPI builds an openapi action as an http action, and its output
// type.
func (c *compiler) buildOpenAPI(a *actionDecl, scope *scoper) (graph.Action, *graph.Type) {
	o := a.OpenAPI
	h := &graph.HTTPAction{Method: "GET", Expect: a.Expect, NoRedirects: a.NoRedirects}
	act := graph.Action{Kind: graph.KindHTTP, HTTP: h}
	// The values are checked whatever the document says, so that their
	// own mistakes are reported with the document's.
	params := map[string]*graph.Value{}
	var names []string
	if o.Params != nil {
		for _, k := range o.ParamShape.sortedKeys() {
			n := o.paramNode(k)
			if n == nil {
				continue
			}
			params[k] = c.checkData(n, scope)
			names = append(names, k)
		}
	}
	server := c.checkData(a.URL, scope)
	c.wantText(server, a.URL, "server")
	headers := c.checkData(a.Headers, scope)
	c.wantTextMap(headers, a.Headers, "headers")
	body := c.checkData(a.Body, scope)

	d := c.openapiDocs().load(o.DocumentRange.Filename, o.Document)
	if d.err != "" {
		c.errorf(o.DocumentRange, d.errSum, "%s", d.err)
		h.URL = &graph.Value{Lit: literalJSON(""), Type: graph.TypeString}
		return act, httpOutputType
	}
	op := d.ops[o.Operation]
	if op == nil {
		near := ""
		if ns := nearestOps(o.Operation, d.opIDs); len(ns) > 0 {
			near = " The nearest are: " + strings.Join(ns, ", ") + "."
		}
		c.errorf(o.OperationRng, "Unknown operation", "%s has no operation with operationId %q.%s", o.Document, o.Operation, near)
		h.URL = &graph.Value{Lit: literalJSON(""), Type: graph.TypeString}
		return act, httpOutputType
	}
	h.Method = op.method
	docName := o.Document // a URL as written
	if !isDocURL(docName) {
		docName = filepath.ToSlash(filepath.Clean(filepath.FromSlash(docName)))
	}
	h.OpenAPI = &graph.OpenAPIRef{Document: docName, SHA256: d.sha256, Operation: o.Operation}

	// The operation's parameters: the path item's, overridden by the
	// operation's of the same name and place.
	byName := map[string]*openapi.Parameter{}
	var order []string
	add := func(ps []*openapi.Parameter) {
		for _, p := range ps {
			if old, ok := byName[p.Name]; ok && old.In != p.In {
				c.errorf(o.OperationRng, "Ambiguous parameter name",
					"Operation %q has two parameters named %q (in %s and in %s), which parameters cannot tell apart; flowrun does not call such an operation yet.", o.Operation, p.Name, old.In, p.In)
				continue
			}
			if _, ok := byName[p.Name]; !ok {
				order = append(order, p.Name)
			}
			byName[p.Name] = p
		}
	}
	add(op.item.Parameters)
	add(op.op.Parameters)
	known := append([]string(nil), order...)
	sort.Strings(known)

	query := map[string]*graph.Value{}
	hdrs := map[string]*graph.Value{}
	pathVals := map[string]*graph.Value{}
	suggested := map[string]bool{} // a misspelt parameter is not also missing
	for _, k := range names {
		p := byName[k]
		rng := o.ParamShape.key(k)
		if p == nil {
			c.errorf(rng, "Unknown parameter", "Operation %q has no parameter named %q.%s Its parameters are: %s.",
				o.Operation, k, naming.DidYouMean(k, known), orNone(known))
			suggested[naming.NearestName(k, known)] = true
			continue
		}
		v, sh := params[k], o.ParamShape.item(k)
		if v == nil {
			continue
		}
		ps := p.Schema
		if ps != nil && (ps.Is("array") || ps.Is("object")) {
			c.errorf(sh.Range, "Unsupported parameter",
				"Parameter %q is an %s; flowrun sends only parameters of one value (a string, number, integer or boolean) yet. Call this operation with an http action and write the %s parameter yourself.", k, ps.Type[0], p.In)
			continue
		}
		c.checkSchema(v, sh, ps, "parameter "+k, 0)
		c.wantText(v, &dataNode{Range: sh.Range}, k)
		switch p.In {
		case openapi.InPath:
			pathVals[k] = v
		case openapi.InQuery:
			query[k] = v
		case openapi.InHeader:
			hdrs[k] = v
		default:
			c.errorf(rng, "Unsupported parameter",
				"Parameter %q is sent in a %s, which flowrun does not write yet. Call this operation with an http action and set the Cookie header yourself.", k, p.In)
		}
	}
	for _, name := range order {
		p := byName[name]
		if (p.Required || p.In == openapi.InPath) && params[name] == nil && !suggested[name] {
			c.errorf(a.Range, "Missing parameter", "Operation %q needs parameter %q (in %s): add it, like parameters = { %s = \"...\" }.",
				o.Operation, name, p.In, name)
		}
	}

	// The body.
	bodySchema, media := requestSchema(op.op)
	rb := op.op.RequestBody
	switch {
	case body == nil && rb != nil && rb.Required:
		c.errorf(a.Range, "Missing body", "Operation %q needs a request body: add body = { ... }.", o.Operation)
	case body != nil && rb == nil:
		c.errorf(a.Body.Range, "Unexpected body", "Operation %q takes no request body: remove body.", o.Operation)
	case body != nil && media != "" && !isJSONMedia(media):
		c.wantText(body, a.Body, "body")
		if !hasHeader(headers, "Content-Type") {
			hdrs["Content-Type"] = &graph.Value{Lit: literalJSON(media), Type: graph.TypeString}
		}
	case body != nil:
		c.checkSchema(body, o.BodyShape, bodySchema, "body", 0)
	}
	h.Body = body

	// The URL: the server, then the path with its parameters.
	var base []graph.TemplatePart
	if server != nil {
		base = templateParts(server)
	} else {
		u, why := documentServer(d.doc, d.base)
		if why != "" {
			c.errorf(o.DocumentRange, "No server to call", "%s %s: add server = \"https://api.example.com\" to the openapi block.", o.Document, why)
		}
		base = []graph.TemplatePart{{Text: u}}
	}
	if n := len(base); n > 0 && base[n-1].Expr == nil && strings.HasPrefix(op.path, "/") {
		base[n-1].Text = strings.TrimRight(base[n-1].Text, "/")
	}
	parts := append(base, c.pathParts(op.path, pathVals)...)
	h.URL = urlValue(parts)
	if a.URL != nil {
		c.checkURL(h.URL, a.URL)
	}
	h.Query = objectValue(query)
	h.Headers = mergeHeaders(headers, hdrs)
	return act, c.sharedType(graph.ObjectOf(map[string]*graph.Type{
		"status": graph.TypeInt, "headers": graph.MapOf(graph.TypeString), "body": responseType(op.op),
	}))
}

// sortedKeys lists an object shape's keys, sorted.
func (s *shape) sortedKeys() []string {
	if s == nil {
		return nil
	}
	return naming.NamesSorted(s.Keys)
}

// paramNode returns the data of parameter k.
func (o *openapiDecl) paramNode(k string) *dataNode {
	n := o.Params
	if n.IsLit {
		m, _ := n.Lit.(map[string]any)
		x, ok := m[k]
		if !ok {
			return nil
		}
		return &dataNode{Range: o.ParamShape.item(k).Range, IsLit: true, Lit: x}
	}
	return n.Object[k]
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// documentServer is the document's first server URL with its variables'
// defaults, or why there is none to call. A relative server URL is
// resolved against base, the URL a fetched document was served at, and a
// fetched document without servers calls its host's root (as OpenAPI
// says); a file has no base.
func documentServer(doc *openapi.Document, base *url.URL) (string, string) {
	if len(doc.Servers) == 0 {
		if base != nil {
			// OpenAPI's default server is "/", on the document's host.
			return base.ResolveReference(&url.URL{Path: "/"}).String(), ""
		}
		return "", "lists no server"
	}
	s := doc.Servers[0]
	u := s.URL
	for name, v := range s.Variables {
		u = strings.ReplaceAll(u, "{"+name+"}", v.Default)
	}
	if base != nil && !strings.Contains(u, "://") {
		if ref, err := url.Parse(u); err == nil {
			u = base.ResolveReference(ref).String()
		}
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return "", fmt.Sprintf("has no absolute http or https server URL (its first is %q)", s.URL)
	}
	return u, ""
}

// templateParts returns a text value's parts: a literal's text, or its
// template's parts.
func templateParts(v *graph.Value) []graph.TemplatePart {
	switch {
	case v.Template != nil:
		return append([]graph.TemplatePart(nil), v.Template.Parts...)
	case v.Lit != nil:
		return []graph.TemplatePart{{Text: litText(v.Lit)}}
	}
	return nil
}

// litText is a literal as text: a string's characters, anything else its
// JSON.
func litText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// pathParts lays out a path template with its parameters' values: their
// literal text escaped here as one path segment, their expressions escaped
// so when the step runs (a value in the path of an http url is escaped as
// one segment, language.md §8.4).
func (c *compiler) pathParts(path string, vals map[string]*graph.Value) []graph.TemplatePart {
	var parts []graph.TemplatePart
	for path != "" {
		i := strings.IndexByte(path, '{')
		j := strings.IndexByte(path[max(i, 0):], '}')
		if i < 0 || j < 0 {
			parts = append(parts, graph.TemplatePart{Text: path})
			break
		}
		j += i
		if i > 0 {
			parts = append(parts, graph.TemplatePart{Text: path[:i]})
		}
		if v := vals[path[i+1:j]]; v != nil {
			for _, p := range templateParts(v) {
				if p.Expr == nil {
					p.Text = url.PathEscape(p.Text)
				}
				parts = append(parts, p)
			}
		}
		path = path[j+1:]
	}
	return parts
}

// urlValue joins URL parts into a value: a literal when no part is an
// expression.
func urlValue(parts []graph.TemplatePart) *graph.Value {
	var merged []graph.TemplatePart
	for _, p := range parts {
		if p.Expr == nil && p.Text == "" {
			continue
		}
		if n := len(merged); n > 0 && p.Expr == nil && merged[n-1].Expr == nil {
			merged[n-1].Text += p.Text
			continue
		}
		merged = append(merged, p)
	}
	if len(merged) == 0 || len(merged) == 1 && merged[0].Expr == nil {
		s := ""
		if len(merged) == 1 {
			s = merged[0].Text
		}
		return &graph.Value{Lit: literalJSON(s), Type: graph.TypeString}
	}
	return &graph.Value{Template: &graph.Template{Parts: merged}, Type: graph.TypeString}
}

// objectValue makes an object value of named values, folded to a literal
// when every value is one; nil when there are none.
func objectValue(m map[string]*graph.Value) *graph.Value {
	if len(m) == 0 {
		return nil
	}
	fields := make(map[string]*graph.Type, len(m))
	lits := make(map[string]json.RawMessage, len(m))
	allLit := true
	for k, v := range m {
		fields[k] = v.Type
		if v.Lit == nil {
			allLit = false
		}
		lits[k] = v.Lit
	}
	if allLit {
		return &graph.Value{Lit: literalJSON(lits), Type: graph.ObjectOf(fields)}
	}
	return &graph.Value{Object: m, Type: graph.ObjectOf(fields)}
}

// mergeHeaders adds the header parameters to the block's own headers (an
// object, or one value that is the whole object).
func mergeHeaders(own *graph.Value, params map[string]*graph.Value) *graph.Value {
	if len(params) == 0 {
		return own
	}
	m := map[string]*graph.Value{}
	switch {
	case own == nil:
	case own.Object != nil:
		for k, v := range own.Object {
			m[k] = v
		}
	case own.Lit != nil:
		var x map[string]json.RawMessage
		_ = json.Unmarshal(own.Lit, &x)
		for k, raw := range x {
			m[k] = &graph.Value{Lit: raw, Type: typeOfJSON(raw)}
		}
	}
	for k, v := range params {
		m[k] = v
	}
	return objectValue(m)
}

func typeOfJSON(raw json.RawMessage) *graph.Type {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return graph.TypeString
	}
	return graph.TypeAny
}

// isJSONMedia reports whether a media type is JSON.
func isJSONMedia(m string) bool {
	m = strings.ToLower(strings.TrimSpace(strings.SplitN(m, ";", 2)[0]))
	return m == "application/json" || strings.HasSuffix(m, "+json")
}

// requestSchema is the operation's request body schema and media type:
// the JSON one when there is one, else the first (by name).
func requestSchema(op *openapi.Operation) (*openapi.Schema, string) {
	if op.RequestBody == nil {
		return nil, ""
	}
	return contentSchema(op.RequestBody.Content)
}

func contentSchema(content map[string]*openapi.MediaType) (*openapi.Schema, string) {
	names := naming.NamesSorted(content)
	for _, m := range names {
		if isJSONMedia(m) {
			if mt := content[m]; mt != nil && mt.Schema != nil {
				return mt.Schema, m
			}
			return nil, m
		}
	}
	if len(names) > 0 {
		return nil, names[0]
	}
	return nil, ""
}

// responseType is the type of the body of the operation's first success
// response (200 to 299 in order, then 2XX) with a JSON schema; any when
// there is none.
func responseType(op *openapi.Operation) *graph.Type {
	m := op.Responses
	codes := naming.NamesSorted(m)
	for _, code := range codes {
		r := m[code]
		if !(len(code) == 3 && code[0] == '2') || r == nil {
			continue
		}
		s, media := contentSchema(r.Content)
		if !isJSONMedia(media) {
			if media == "" {
				continue // no content: try the next success
			}
			return graph.TypeAny
		}
		return schemaType(s, 0)
	}
	return graph.TypeAny
}

// schemaType is the graph type of a JSON schema: its object properties are
// the object's fields; a schema flowrun cannot type (oneOf, anyOf, a
// nullable value, several types, none) is any.
func schemaType(s *openapi.Schema, depth int) *graph.Type {
	if s == nil || depth > maxSchemaDepth || s.Nullable || len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
		return graph.TypeAny
	}
	if len(s.AllOf) > 0 {
		fields := map[string]*graph.Type{}
		for _, r := range s.AllOf {
			if r == nil {
				return graph.TypeAny
			}
			t := schemaType(r, depth+1)
			if t.Kind != graph.KindObject {
				return graph.TypeAny
			}
			for k, ft := range t.Fields {
				fields[k] = ft
			}
		}
		return graph.ObjectOf(fields)
	}
	if len(s.Type) != 1 {
		return graph.TypeAny
	}
	switch s.Type[0] {
	case "string":
		return graph.TypeString
	case "integer":
		return graph.TypeInt
	case "number":
		return graph.TypeNumber
	case "boolean":
		return graph.TypeBool
	case "array":
		if s.Items == nil {
			return graph.ListOf(graph.TypeAny)
		}
		return graph.ListOf(schemaType(s.Items, depth+1))
	case "object":
		if len(s.Properties) == 0 {
			if ap := s.AdditionalSchema; ap != nil {
				return graph.MapOf(schemaType(ap, depth+1))
			}
			return graph.TypeAny
		}
		fields := make(map[string]*graph.Type, len(s.Properties))
		for k, r := range s.Properties {
			if r == nil {
				fields[k] = graph.TypeAny
				continue
			}
			fields[k] = schemaType(r, depth+1)
		}
		return graph.ObjectOf(fields)
	}
	return graph.TypeAny
}

// schemaTypeName is what a schema's type is called in messages.
func schemaTypeName(s *openapi.Schema) string {
	if len(s.Type) == 0 {
		return "any value"
	}
	names := append([]string(nil), s.Type...)
	for i, n := range names {
		switch n {
		case "integer", "array", "object":
			names[i] = "an " + n
		default:
			names[i] = "a " + n
		}
	}
	return strings.Join(names, " or ")
}

// acceptsKind reports whether a schema takes values of a static type kind
// (any and unknown types are left to the server).
func acceptsKind(s *openapi.Schema, t *graph.Type) bool {
	if len(s.Type) == 0 || t == nil {
		return true
	}
	switch t.Kind {
	case graph.KindAny:
		return true
	case graph.KindString:
		return s.Permits("string")
	case graph.KindInt:
		return s.Permits("integer") || s.Permits("number")
	case graph.KindNumber:
		// A number may hold a whole value: the server decides.
		return s.Permits("integer") || s.Permits("number")
	case graph.KindBool:
		return s.Permits("boolean")
	case graph.KindNull:
		return s.Nullable || s.Permits("null")
	case graph.KindList:
		return s.Permits("array")
	case graph.KindObject, graph.KindMap:
		return s.Permits("object")
	}
	return true
}

// checkSchema checks a value against a schema where the compiler can tell:
// a literal's type, enum, required and unknown fields; a template's static
// type.
func (c *compiler) checkSchema(v *graph.Value, sh *shape, s *openapi.Schema, what string, depth int) {
	if v == nil || s == nil || depth > maxSchemaDepth {
		return
	}
	for _, r := range s.AllOf {
		if r != nil {
			c.checkSchema(v, sh, r, what, depth+1)
		}
	}
	switch {
	case v.Lit != nil:
		var x any
		if json.Unmarshal(v.Lit, &x) == nil {
			c.checkLiteral(x, sh, s, what, depth)
		}
	case v.List != nil:
		if !acceptsKind(s, graph.ListOf(graph.TypeAny)) {
			c.wrongType(sh, s, what, "list")
			return
		}
		if s.Items != nil {
			for i, e := range v.List {
				c.checkSchema(e, sh.elem(i), s.Items, fmt.Sprintf("%s[%d]", what, i), depth+1)
			}
		}
	case v.Object != nil:
		if !acceptsKind(s, graph.ObjectOf(nil)) {
			c.wrongType(sh, s, what, "object")
			return
		}
		keys := naming.NamesSorted(v.Object)
		c.checkFields(keys, sh, s, what)
		for _, k := range keys {
			if r := s.Properties[k]; r != nil {
				c.checkSchema(v.Object[k], sh.item(k), r, what+"."+k, depth+1)
			}
		}
	default:
		if !acceptsKind(s, v.Type) {
			c.wrongType(sh, s, what, v.Type.String())
		}
	}
}

// checkLiteral checks a literal value (decoded JSON) against a schema.
func (c *compiler) checkLiteral(x any, sh *shape, s *openapi.Schema, what string, depth int) {
	if depth > maxSchemaDepth {
		return
	}
	kind := ""
	var t *graph.Type
	switch v := x.(type) {
	case nil:
		kind, t = "null", graph.TypeNull
	case bool:
		kind, t = "bool", graph.TypeBool
	case string:
		kind, t = "string", graph.TypeString
	case float64:
		kind, t = "number", graph.TypeNumber
		if v == float64(int64(v)) {
			t = graph.TypeInt
		}
	case []any:
		kind, t = "list", graph.ListOf(graph.TypeAny)
	case map[string]any:
		kind, t = "object", graph.ObjectOf(nil)
	}
	if !acceptsKind(s, t) || t == graph.TypeNumber && s.Is("integer") {
		c.wrongType(sh, s, what, kind)
		return
	}
	if len(s.Enum) > 0 && !inEnum(x, s.Enum) {
		var allowed []string
		for _, e := range s.Enum {
			b, _ := json.Marshal(e)
			allowed = append(allowed, string(b))
		}
		c.errorf(sh.Range, "Value not allowed", "%s must be one of %s (the document's enum), not %s.",
			what, strings.Join(allowed, ", "), jsonText(x))
		return
	}
	switch v := x.(type) {
	case []any:
		if s.Items != nil {
			for i, e := range v {
				c.checkLiteral(e, sh.elem(i), s.Items, fmt.Sprintf("%s[%d]", what, i), depth+1)
			}
		}
	case map[string]any:
		keys := naming.NamesSorted(v)
		c.checkFields(keys, sh, s, what)
		for _, k := range keys {
			if r := s.Properties[k]; r != nil {
				c.checkLiteral(v[k], sh.item(k), r, what+"."+k, depth+1)
			}
		}
	}
}

// checkFields checks an object's field names against a schema's required
// and declared properties. A field the schema does not declare is an error
// unless additionalProperties allows it (language.md §8.10).
func (c *compiler) checkFields(keys []string, sh *shape, s *openapi.Schema, what string) {
	have := map[string]bool{}
	for _, k := range keys {
		have[k] = true
	}
	for _, r := range s.Required {
		if !have[r] {
			c.errorf(sh.Range, "Missing field", "%s needs the field %q (the document's schema requires it).", what, r)
		}
	}
	if len(s.Properties) == 0 || s.AdditionalSchema != nil ||
		s.AdditionalProperties != nil && *s.AdditionalProperties {
		return
	}
	declared := naming.NamesSorted(s.Properties)
	for _, k := range keys {
		if s.Properties[k] == nil {
			c.errorf(sh.key(k), "Unknown field", "The document's schema of %s has no field %q.%s Its fields are: %s.",
				what, k, naming.DidYouMean(k, declared), strings.Join(declared, ", "))
		}
	}
}

func (c *compiler) wrongType(sh *shape, s *openapi.Schema, what, got string) {
	c.errorf(sh.Range, "Incorrect value type", "%s must be %s (the document's schema), but this value is a %s.", what, schemaTypeName(s), got)
}

// inEnum reports whether x (decoded JSON) is one of the enum's values.
func inEnum(x any, enum []any) bool {
	for _, e := range enum {
		if reflect.DeepEqual(normJSON(e), x) {
			return true
		}
	}
	return false
}

// normJSON turns a value of the document into decoded JSON's Go types.
func normJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return v
	}
	return x
}

func jsonText(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// hasHeader reports whether a headers value sets the header name (any
// case); a headers value that is one template may set any.
func hasHeader(v *graph.Value, name string) bool {
	if v == nil {
		return false
	}
	var keys []string
	switch {
	case v.Object != nil:
		keys = naming.NamesSorted(v.Object)
	case v.Lit != nil:
		var m map[string]json.RawMessage
		_ = json.Unmarshal(v.Lit, &m)
		keys = naming.NamesSorted(m)
	default:
		return true
	}
	for _, k := range keys {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}
