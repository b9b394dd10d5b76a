package openapi

import (
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// The fields of each object Parse reads, with their kinds (OpenAPI 3.0;
// 3.1 adds the fields of the *31 maps).
// They are filled once, at the first Parse (fieldsOnce): built when the
// program starts, they would cost every flowrun command, and most read no
// OpenAPI document.
var (
	documentFields, document31, infoFields, info31      map[string]kind
	serverFields, variableFields, pathItemFields        map[string]kind
	operationFields, parameterFields, requestBodyFields map[string]kind
	responseFields, mediaTypeFields                     map[string]kind
	componentsFields, components31                      map[string]kind
	fieldsOnce                                          sync.Once
)

// loadFields fills the field tables of the objects and of a schema.
func loadFields() {
	loadSchemaFields()
	documentFields = map[string]kind{"openapi": kString, "info": kObject, "servers": kList, "paths": kObject,
		"components": kObject, "security": kList, "tags": kList, "externalDocs": kObject}
	document31 = map[string]kind{"webhooks": kObject, "jsonSchemaDialect": kString}
	infoFields = map[string]kind{"title": kString, "description": kString, "termsOfService": kString,
		"contact": kObject, "license": kObject, "version": kString}
	info31 = map[string]kind{"summary": kString}
	serverFields = map[string]kind{"url": kString, "description": kString, "variables": kObject}
	variableFields = map[string]kind{"enum": kList, "default": kString, "description": kString}
	pathItemFields = map[string]kind{"$ref": kString, "summary": kString, "description": kString,
		"get": kObject, "put": kObject, "post": kObject, "delete": kObject, "options": kObject,
		"head": kObject, "patch": kObject, "trace": kObject, "servers": kList, "parameters": kList}
	operationFields = map[string]kind{"tags": kList, "summary": kString, "description": kString,
		"externalDocs": kObject, "operationId": kString, "parameters": kList, "requestBody": kObject,
		"responses": kObject, "callbacks": kObject, "deprecated": kBool, "security": kList, "servers": kList}
	parameterFields = map[string]kind{"name": kString, "in": kString, "description": kString,
		"required": kBool, "deprecated": kBool, "allowEmptyValue": kBool, "style": kString,
		"explode": kBool, "allowReserved": kBool, "schema": kSchema, "example": kAny,
		"examples": kObject, "content": kObject}
	requestBodyFields = map[string]kind{"description": kString, "content": kObject, "required": kBool}
	responseFields = map[string]kind{"description": kString, "headers": kObject, "content": kObject, "links": kObject}
	mediaTypeFields = map[string]kind{"schema": kSchema, "example": kAny, "examples": kObject, "encoding": kObject}
	componentsFields = map[string]kind{"schemas": kObject, "responses": kObject, "parameters": kObject,
		"examples": kObject, "requestBodies": kObject, "headers": kObject, "securitySchemes": kObject,
		"links": kObject, "callbacks": kObject}
	components31 = map[string]kind{"pathItems": kObject}
}

// componentName says whether s may name a component: letters, digits,
// '.', '-' and '_'.
func componentName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// methods are the operations of a path item, in their order.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// with is known plus the 3.1 fields, in a 3.1 document.
func (p *parser) with(known, more map[string]kind) map[string]kind {
	if !p.v31 {
		return known
	}
	return merge(known, more)
}

// document reads the whole document.
func (p *parser) document(root *yaml.Node) *Document {
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	p.root = root
	n := p.deref(root)
	if n.Kind == 0 || isNull(n) {
		p.fail(nil, "", "the document is empty")
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "", "the document must be an object with the fields openapi, info and paths, not %s", describe(n))
	}
	// The version decides which fields there are.
	var version pair
	for _, f := range p.pairs(n, "") {
		switch f.key {
		case "openapi":
			version = f
		case "swagger":
			p.fail(f.kn, "swagger", "this is a Swagger 2.0 document; flowrun reads OpenAPI 3.0 and 3.1 documents: convert it to OpenAPI 3")
		}
	}
	if version.v == nil || version.null {
		p.fail(n, "openapi", "the document does not say its OpenAPI version: add it, like openapi: 3.0.3")
	}
	if version.v.Kind != yaml.ScalarNode || version.v.Tag != "!!str" && !readableVersion(version.v.Value) {
		p.fail(version.v, "openapi", "must be a string, like \"3.0.3\", not %s", describe(version.v))
	}
	if v := version.v.Value; !readableVersion(v) {
		if v == "3.0" || v == "3.1" {
			p.fail(version.v, "openapi", "the version is major.minor.patch: write it in full, like \"%s.0\"", v)
		}
		p.fail(version.v, "openapi", "flowrun reads OpenAPI 3.0.x and 3.1.x documents, not %s", quoteShort(v))
	}
	p.v31 = strings.HasPrefix(version.v.Value, "3.1.")
	fs := p.fields(n, "", "the document", p.with(documentFields, document31), false)
	doc := &Document{Version: version.v.Value}

	info, ok := fs["info"]
	if !ok {
		p.fail(n, "info", "the document has no info: add one, like info: {title: Pets, version: \"1.0\"}")
	}
	p.info(info.v, "info")
	if f, ok := fs["servers"]; ok {
		for i, s := range f.v.Content {
			doc.Servers = append(doc.Servers, p.server(p.deref(s), indexPath("servers", i)))
		}
	}
	// Components first, so a mistake in one is reported where it is
	// written, not where it is first referenced.
	if f, ok := fs["components"]; ok {
		p.components(f.v, "components")
	}
	if f, ok := fs["paths"]; ok {
		doc.Paths = p.paths(f.v, "paths")
	} else if !p.v31 {
		p.fail(n, "paths", "the document has no paths: add them, like paths: {/pets: {get: ...}}")
	}
	if f, ok := fs["webhooks"]; ok {
		for _, w := range p.pairs(f.v, "webhooks") {
			if !w.null {
				p.pathItem(w.v, join("webhooks", w.key))
			}
		}
	}
	p.fillSchemas()
	p.checkOperationIDs(doc)
	return doc
}

