package lang

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// This file decodes the openapi action block (language.md §8.10). The
// block is compiled to an http action (openapi_compile.go); its decoded
// attributes are kept in the httpDecl fields an http block uses (URL for
// server, Headers, Body, Expect) and in openapiDecl.

// kindOpenAPI is the openapi action block's type. It is a declaration kind
// only: the compiled step's action is an http action.
const kindOpenAPI = "openapi"

// openapiDecl holds an openapi block's own attributes.
type openapiDecl struct {
	Document      string
	DocumentRange hcl.Range // the document attribute's value
	Operation     string
	OperationRng  hcl.Range // the operation attribute's value
	// Params is the parameters attribute's value, and ParamShape its
	// shape (the key and value ranges of each parameter).
	Params     *dataNode
	ParamShape *shape
	// BodyShape is the body attribute's shape.
	BodyShape *shape
	// ServerRange is the server attribute's name, for messages about a
	// document without a usable server.
	HasServer bool
}

// shape records where the keys and values of a data attribute are, even
// once decodeData has folded a literal object into one value: the
// positions of the compile-time checks against a schema.
type shape struct {
	Range hcl.Range
	Keys  map[string]hcl.Range // an object's key ranges
	Items map[string]*shape    // an object's values
	List  []*shape             // a list's elements
}

// shapeOf records the shape of a data expression.
func shapeOf(x hcl.Expression) *shape {
	s := &shape{Range: x.Range()}
	switch e := x.(type) {
	case *hclsyntax.ParenthesesExpr:
		return shapeOf(e.Expression)
	case *hclsyntax.TupleConsExpr:
		for _, ee := range e.Exprs {
			s.List = append(s.List, shapeOf(ee))
		}
	case *hclsyntax.ObjectConsExpr:
		s.Keys, s.Items = map[string]hcl.Range{}, map[string]*shape{}
		for _, item := range e.Items {
			key, d := objectKey(item.KeyExpr)
			if d.HasErrors() {
				continue
			}
			if _, dup := s.Keys[key]; dup {
				continue
			}
			s.Keys[key] = item.KeyExpr.Range()
			s.Items[key] = shapeOf(item.ValueExpr)
		}
	}
	return s
}

// item returns the shape of an object's value key, or a shape at s.
func (s *shape) item(key string) *shape {
	if s != nil && s.Items[key] != nil {
		return s.Items[key]
	}
	return s.orAt(hcl.Range{})
}

// elem returns the shape of a list's i-th element, or a shape at s.
func (s *shape) elem(i int) *shape {
	if s != nil && i < len(s.List) {
		return s.List[i]
	}
	return s.orAt(hcl.Range{})
}

// key returns the range of an object's key, or s's range.
func (s *shape) key(k string) hcl.Range {
	if s != nil {
		if r, ok := s.Keys[k]; ok {
			return r
		}
		return s.Range
	}
	return hcl.Range{}
}

// orAt returns a shape without parts at s's range (rng when s is nil).
func (s *shape) orAt(rng hcl.Range) *shape {
	if s != nil {
		return &shape{Range: s.Range}
	}
	return &shape{Range: rng}
}

var openapiSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "document", Required: true}, {Name: "operation", Required: true}, {Name: "server"},
	{Name: "parameters"}, {Name: "body"}, {Name: "headers"}, {Name: "expect"}, {Name: "follow_redirects"},
}}

// decodeOpenAPIBlock decodes an openapi block's attributes into act.
func decodeOpenAPIBlock(block *hcl.Block, act *actionDecl, path string, sm *SourceMap) hcl.Diagnostics {
	c, diags := content(block.Body, openapiSchema)
	sm.addAttrs(path, c.Attributes)
	data := func(name string) *dataNode {
		a := c.Attributes[name]
		if a == nil {
			return nil
		}
		v, d := decodeData(a.Expr)
		diags = append(diags, d...)
		return v
	}
	o := &openapiDecl{}
	act.OpenAPI = o
	if a := c.Attributes["document"]; a != nil {
		s, d := literalString(a)
		diags = append(diags, d...)
		o.Document, o.DocumentRange = s, a.Expr.Range()
	}
	if a := c.Attributes["operation"]; a != nil {
		s, d := literalString(a)
		diags = append(diags, d...)
		o.Operation, o.OperationRng = s, a.Expr.Range()
	}
	if a := c.Attributes["server"]; a != nil {
		o.HasServer = true
		act.URL = data("server")
	}
	if a := c.Attributes["parameters"]; a != nil {
		o.Params = data("parameters")
		o.ParamShape = shapeOf(a.Expr)
		if _, ok := a.Expr.(*hclsyntax.ObjectConsExpr); !ok && o.Params != nil {
			diags = append(diags, errAt(a.Expr.Range(), "Incorrect value type",
				"parameters names each parameter of the operation with its value, like parameters = { petId = \"{{ input.id }}\" }."))
			o.Params = nil
		}
	}
	if a := c.Attributes["body"]; a != nil {
		act.Body = data("body")
		o.BodyShape = shapeOf(a.Expr)
	}
	act.Headers = data("headers")
	return append(diags, decodeHTTPLiterals(c.Attributes, act)...)
}
