package openapi

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/flowrun/flowrun/lang/naming"
	"go.yaml.in/yaml/v3"
)

// The keywords of a schema: OpenAPI 3.0's schema object, and what 3.1's
// JSON Schema 2020-12 adds. A 3.1 schema may also hold keywords neither
// lists (JSON Schema ignores them).
// loadFields fills them, with the other field tables.
var schemaFields, schema31, schemaFields31 map[string]kind

// loadSchemaFields fills the schema keyword tables.
func loadSchemaFields() {
	schemaFields = map[string]kind{"title": kString, "multipleOf": kNumber, "maximum": kNumber,
		"exclusiveMaximum": kBool, "minimum": kNumber, "exclusiveMinimum": kBool, "maxLength": kCount,
		"minLength": kCount, "pattern": kString, "maxItems": kCount, "minItems": kCount,
		"uniqueItems": kBool, "maxProperties": kCount, "minProperties": kCount, "required": kList,
		"enum": kList, "type": kTypes, "allOf": kList, "oneOf": kList, "anyOf": kList, "not": kSchema,
		"items": kSchema, "properties": kObject, "additionalProperties": kBoolOrSchema,
		"description": kString, "format": kString, "default": kAny, "nullable": kBool,
		"discriminator": kObject, "readOnly": kBool, "writeOnly": kBool, "xml": kObject,
		"externalDocs": kObject, "example": kAny, "deprecated": kBool}
	schema31 = map[string]kind{"const": kAny, "examples": kList, "prefixItems": kList,
		"contains": kSchema, "minContains": kCount, "maxContains": kCount, "patternProperties": kObject,
		"dependentSchemas": kObject, "propertyNames": kSchema, "unevaluatedItems": kSchema,
		"unevaluatedProperties": kSchema, "if": kSchema, "then": kSchema, "else": kSchema,
		"dependentRequired": kObject, "$defs": kObject, "$schema": kString, "$comment": kString,
		"$id": kString, "$anchor": kString, "$dynamicRef": kString, "$dynamicAnchor": kString,
		"contentMediaType": kString, "contentEncoding": kString, "contentSchema": kSchema,
		"$vocabulary": kObject, "$ref": kString,
		// 3.1 bounds are numbers; 3.0's are booleans beside minimum and maximum.
		"exclusiveMaximum": kNumber, "exclusiveMinimum": kNumber}
	schemaFields31 = merge(schemaFields, schema31)
}

// typeNames are the type names of a schema (and "null", in 3.1).
var typeNames = []string{"array", "boolean", "integer", "number", "object", "string"}