func (p *parser) info(n *yaml.Node, path string) {
	fs := p.fields(n, path, "info", p.with(infoFields, info31), false)
	for _, k := range []string{"title", "version"} {
		if str(fs, k) == "" {
			p.fail(n, join(path, k), "info has no %s: add it, like %s: %s", k, k, map[string]string{"title": "Pets", "version": "\"1.0\""}[k])
		}
	}
}

// server reads a server and checks its URL's variables.
func (p *parser) server(n *yaml.Node, path string) *Server {
	fs := p.fields(n, path, "a server", serverFields, false)
	s := &Server{URL: str(fs, "url"), Variables: map[string]*ServerVariable{}}
	if s.URL == "" {
		p.fail(n, join(path, "url"), "a server needs a url, like url: https://api.example.com/v1")
	}
	if strings.Count(s.URL, "{") != strings.Count(s.URL, "}") {
		p.fail(fs["url"].v, join(path, "url"), "the braces of %s do not pair up", quoteShort(s.URL))
	}
	if f, ok := fs["variables"]; ok {
		for _, v := range p.pairs(f.v, join(path, "variables")) {
			vpath := join(join(path, "variables"), v.key)
			if v.null {
				p.fail(v.kn, vpath, "a server variable needs a default")
			}
			vfs := p.fields(v.v, vpath, "a server variable", variableFields, false)
			sv := &ServerVariable{Default: str(vfs, "default")}
			if sv.Default == "" {
				p.fail(v.v, join(vpath, "default"), "a server variable needs a default, like default: v1")
			}
			if e, ok := vfs["enum"]; ok {
				for i, x := range e.v.Content {
					x = p.deref(x)
					p.checkKind(x, indexPath(join(vpath, "enum"), i), kString)
					sv.Enum = append(sv.Enum, x.Value)
				}
			}
			if !strings.Contains(s.URL, "{"+v.key+"}") {
				p.fail(v.kn, vpath, "the server URL %s does not use the variable {%s}", quoteShort(s.URL), v.key)
			}
			s.Variables[v.key] = sv
		}
	}
	for _, name := range templateNames(s.URL) {
		if s.Variables[name] == nil {
			p.fail(fs["url"].v, join(path, "url"), "the server URL uses the variable {%s}, which its variables do not declare", name)
		}
	}
	return s
}

