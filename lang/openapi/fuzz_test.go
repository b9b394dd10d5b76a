package openapi

import (
	"errors"
	"testing"
)

// FuzzParse: whatever the bytes, Parse returns a model or an *Error that
// says something, never panics, and a model it returns holds no nil where
// the model promises a value; a recursive schema is walked once.
// testdata/fuzz/FuzzParse holds the corpus the test runs; explore more
// with go test -run X -fuzz FuzzParse ./lang/openapi/.
func FuzzParse(f *testing.F) {
	f.Add(readTestdata(f, "petstore.yaml"))
	f.Add([]byte(`{"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "components": {"schemas": {"N": {"type": ["object", "null"], "properties": {"n": {"$ref": "#/components/schemas/N"}}}}}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		doc, err := Parse(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("error %#v", err)
			}
			return
		}
		checkModel(t, doc)
	})
}

// checkModel walks a parsed document.
func checkModel(t *testing.T, doc *Document) {
	for _, s := range doc.Servers {
		if s == nil || s.URL == "" {
			t.Fatalf("server %+v", s)
		}
		for name, v := range s.Variables {
			if v == nil || v.Default == "" {
				t.Fatalf("server variable %s: %+v", name, v)
			}
		}
	}
	seen := map[*Schema]bool{}
	var schema func(s *Schema)
	schema = func(s *Schema) {
		if s == nil {
			t.Fatal("nil schema")
		}
		if seen[s] {
			return
		}
		seen[s] = true
		for _, x := range s.Properties {
			schema(x)
		}
		for _, l := range [][]*Schema{s.AllOf, s.OneOf, s.AnyOf} {
			for _, x := range l {
				schema(x)
			}
		}
		if s.Items != nil {
			schema(s.Items)
		}
		if s.AdditionalSchema != nil {
			schema(s.AdditionalSchema)
		}
	}
	content := func(c map[string]*MediaType) {
		for _, m := range c {
			if m == nil {
				t.Fatal("nil media type")
			}
			if m.Schema != nil {
				schema(m.Schema)
			}
		}
	}
	params := func(ps []*Parameter) {
		for _, p := range ps {
			if p == nil || p.Name == "" || (p.Schema == nil) == (len(p.Content) == 0) {
				t.Fatalf("parameter %+v", p)
			}
			switch p.In {
			case InPath, InQuery, InHeader, InCookie:
			default:
				t.Fatalf("parameter in %q", p.In)
			}
			if p.Schema != nil {
				schema(p.Schema)
			}
			content(p.Content)
		}
	}
	for _, p := range doc.Paths {
		if p == nil || p.Item == nil || p.Template == "" || p.Template[0] != '/' {
			t.Fatalf("path %+v", p)
		}
		params(p.Item.Parameters)
		for _, op := range p.Item.Operations {
			if op == nil || op.Method == "" {
				t.Fatalf("operation %+v", op)
			}
			params(op.Parameters)
			if op.RequestBody != nil {
				content(op.RequestBody.Content)
			}
			for _, r := range op.Responses {
				if r == nil {
					t.Fatal("nil response")
				}
				content(r.Content)
			}
		}
	}
}
