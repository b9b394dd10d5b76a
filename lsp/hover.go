package lsp

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/expr"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// hover answers textDocument/hover at byte offset off of d (nil: nothing
// to say there).
func (s *server) hover(ctx context.Context, d *document, off int) *Hover {
	if d.body == nil {
		return nil // over the size limit
	}
	site := lang.SiteAt(d.body, d.text.src, off)
	path := site.Types()
	wf := site.Label("workflow")
	g := d.graphOf(wf)
	if site.Attr != nil {
		if len(path) == 1 && path[0] == "workflow" && site.Attr.Name == "version" {
			return d.hoverAt(site.Attr.SrcRange, docOf(path, "version")+"\n\n---\n\n"+s.versionText(ctx, d, wf))
		}
		if site.OnName {
			if doc := docOf(path, site.Attr.Name); doc != "" {
				return d.hoverAt(site.Attr.NameRange, doc)
			}
			return nil
		}
		if len(site.Ref.Parts) > 0 {
			if h := s.hoverRef(d, g, site); h != nil {
				return h
			}
		}
		if site.InCEL {
			return d.hoverExpr(g, site)
		}
		return nil
	}
	if n := len(site.Blocks); n > 0 && site.Blocks[n-1].InHeader {
		b := site.Blocks[n-1].Block
		e := docIndex()[blockKey(path)]
		if e == nil {
			return nil
		}
		text := e.text(b.Type)
		if len(b.Labels) > 0 {
			switch b.Type {
			case "step":
				text = stepText(g, b.Labels[0]) + "\n\n---\n\n" + text
			case "input":
				text = inputText(g, b.Labels[0]) + "\n\n---\n\n" + text
			}
		}
		return d.hoverAt(hcl.RangeBetween(b.TypeRange, b.TypeRange), text)
	}
	return nil
}

// docOf is the documentation of attribute attr of the block at path ("":
// none, as for a set action's fields).
func docOf(path []string, attr string) string {
	e := docIndex()[attrKey(path, attr)]
	if e == nil {
		return ""
	}
	return e.text(attr)
}

func (d *document) hoverAt(r hcl.Range, text string) *Hover {
	rng := d.text.rangeOf(r.Start.Byte, r.End.Byte)
	return &Hover{Contents: MarkupContent{Kind: "markdown", Value: text}, Range: &rng}
}

func (d *document) hoverPart(p lang.RefPart, text string) *Hover {
	rng := d.text.rangeOf(p.Start, p.End)
	return &Hover{Contents: MarkupContent{Kind: "markdown", Value: text}, Range: &rng}
}

// hoverRef describes the reference under the cursor: a function, a step,
// an input, a secret, a breaker, or the type of the chain up to the name
// under the cursor.
func (s *server) hoverRef(d *document, g *graph.Graph, site *lang.Site) *Hover {
	ref := site.Ref
	part := ref.Parts[ref.Cursor]
	names := make([]string, ref.Cursor+1)
	for i := range names {
		names[i] = ref.Parts[i].Name
	}
	if ref.Static {
		if len(names) == 2 && names[0] == "step" {
			return d.hoverPart(part, stepText(g, names[1]))
		}
		if len(names) == 2 && names[0] == "secret" {
			return d.hoverPart(part, secretText(g, names[1]))
		}
		if len(names) == 2 && names[0] == "breaker" {
			return d.hoverPart(part, fmt.Sprintf("breaker **%s** (shared by every run of the workflow)", names[1]))
		}
		return nil
	}
	if part.End < len(d.text.src) && d.text.src[part.End] == '(' {
		// A function: url.raw(...) or x.size().
		for _, name := range []string{strings.Join(names, "."), part.Name} {
			for _, f := range s.funcs {
				if f.Name == name {
					return d.hoverPart(part, functionText(f))
				}
			}
		}
		return nil
	}
	switch {
	case len(names) == 2 && names[0] == "steps":
		return d.hoverPart(part, stepText(g, names[1]))
	case len(names) == 2 && names[0] == "input":
		return d.hoverPart(part, inputText(g, names[1]))
	case len(names) == 2 && names[0] == "secrets":
		return d.hoverPart(part, secretText(g, names[1]))
	}
	if t := chainType(g, site, names); t != nil {
		return d.hoverPart(part, fmt.Sprintf("`%s`: **%s**", strings.Join(names, "."), t))
	}
	return nil
}

// hoverExpr gives the CEL type of the whole expression at site, checked
// in its slot's scope as the compiler checks it.
func (d *document) hoverExpr(g *graph.Graph, site *lang.Site) *Hover {
	scope := lang.ScopeAt(g, site)
	if scope == nil || strings.TrimSpace(site.CEL) == "" {
		return nil
	}
	p, diags := expr.ParseExpr(site.CEL, hcl.Range{})
	if diags.HasErrors() || p == nil {
		return nil
	}
	e, diags := expr.CheckExpr(p, scope, nil)
	if diags.HasErrors() || e == nil {
		return nil
	}
	rng := d.text.rangeOf(site.CELStart, site.CELStart+len(site.CEL))
	return &Hover{Contents: MarkupContent{Kind: "markdown", Value: fmt.Sprintf("expression of type **%s**", e.Type)}, Range: &rng}
}