// templateNames lists the names in braces of a URL or path template.
func templateNames(t string) []string {
	var out []string
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, t[i+1:i+j])
		t = t[i+j+1:]
	}
}

// components reads every component flowrun's model holds, so that each
// is checked whether or not an operation uses it.
func (p *parser) components(n *yaml.Node, path string) {
	fs := p.fields(n, path, "components", p.with(componentsFields, components31), false)
	for _, f := range p.pairs(n, path) {
		if _, ok := fs[f.key]; !ok {
			continue // an extension, or null
		}
		for _, c := range p.pairs(f.v, join(path, f.key)) {
			if !componentName(c.key) {
				p.fail(c.kn, join(join(path, f.key), c.key), "%s is not a component name: a name holds only letters, digits, '.', '-' and '_'", quoteShort(c.key))
			}
		}
	}
	each := func(key string, read func(*yaml.Node, string)) {
		f, ok := fs[key]
		if !ok {
			return
		}
		for _, c := range p.pairs(f.v, join(path, key)) {
			if !c.null {
				read(c.v, join(join(path, key), c.key))
			}
		}
	}
	each("schemas", func(n *yaml.Node, path string) { p.schema(n, path) })
	each("parameters", func(n *yaml.Node, path string) { p.parameter(n, path) })
	each("requestBodies", func(n *yaml.Node, path string) { p.requestBody(n, path) })
	each("responses", func(n *yaml.Node, path string) { p.response(n, path) })
	each("pathItems", func(n *yaml.Node, path string) { p.pathItem(n, path) })
}

// paths reads the paths, and checks each operation's path parameters
// against its path.
func (p *parser) paths(n *yaml.Node, path string) []*Path {
	var out []*Path
	shapes := map[string]string{} // a template with its names blanked: its first path
	for _, f := range p.pairs(n, path) {
		if strings.HasPrefix(f.key, "x-") {
			continue
		}
		at := join(path, f.key)
		if !strings.HasPrefix(f.key, "/") {
			p.fail(f.kn, at, "a path must start with /, like /%s", strings.TrimLeft(f.key, "/"))
		}
		shape := blankNames(f.key)
		if first, ok := shapes[shape]; ok {
			p.fail(f.kn, at, "the path %s is the same as %s but for its parameters' names, so a request cannot tell them apart", f.key, first)
		}
		shapes[shape] = f.key
		item := &PathItem{}
		if !f.null {
			item = p.pathItem(f.v, at)
		}
		p.checkPathParams(f.key, item, at, f.kn)
		out = append(out, &Path{Template: f.key, Item: item})
	}
	return out
}

// blankNames replaces the names in a path template's braces with nothing.
func blankNames(t string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		j := strings.IndexByte(t[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(t)
			return b.String()
		}
		b.WriteString(t[:i+1])
		t = t[i+j:]
	}
}