// merge returns the fields of a and of b in one map (b's kind where both
// have a field).
func merge(a, b map[string]kind) map[string]kind {
	out := make(map[string]kind, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// schema returns the schema at n (or the one its $ref names), made now and
// filled in later by fillSchemas.
func (p *parser) schema(n *yaml.Node, path string) *Schema {
	n = p.deref(n)
	p.checkKind(n, path, kSchema)
	n, path = p.ref(n, path)
	if s, ok := p.schemas[n]; ok {
		return s
	}
	p.checkKind(n, path, kSchema) // what a reference names
	s := &Schema{}
	p.schemas[n] = s
	p.queue = append(p.queue, queued{n: n, path: path, s: s})
	return s
}

// fillSchemas fills in the schemas made, and those they contain, one
// after another.
func (p *parser) fillSchemas() {
	for i := 0; i < len(p.queue); i++ {
		p.fill(p.queue[i])
		p.queue[i] = queued{}
	}
	p.queue = nil
}

// fill reads the keywords of one schema.
func (p *parser) fill(q queued) {
	n, path, s := q.n, q.path, q.s
	if n.Kind == yaml.ScalarNode { // a boolean schema (3.1): true, any value; false, none
		return
	}
	known := schemaFields
	if p.v31 {
		known = schemaFields31
	}
	fs := p.fields(n, path, "a schema", known, p.v31)
	if f, ok := fs["type"]; ok {
		s.Type = p.types(f.v, join(path, "type"))
	}
	s.Format = str(fs, "format")
	s.Nullable = flag(fs, "nullable")
	if f, ok := fs["required"]; ok {
		seen := map[string]bool{}
		for i, c := range f.v.Content {
			c = p.deref(c)
			at := indexPath(join(path, "required"), i)
			p.checkKind(c, at, kString)
			if seen[c.Value] {
				p.fail(c, at, "the property %q is listed twice", c.Value)
			}
			seen[c.Value] = true
			s.Required = append(s.Required, c.Value)
		}
	}
	if f, ok := fs["enum"]; ok {
		for i, c := range f.v.Content {
			s.Enum = append(s.Enum, p.value(c, indexPath(join(path, "enum"), i), 0))
		}
	}
	if f, ok := fs["items"]; ok {
		s.Items = p.schema(f.v, join(path, "items"))
	} else if !p.v31 && s.Is("array") {
		p.fail(n, path, "a schema of type array needs items, like items: {type: string}")
	}
	if f, ok := fs["properties"]; ok {
		s.Properties = p.schemaMap(f.v, join(path, "properties"))
	}
	if f, ok := fs["additionalProperties"]; ok {
		if f.v.Kind == yaml.ScalarNode {
			b := isTrue(f.v)
			s.AdditionalProperties = &b
		} else {
			s.AdditionalSchema = p.schema(f.v, join(path, "additionalProperties"))
		}
	}
	s.AllOf = p.schemaList(fs, path, "allOf")
	s.OneOf = p.schemaList(fs, path, "oneOf")
	s.AnyOf = p.schemaList(fs, path, "anyOf")
	// The other schemas a schema holds are checked, not kept.
	for _, key := range []string{"not", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "if", "then", "else", "contentSchema"} {
		if f, ok := fs[key]; ok {
			p.schema(f.v, join(path, key))
		}
	}
	if p.v31 {
		p.schemaList(fs, path, "prefixItems")
		for _, key := range []string{"patternProperties", "dependentSchemas", "$defs"} {
			if f, ok := fs[key]; ok {
				p.schemaMap(f.v, join(path, key))
			}
		}
	}
}

// types reads a schema's type: one name, or in 3.1 a list of them.
func (p *parser) types(n *yaml.Node, path string) []string {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	out := make([]string, 0, len(items))
	for i, c := range items {
		at := path
		if n.Kind == yaml.SequenceNode {
			at = indexPath(path, i)
			c = p.deref(c)
			p.checkKind(c, at, kString)
		}
		t := c.Value
		valid := t == "null" && p.v31
		for _, name := range typeNames {
			valid = valid || t == name
		}
		if !valid {
			if t == "null" {
				p.fail(c, at, "the type null is OpenAPI 3.1's; in a 3.0 document, write nullable: true")
			}
			hint := ""
			if near := naming.NearestName(t, typeNames); near != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", near)
			}
			names := strings.Join(typeNames, ", ")
			if p.v31 {
				names += ", null"
			}
			p.fail(c, at, "%s is not a type%s; a schema's type is one of %s", quoteShort(t), hint, names)
		}
		for _, o := range out {
			if o == t {
				p.fail(c, at, "the type %q is listed twice", t)
			}
		}
		out = append(out, t)
	}
	return out
}

// schemaMap reads an object of named schemas.
func (p *parser) schemaMap(n *yaml.Node, path string) map[string]*Schema {
	out := map[string]*Schema{}
	for _, f := range p.pairs(n, path) {
		if f.null {
			p.fail(f.kn, join(path, f.key), "%q needs a schema", f.key)
		}
		out[f.key] = p.schema(f.v, join(path, f.key))
	}
	return out
}

// schemaList reads the list of schemas of the field key, if the schema
// has it.
func (p *parser) schemaList(fs map[string]pair, path, key string) []*Schema {
	f, ok := fs[key]
	if !ok {
		return nil
	}
	out := make([]*Schema, 0, len(f.v.Content))
	for i, c := range f.v.Content {
		out = append(out, p.schema(c, indexPath(join(path, key), i)))
	}
	return out
}

// value decodes a value of the document as decoded JSON: nil, bool,
// float64, string, []any or map[string]any.
func (p *parser) value(n *yaml.Node, path string, depth int) any {
	n = p.deref(n)
	p.tick()
	if depth > maxDepth {
		p.fail(n, path, "the value nests more than %d deep", maxDepth)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			out = append(out, p.value(c, indexPath(path, i), depth+1))
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for _, f := range p.pairs(n, path) {
			out[f.key] = p.value(f.v, join(path, f.key), depth+1)
		}
		return out
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		return isTrue(n)
	case "!!int", "!!float":
		var x any
		if n.Decode(&x) == nil {
			switch v := x.(type) {
			case int:
				return float64(v)
			case int64:
				return float64(v)
			case uint64:
				return float64(v)
			case float64:
				return v
			}
		}
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
		return math.NaN()
	}
	return n.Value
}
