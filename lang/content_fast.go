package lang

import (
	"reflect"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// fastContent is body.Content(schema) for the common case, a body fresh out
// of the parser that holds only what the schema allows, with every
// required argument and every block's labels: the same content, built
// without the maps hclsyntax makes on every call (one entry per block type
// of the schema, twice), which a long file of steps pays once a step. ok
// is false for anything else (a body of another syntax, one hidden by an
// earlier PartialContent, any item that Content would report): the caller
// then asks Content, which gives the diagnostics.
func fastContent(body hcl.Body, schema *hcl.BodySchema) (*hcl.BodyContent, bool) {
	b, isSyntax := body.(*hclsyntax.Body)
	if !isSyntax || b == nil || !freshBody(b) {
		return nil, false
	}
	for _, a := range schema.Attributes {
		if _, exists := b.Attributes[a.Name]; a.Required && !exists {
			return nil, false
		}
	}
	attrs := make(hcl.Attributes, len(b.Attributes))
	for name, a := range b.Attributes {
		if !schemaHasAttr(schema, name) {
			return nil, false
		}
		attrs[name] = a.AsHCLAttribute()
	}
	var blocks hcl.Blocks
	for _, blk := range b.Blocks {
		s, wanted := schemaBlock(schema, blk.Type)
		if !wanted || len(blk.Labels) != len(s.LabelNames) {
			return nil, false
		}
		blocks = append(blocks, blk.AsHCLBlock())
	}
	return &hcl.BodyContent{Attributes: attrs, Blocks: blocks, MissingItemRange: b.MissingItemRange()}, true
}

// freshBody reports whether b hides nothing: PartialContent returns bodies
// that hide what it took, which only Content knows how to honour.
func freshBody(b *hclsyntax.Body) bool {
	v := reflect.ValueOf(b).Elem()
	for _, name := range []string{"hiddenAttrs", "hiddenBlocks"} {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Map || !f.IsNil() {
			return false
		}
	}
	return true
}

func schemaHasAttr(schema *hcl.BodySchema, name string) bool {
	for _, a := range schema.Attributes {
		if a.Name == name {
			return true
		}
	}
	return false
}

func schemaBlock(schema *hcl.BodySchema, typ string) (hcl.BlockHeaderSchema, bool) {
	for _, s := range schema.Blocks {
		if s.Type == typ {
			return s, true
		}
	}
	return hcl.BlockHeaderSchema{}, false
}