// checkPathParams checks that each operation of item declares a path
// parameter for each name in the template, and no other.
func (p *parser) checkPathParams(template string, item *PathItem, path string, kn *yaml.Node) {
	names := templateNames(template)
	inTemplate := map[string]bool{}
	for _, n := range names {
		inTemplate[n] = true
	}
	for _, op := range item.Operations {
		declared := map[string]bool{}
		for _, ps := range [][]*Parameter{item.Parameters, op.Parameters} {
			for _, prm := range ps {
				if prm.In == InPath {
					declared[prm.Name] = true
				}
			}
		}
		at := join(path, strings.ToLower(op.Method))
		for _, n := range names {
			if !declared[n] {
				p.fail(kn, at, "the path has the parameter {%s}, but the operation declares no parameter %q in path: add one, like {name: %s, in: path, required: true, schema: {type: string}}", n, n, n)
			}
		}
		var extra []string
		for n := range declared {
			if !inTemplate[n] {
				extra = append(extra, n)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			p.fail(kn, at, "the operation declares the parameter %q in path, but the path %s has no {%s}", extra[0], template, extra[0])
		}
	}
}

// pathItem reads a path item, or the one its $ref names.
func (p *parser) pathItem(n *yaml.Node, path string) *PathItem {
	n, path = p.ref(n, path)
	if it, ok := p.items[n]; ok {
		if it == nil {
			p.fail(n, path, "this path item contains a reference to itself")
		}
		return it
	}
	p.items[n] = nil // being read
	fs := p.fields(n, path, "a path item", pathItemFields, false)
	item := &PathItem{}
	if f, ok := fs["parameters"]; ok {
		item.Parameters = p.parameters(f.v, join(path, "parameters"))
	}
	for _, m := range methods {
		if f, ok := fs[m]; ok {
			item.Operations = append(item.Operations, p.operation(f.v, join(path, m), m))
		}
	}
	p.items[n] = item
	return item
}

// operation reads an operation.
func (p *parser) operation(n *yaml.Node, path, method string) *Operation {
	fs := p.fields(n, path, "an operation", operationFields, false)
	op := &Operation{Method: strings.ToUpper(method), OperationID: str(fs, "operationId")}
	if f, ok := fs["operationId"]; ok {
		p.opIDNodes[op] = f.v
	}
	if f, ok := fs["parameters"]; ok {
		op.Parameters = p.parameters(f.v, join(path, "parameters"))
	}
	if f, ok := fs["requestBody"]; ok {
		op.RequestBody = p.requestBody(f.v, join(path, "requestBody"))
	}
	f, ok := fs["responses"]
	switch {
	case ok:
		op.Responses = map[string]*Response{}
		rpath := join(path, "responses")
		for _, r := range p.pairs(f.v, rpath) {
			if strings.HasPrefix(r.key, "x-") {
				continue
			}
			at := join(rpath, r.key)
			if !isResponseKey(r.key) {
				p.fail(r.kn, at, "a response is keyed by its status code, like \"200\" or \"2XX\", or is default, not %s", quoteShort(r.key))
			}
			if r.null {
				p.fail(r.kn, at, "a response needs a description")
			}
			op.Responses[r.key] = p.response(r.v, at)
		}
		if len(op.Responses) == 0 {
			p.fail(f.v, rpath, "an operation needs at least one response, like \"200\": {description: OK}")
		}
	case !p.v31:
		p.fail(n, join(path, "responses"), "an operation needs its responses, like responses: {\"200\": {description: OK}}")
	}
	return op
}

// isResponseKey reports whether key names a response: a status code from
// 100 to 599, a range like 2XX, or default.
func isResponseKey(key string) bool {
	if key == "default" {
		return true
	}
	if len(key) != 3 || key[0] < '1' || key[0] > '5' {
		return false
	}
	if key[1:] == "XX" || key[1:] == "xx" {
		return true
	}
	return key[1] >= '0' && key[1] <= '9' && key[2] >= '0' && key[2] <= '9'
}

// parameters reads a list of parameters; two of the same name and place
// are a mistake.
func (p *parser) parameters(n *yaml.Node, path string) []*Parameter {
	var out []*Parameter
	seen := map[string]bool{}
	for i, c := range n.Content {
		at := indexPath(path, i)
		c = p.deref(c)
		prm := p.parameter(c, at)
		key := prm.In + " " + prm.Name
		if seen[key] {
			p.fail(c, at, "the parameter %q in %s is declared twice", prm.Name, prm.In)
		}
		seen[key] = true
		out = append(out, prm)
	}
	return out
}

// parameter reads a parameter, or the one its $ref names.
func (p *parser) parameter(n *yaml.Node, path string) *Parameter {
	n, path = p.ref(n, path)
	if prm, ok := p.params[n]; ok {
		return prm
	}
	fs := p.fields(n, path, "a parameter", parameterFields, false)
	prm := &Parameter{Name: str(fs, "name"), In: str(fs, "in"), Required: flag(fs, "required")}
	if prm.Name == "" {
		p.fail(n, join(path, "name"), "a parameter needs a name")
	}
	switch prm.In {
	case InPath, InQuery, InHeader, InCookie:
	case "":
		p.fail(n, join(path, "in"), "the parameter %q does not say where it is sent: add in: path, query, header or cookie", prm.Name)
	default:
		p.fail(fs["in"].v, join(path, "in"), "a parameter is in path, query, header or cookie, not %s", quoteShort(prm.In))
	}
	if prm.In == InPath && !prm.Required {
		p.fail(n, path, "the path parameter %q must say required: true (a path parameter is always sent)", prm.Name)
	}
	s, hasSchema := fs["schema"]
	c, hasContent := fs["content"]
	switch {
	case hasSchema == hasContent:
		p.fail(n, path, "the parameter %q needs exactly one of schema and content", prm.Name)
	case hasSchema:
		prm.Schema = p.schema(s.v, join(path, "schema"))
	default:
		prm.Content = p.content(c.v, join(path, "content"))
		if len(prm.Content) != 1 {
			p.fail(c.v, join(path, "content"), "the content of a parameter has exactly one media type")
		}
	}
	p.params[n] = prm
	return prm
}

// requestBody reads a request body, or the one its $ref names.
func (p *parser) requestBody(n *yaml.Node, path string) *RequestBody {
	n, path = p.ref(n, path)
	if rb, ok := p.bodies[n]; ok {
		return rb
	}
	fs := p.fields(n, path, "a request body", requestBodyFields, false)
	c, ok := fs["content"]
	if !ok {
		p.fail(n, join(path, "content"), "a request body needs its content, like content: {application/json: {schema: {type: object}}}")
	}
	rb := &RequestBody{Required: flag(fs, "required"), Content: p.content(c.v, join(path, "content"))}
	p.bodies[n] = rb
	return rb
}

// response reads a response, or the one its $ref names.
func (p *parser) response(n *yaml.Node, path string) *Response {
	n, path = p.ref(n, path)
	if r, ok := p.responses[n]; ok {
		return r
	}
	fs := p.fields(n, path, "a response", responseFields, false)
	if _, ok := fs["description"]; !ok {
		p.fail(n, join(path, "description"), "a response needs a description, like description: OK")
	}
	r := &Response{}
	if c, ok := fs["content"]; ok {
		r.Content = p.content(c.v, join(path, "content"))
	}
	p.responses[n] = r
	return r
}

// content reads a content map: media types with their schemas.
func (p *parser) content(n *yaml.Node, path string) map[string]*MediaType {
	out := map[string]*MediaType{}
	for _, f := range p.pairs(n, path) {
		at := join(path, f.key)
		mt := &MediaType{}
		if !f.null {
			fs := p.fields(f.v, at, "a media type", mediaTypeFields, false)
			if s, ok := fs["schema"]; ok {
				mt.Schema = p.schema(s.v, join(at, "schema"))
			}
		}
		out[f.key] = mt
	}
	return out
}

// checkOperationIDs checks no two operations share an operationId.
func (p *parser) checkOperationIDs(doc *Document) {
	first := map[string]string{}
	for _, path := range doc.Paths {
		for _, op := range path.Item.Operations {
			if op.OperationID == "" {
				continue
			}
			here := op.Method + " " + path.Template
			if there, ok := first[op.OperationID]; ok {
				p.fail(p.opIDNodes[op], join(join(join("paths", path.Template), strings.ToLower(op.Method)), "operationId"),
					"the operationId %q is also %s's: each operation's must be its own", op.OperationID, there)
			}
			first[op.OperationID] = here
		}
	}
}
