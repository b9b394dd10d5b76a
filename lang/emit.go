package lang

// The emit action (language.md §8.11): a CloudEvent sent over HTTP. Like
// openapi it is a declaration kind only: it compiles to an http action
// whose Emit says which event to build; the engine gives the event its id
// and time when it sends it.

import (
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// kindEmit is the emit action block's type.
const kindEmit = "emit"

// emitDecl holds an emit block's own attributes; url, headers and expect
// are kept in the httpDecl fields.
type emitDecl struct {
	EventType, Source, Subject, Data *dataNode
	Binary                           bool
}

var emitSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "url", Required: true}, {Name: "type", Required: true}, {Name: "source"}, {Name: "subject"},
	{Name: "data"}, {Name: "mode"}, {Name: "headers"}, {Name: "expect"},
}}

// emitOutputType is an emit step's output: the response, as an http
// step's, and the event sent.
var emitOutputType = graph.ObjectOf(map[string]*graph.Type{
	"status": graph.TypeInt, "headers": graph.MapOf(graph.TypeString), "body": graph.TypeAny,
	"event": graph.ObjectOf(map[string]*graph.Type{
		"specversion": graph.TypeString, "id": graph.TypeString, "source": graph.TypeString, "type": graph.TypeString,
		"subject": graph.TypeString, "time": graph.TypeString, "datacontenttype": graph.TypeString, "data": graph.TypeAny,
	}),
})

// decodeEmitBlock decodes emit { url, type, source, subject, data, mode,
// headers, expect }.
func decodeEmitBlock(block *hcl.Block, act *actionDecl, path string, sm *SourceMap, data func(hcl.Attributes, string) *dataNode) hcl.Diagnostics {
	c, diags := content(block.Body, emitSchema)
	sm.addAttrs(path, c.Attributes)
	act.Method = "POST"
	act.URL = data(c.Attributes, "url")
	act.Headers = data(c.Attributes, "headers")
	act.EventType = data(c.Attributes, "type")
	act.Source = data(c.Attributes, "source")
	act.Subject = data(c.Attributes, "subject")
	act.Data = data(c.Attributes, "data")
	if a := c.Attributes["mode"]; a != nil {
		v, d := literalEnum(a, "structured", "binary")
		diags = append(diags, d...)
		act.Binary = v == "binary"
	}
	return append(diags, decodeHTTPLiterals(c.Attributes, act)...)
}

// buildEmit compiles an emit block to an http POST carrying the event.
// The source defaults to flowrun/WORKFLOW.
func (c *compiler) buildEmit(a *actionDecl, scope *scoper) (graph.Action, *graph.Type) {
	h := &graph.HTTPAction{Method: "POST", Expect: a.Expect}
	h.URL = c.checkData(a.URL, scope)
	c.wantText(h.URL, a.URL, "url")
	c.checkURL(h.URL, a.URL)
	h.Headers = c.checkData(a.Headers, scope)
	c.wantTextMap(h.Headers, a.Headers, "headers")
	e := &graph.EmitSpec{Binary: a.Binary}
	e.Type = c.checkData(a.EventType, scope)
	c.wantText(e.Type, a.EventType, "type")
	e.Source = c.checkData(a.Source, scope)
	c.wantText(e.Source, a.Source, "source")
	if e.Source == nil {
		e.Source = &graph.Value{Lit: literalJSON("flowrun/" + c.w.Name), Type: graph.TypeString}
	}
	e.Subject = c.checkData(a.Subject, scope)
	c.wantText(e.Subject, a.Subject, "subject")
	e.Data = c.checkData(a.Data, scope)
	h.Emit = e
	return graph.Action{Kind: graph.KindHTTP, HTTP: h}, emitOutputType
}