// stepText describes step name of g: its action and output type.
func stepText(g *graph.Graph, name string) string {
	st := stepOf(g, name)
	if st == nil {
		return fmt.Sprintf("step **%s**", name)
	}
	kind := st.Action.Kind
	if kind == "" {
		kind = "no action"
	}
	text := fmt.Sprintf("step **%s** (%s)\n\noutput: **%s**", name, kind, expr.VisibleOutput(st))
	if st.Foreach != nil {
		text += " (one entry per item)"
	}
	return text
}

// inputText describes input name of g: its type and default.
func inputText(g *graph.Graph, name string) string {
	if g != nil {
		for _, in := range g.Inputs {
			if in.Name != name {
				continue
			}
			def := "none: the input is required"
			if in.Default != nil {
				def = "`" + string(in.Default) + "`"
			}
			return fmt.Sprintf("input **%s**: **%s**\n\ndefault: %s", name, in.Type, def)
		}
	}
	return fmt.Sprintf("input **%s**", name)
}

// secretText describes secret name of g: where its value comes from.
func secretText(g *graph.Graph, name string) string {
	text := fmt.Sprintf("secret **%s**: string, read from the worker's environment when it is used; never stored or printed", name)
	if g != nil {
		for _, s := range g.Secrets {
			if s.Name == name {
				text += fmt.Sprintf("\n\nenvironment variable: `%s`", s.Env)
			}
		}
	}
	return text
}

func functionText(f expr.Function) string {
	var b strings.Builder
	fmt.Fprintf(&b, "function **%s**\n\n```\n%s\n```", f.Name, strings.Join(f.Signatures, "\n"))
	if f.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", f.Description)
	}
	return b.String()
}

// versionText says, for the workflow named wf, what bump the current text
// needs against the newest stored version, with the same rules and diff
// as apply and plan (interp.Engine.CheckVersion, graph.Diff).
func (s *server) versionText(ctx context.Context, d *document, wf string) string {
	var w *lang.Workflow
	if d.mod != nil {
		w = d.mod.Workflow(wf)
	}
	if w == nil || w.Graph == nil {
		return "The workflow has errors: the bump it needs is shown once it compiles."
	}
	g := w.Graph
	eng, err := s.engine(ctx)
	if err != nil {
		return fmt.Sprintf("Cannot read the database %s: %v.", s.opts.Database, err)
	}
	if eng == nil {
		return fmt.Sprintf("No database at %s: version %s would be the first stored version of %q; no bump is needed against nothing.", s.opts.Database, g.Version, wf)
	}
	return versionCheckText(ctx, eng, g)
}

func versionCheckText(ctx context.Context, eng *interp.Engine, g *graph.Graph) string {
	c, err := eng.CheckVersion(ctx, interp.CheckVersionParams{Graph: g})
	if err != nil {
		return fmt.Sprintf("Cannot read the stored versions: %v.", err)
	}
	if c.Newest.Version == "" {
		return fmt.Sprintf("No version of %q is stored: %s would be the first.", g.Workflow, g.Version)
	}
	h, err := graph.Hash(g)
	if err != nil {
		return fmt.Sprintf("Cannot hash the workflow: %v.", err)
	}
	if c.Against.Version == g.Version && c.Against.Hash == h {
		return fmt.Sprintf("Version %s is stored with this graph: applying stores nothing.", g.Version)
	}
	og, err := eng.Graph(ctx, c.Newest.Workflow, c.Newest.Hash)
	if err != nil {
		return fmt.Sprintf("Cannot read stored version %s: %v.", c.Newest.Version, err)
	}
	changes := graph.Diff(og, g)
	required := graph.RequiredBump(changes)
	ov, _ := graph.ParseVersion(c.Newest.Version)
	var b strings.Builder
	if required == graph.BumpNone {
		fmt.Fprintf(&b, "Stored: **%s**. This edit needs no bump.", c.Newest.Version)
	} else {
		fmt.Fprintf(&b, "Stored: **%s**. This edit needs a **%s** bump: version %s or later.", c.Newest.Version, required, ov.Next(required))
	}
	if nv, err := graph.ParseVersion(g.Version); err == nil && nv.Compare(ov) > 0 {
		fmt.Fprintf(&b, " %s declares %s.", g.Version, ov.BumpTo(nv))
	}
	if c.Replace {
		fmt.Fprintf(&b, " %s is a development version: applying replaces it in place as revision %d.", g.Version, c.Revision)
	}
	if c.Refused != nil {
		b.WriteString(" Applying it as it is would be refused.")
	}
	for _, ch := range changes {
		fmt.Fprintf(&b, "\n- %s", ch.String())
	}
	return b.String()
}
