// Package irgen writes lang/graph's ir_gen.go from the one description of
// the graph IR: the struct types of lang/graph that carry a //graph:gen
// directive, their fields, and the fields' json and graph tags. It reads
// source text only; it must not import lang/graph (the generated code is
// part of it) nor any other package of flowrun.
//
// For every such type it writes the fast decoder of its stored form, its
// encoder (appendJSON, the bytes encoding/json gives without HTML
// escaping), the
// walk that puts it in normal form, the walk that interns its types and
// mode strings, the comparison Diff makes of two versions of it, and the
// walk that hands every expression it holds to a visitor with the scope
// (slot) the expression was checked in. For Step it also writes the
// hash's view of a step (stepDef, and appendDefJSON, its encoding).
//
// # The type directive
//
// A line //graph:gen OPTIONS in the type's doc comment, OPTIONS among:
//
//	root         the top of the record (Graph): its decoder takes no null
//	slab         decoded structs are allocated in blocks (fastPools.<name>Slab)
//	stack        lists of it are built on a stack (fastPools.<name>Stack,
//	             <name>Lists); for a list of structs, its string fields are
//	             set when the decoder next flushes its strings
//	flush        the decoder flushes its strings when one is decoded (Step)
//	share=FUNC   FUNC(x) ends its decoding and starts its interning
//	hash         the type's fields say def, run or self: the hash's view (Step)
//	scope        its expressions are in the scope of this step (Step)
//	diff=MODE    how Diff compares two versions of it:
//	  fields     each field is compared on its own, by its diff= spec
//	             (the default), in differ.<name>Fields
//	  parts      each field adds a part to one change ("changed (a → b, c)")
//	             that the caller reports, in <name>Parts
//	  whole      by its encoding, as a whole (its fields carry no diff=)
//	diffctx=T    the fields comparison takes a *T, passed on to whole: specs
//
// # The field tag
//
// A field's json tag is its key in the encoding (omitempty: an empty
// collection is nil in normal form; without it, an empty collection is
// non-nil and encoded). Its graph tag is a comma-separated list of:
//
//	def, run, self  (types with hash) the hash covers it, it is run policy,
//	                it is the hash itself
//	mode            a string with few values: decoded and interned shared
//	set             a []string kept sorted and without duplicates
//	sorted          a list of structs kept sorted by their Name
//	dec=FUNC        decoded by d.FUNC() (hand-written) instead
//	norm=FUNC       normalised by n.FUNC(x) (hand-written) instead of a walk
//	slot=NAME       the expressions it holds are in slot NAME (an
//	                expr.Slot* constant); without it, the enclosing slot
//	diff=SPEC       how Diff compares it (types whose diff is fields or parts)
//
// In diff=fields types, SPEC is one of:
//
//   - not compared (a name, a hash, the version)
//     BUMP:LABEL              "LABEL changed (old → new)" when the values differ
//     cel:BUMP:LABEL          "LABEL changed (old → new)" on CEL text
//     same:BUMP:LABEL         "LABEL changed" when the encodings differ
//     ms:BUMP:LABEL           "LABEL changed (old → new)" on durations in ms
//     or:BUMP:LABEL:NONE      as BUMP:LABEL, an empty value shown as NONE
//     type:BUMP:LABEL         "LABEL changed (old → new)" on a *Type
//     fn:NAME                 d.NAME(path, old, new) of the field (a struct by pointer)
//     whole:NAME              d.NAME(path, o, n[, c]) of the whole structs
//
// In diff=parts types, SPEC is one of:
//
//   - not compared
//     LABEL                   "LABEL old → new" when the values differ
//     ms:LABEL                the same on durations in ms
//     or:LABEL:NONE           the same, an empty value shown as NONE
//     cel:LABEL               "LABEL (old → new)" when the expressions differ
//     celtext:LABEL           "LABEL old → new" when the CEL texts differ
//     same:LABEL              "LABEL" when the encodings differ
//     fn:NAME                 NAME(o, n) (string, bool) of the whole structs
//     with:FIELD              compared together with FIELD, by FIELD's spec
//
// BUMP is major, minor or patch.
package irgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// Field is one field of a generated type as its tags describe it.
type Field struct {
	Name    string
	JSONTag string // the json tag's whole value
	JSONKey string
	Omit    bool   // omitempty
	Type    string // Go type as written: string, int64, []string, *Expr, Action, ...
	Hash    string // def | run | self (types with hash)
	Mode    bool
	Set     bool
	Sorted  bool
	Dec     string
	Norm    string
	Slot    string
	Diff    string
}

// Type is one generated type.
type Type struct {
	Name    string
	Root    bool
	Slab    bool
	Stack   bool
	Flush   bool
	Share   string
	Hash    bool
	Scope   bool
	Diff    string // fields | parts | whole
	DiffCtx string
	Fields  []Field

	use string // ptr | val | elem | root
}

// HandWritten are the types of the IR whose encoding is not field by
// field, with their own decoder, normal form, interning and comparison:
// Type (shared trees, parsed once per distinct text: types.go,
// decode_fast.go) and NamedValue (a NamedValues list is encoded as an
// object keyed by name: namedvalues.go).
var HandWritten = []string{"Type", "NamedValue"}

// custom are the field types with a hand-written decoder (and walks).
var custom = map[string]bool{
	"string": true, "bool": true, "int": true, "int64": true, "float64": true,
	"[]string": true, "[]int": true, "json.RawMessage": true, "*Type": true, "NamedValues": true,
}

// File is the source of one file of lang/graph.
type File struct {
	Name string
	Src  []byte
}

// Describe returns the generated types of the files, in the order they are
// declared (files in the order given).
func Describe(files []File) ([]*Type, error) {
	fset := token.NewFileSet()
	var types []*Type
	structs := map[string]bool{}
	for _, file := range files {
		f, err := parser.ParseFile(fset, file.Name, file.Src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				structs[ts.Name.Name] = true
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				opts, ok := directive(doc)
				if !ok {
					continue
				}
				t, err := describeType(fset, ts.Name.Name, opts, st)
				if err != nil {
					return nil, err
				}
				types = append(types, t)
			}
		}
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("irgen: no type has a //graph:gen directive")
	}
	byName := map[string]*Type{}
	for _, t := range types {
		byName[t.Name] = t
	}
	for _, t := range types {
		for _, f := range t.Fields {
			if custom[f.Type] {
				continue
			}
			el, use := elemOf(f.Type)
			if byName[el] == nil && f.Dec != "" {
				continue
			}
			if byName[el] == nil {
				if structs[el] {
					return nil, fmt.Errorf("irgen: %s.%s: the struct %s has no //graph:gen directive", t.Name, f.Name, el)
				}
				return nil, fmt.Errorf("irgen: %s.%s: no decoder for type %s", t.Name, f.Name, f.Type)
			}
			u := byName[el]
			if u.Root {
				return nil, fmt.Errorf("irgen: %s.%s: the root %s is held by another type", t.Name, f.Name, el)
			}
			if u.use != "" && u.use != use {
				return nil, fmt.Errorf("irgen: %s is held both as %s and as %s; the decoder handles one", el, u.use, use)
			}
			u.use = use
		}
	}
	for _, t := range types {
		if t.Root {
			t.use = "root"
		}
		if t.use == "" {
			return nil, fmt.Errorf("irgen: no type holds %s", t.Name)
		}
		if t.Stack && t.use == "val" {
			return nil, fmt.Errorf("irgen: %s: stack is for types held in lists", t.Name)
		}
	}
	return types, nil
}

// directive returns the options of the //graph:gen line of doc.
func directive(doc *ast.CommentGroup) ([]string, bool) {
	if doc == nil {
		return nil, false
	}
	for _, c := range doc.List {
		if rest, ok := strings.CutPrefix(c.Text, "//graph:gen"); ok && (rest == "" || rest[0] == ' ') {
			return strings.Fields(rest), true
		}
	}
	return nil, false
}

func describeType(fset *token.FileSet, name string, opts []string, st *ast.StructType) (*Type, error) {
	t := &Type{Name: name, Diff: "fields"}
	for _, o := range opts {
		switch {
		case o == "root":
			t.Root = true
		case o == "slab":
			t.Slab = true
		case o == "stack":
			t.Stack = true
		case o == "flush":
			t.Flush = true
		case o == "hash":
			t.Hash = true
		case o == "scope":
			t.Scope = true
		case strings.HasPrefix(o, "share="):
			t.Share = strings.TrimPrefix(o, "share=")
		case strings.HasPrefix(o, "diffctx="):
			t.DiffCtx = strings.TrimPrefix(o, "diffctx=")
		case strings.HasPrefix(o, "diff="):
			t.Diff = strings.TrimPrefix(o, "diff=")
			if t.Diff != "fields" && t.Diff != "parts" && t.Diff != "whole" {
				return nil, fmt.Errorf("irgen: %s: diff=%s is not fields, parts or whole", name, t.Diff)
			}
		default:
			return nil, fmt.Errorf("irgen: %s: unknown //graph:gen option %q", name, o)
		}
	}
	for _, fl := range st.Fields.List {
		if len(fl.Names) == 0 {
			return nil, fmt.Errorf("irgen: %s: an embedded field is not described", name)
		}
		if len(fl.Names) != 1 {
			if fl.Names[0].IsExported() {
				return nil, fmt.Errorf("irgen: %s.%s: declare one field a line", name, fl.Names[0].Name)
			}
			continue
		}
		if !fl.Names[0].IsExported() {
			continue
		}
		fd := Field{Name: fl.Names[0].Name}
		where := name + "." + fd.Name
		if fl.Tag == nil {
			return nil, fmt.Errorf("irgen: %s has no tags", where)
		}
		raw, err := strconv.Unquote(fl.Tag.Value)
		if err != nil {
			return nil, err
		}
		tag := reflect.StructTag(raw)
		fd.JSONTag = tag.Get("json")
		var opt string
		fd.JSONKey, opt, _ = strings.Cut(fd.JSONTag, ",")
		fd.Omit = opt == "omitempty"
		if fd.JSONKey == "" || fd.JSONKey == "-" || (opt != "" && opt != "omitempty") {
			return nil, fmt.Errorf("irgen: %s: the json tag %q is not a key with at most omitempty", where, fd.JSONTag)
		}
		var tb strings.Builder
		if err := format.Node(&tb, fset, fl.Type); err != nil {
			return nil, err
		}
		fd.Type = tb.String()
		g, _ := tag.Lookup("graph")
		if g != "" {
			for _, opt := range strings.Split(g, ",") {
				switch {
				case opt == "def", opt == "run", opt == "self":
					fd.Hash = opt
				case opt == "mode":
					fd.Mode = true
				case opt == "set":
					fd.Set = true
				case opt == "sorted":
					fd.Sorted = true
				case strings.HasPrefix(opt, "dec="):
					fd.Dec = strings.TrimPrefix(opt, "dec=")
				case strings.HasPrefix(opt, "norm="):
					fd.Norm = strings.TrimPrefix(opt, "norm=")
				case strings.HasPrefix(opt, "slot="):
					fd.Slot = strings.TrimPrefix(opt, "slot=")
				case strings.HasPrefix(opt, "diff="):
					fd.Diff = strings.TrimPrefix(opt, "diff=")
				default:
					return nil, fmt.Errorf("irgen: %s: unknown graph tag option %q", where, opt)
				}
			}
		}
		switch {
		case t.Hash && fd.Hash == "":
			return nil, fmt.Errorf("irgen: %s: the graph tag needs def, run or self", where)
		case !t.Hash && fd.Hash != "":
			return nil, fmt.Errorf("irgen: %s: def, run and self are for types with hash", where)
		case t.Diff == "whole" && fd.Diff != "":
			return nil, fmt.Errorf("irgen: %s: %s is compared whole; its fields take no diff=", where, name)
		case t.Diff != "whole" && fd.Diff == "":
			return nil, fmt.Errorf("irgen: %s: the graph tag needs diff= (%s is compared by %s)", where, name, t.Diff)
		case fd.Mode && fd.Type != "string":
			return nil, fmt.Errorf("irgen: %s: mode is for strings", where)
		case fd.Set && fd.Type != "[]string":
			return nil, fmt.Errorf("irgen: %s: set is for []string", where)
		case fd.Type == "[]string" && !fd.Set && fd.Dec == "":
			return nil, fmt.Errorf("irgen: %s: a []string is a set (graph:\"set\")", where)
		case fd.Sorted && !strings.HasPrefix(fd.Type, "[]"):
			return nil, fmt.Errorf("irgen: %s: sorted is for lists", where)
		}
		t.Fields = append(t.Fields, fd)
	}
	if len(t.Fields) > 32 {
		return nil, fmt.Errorf("irgen: %s has %d fields; the decoder's seen set holds 32", name, len(t.Fields))
	}
	return t, nil
}

// elemOf returns the struct type a field of type typ holds and how:
// ptr (*T, []*T, map[string]*T), val (T) or elem ([]T).
func elemOf(typ string) (string, string) {
	switch {
	case strings.HasPrefix(typ, "[]*"):
		return typ[3:], "ptr"
	case strings.HasPrefix(typ, "map[string]*"):
		return typ[len("map[string]*"):], "ptr"
	case strings.HasPrefix(typ, "[]"):
		return typ[2:], "elem"
	case strings.HasPrefix(typ, "*"):
		return typ[1:], "ptr"
	}
	return typ, "val"
}

// lower is the name of a type's methods: Graph graph, HTTPAction
// httpAction.
func lower(s string) string {
	r := []rune(s)
	i := 0
	for i < len(r) && unicode.IsUpper(r[i]) {
		i++
	}
	switch {
	case i == 0:
	case i == 1 || i == len(r):
		for j := range i {
			r[j] = unicode.ToLower(r[j])
		}
	default:
		for j := range i - 1 {
			r[j] = unicode.ToLower(r[j])
		}
	}
	return string(r)
}

// article is "a T" or "an T" as T is read.
func article(name string) string {
	if strings.ContainsRune("AEIOU", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// gen writes ir_gen.go.
type gen struct {
	b      bytes.Buffer
	types  []*Type
	byName map[string]*Type
	norm   map[string]bool // types whose normal-form walk does something
	intern map[string]bool // types whose intern walk does something
	exprs  map[string]bool // types that hold expressions
	// usesFmt: the generated code calls fmt.
	usesFmt bool
}

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

// Generate returns ir_gen.go for the files of lang/graph.
func Generate(files []File) ([]byte, error) {
	types, err := Describe(files)
	if err != nil {
		return nil, err
	}
	g := &gen{types: types, byName: map[string]*Type{}}
	for _, t := range types {
		g.byName[t.Name] = t
	}
	g.norm = g.closure(func(t *Type, f Field) bool {
		return f.Set || f.Sorted || f.Norm != "" || f.Type == "json.RawMessage" || f.Type == "*Type" || f.Type == "NamedValues" || collection(f.Type)
	})
	g.intern = g.closure(func(t *Type, f Field) bool {
		return t.Share != "" || f.Mode || f.Type == "*Type" || f.Type == "NamedValues"
	})
	g.exprs = g.closure(func(t *Type, f Field) bool { return f.Type == "*Expr" || f.Type == "NamedValues" })
	for _, t := range types {
		if t.Hash {
			g.genHash(t)
		}
	}
	for _, t := range types {
		if err := g.genDecode(t); err != nil {
			return nil, err
		}
	}
	for _, t := range types {
		g.genNorm(t)
	}
	for _, t := range types {
		g.genIntern(t)
	}
	for _, t := range types {
		if err := g.genDiff(t); err != nil {
			return nil, err
		}
	}
	if err := g.genWalk(); err != nil {
		return nil, err
	}
	for _, t := range types {
		if err := g.genEncode(t); err != nil {
			return nil, err
		}
	}
	var all bytes.Buffer
	all.WriteString("// Code generated by lang/graph/internal/irgen from the //graph:gen types of lang/graph; DO NOT EDIT.\n\npackage graph\n\n")
	if g.usesFmt {
		all.WriteString("import (\n\t\"fmt\"\n\t\"strconv\"\n)\n\n")
	} else {
		all.WriteString("import \"strconv\"\n\n")
	}
	all.Write(g.b.Bytes())
	out, err := format.Source(all.Bytes())
	if err != nil {
		return nil, fmt.Errorf("irgen: the generated code does not parse: %w\n%s", err, all.Bytes())
	}
	return out, nil
}

// collection reports whether a field type is a list or map whose emptiness
// the normal form fixes.
func collection(typ string) bool {
	return (strings.HasPrefix(typ, "[]") && typ != "[]string") || strings.HasPrefix(typ, "map[") || typ == "NamedValues"
}

// closure returns the types for which own holds of some field, or which
// hold such a type.
func (g *gen) closure(own func(*Type, Field) bool) map[string]bool {
	in := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, t := range g.types {
			if in[t.Name] {
				continue
			}
			for _, f := range t.Fields {
				el, _ := elemOf(f.Type)
				if own(t, f) || (g.byName[el] != nil && in[el]) {
					in[t.Name] = true
					changed = true
					break
				}
			}
		}
	}
	return in
}

func (g *gen) genHash(t *Type) {
	n := lower(t.Name)
	g.p("// %sDef is the part of a %s its hash covers: the fields of %s\n// tagged def, in their order, encoded as %s encodes them.\ntype %sDef struct {\n", n, n, t.Name, t.Name, n)
	var vals []string
	for _, f := range t.Fields {
		if f.Hash != "def" {
			continue
		}
		g.p("\t%s %s `json:%q`\n", f.Name, f.Type, f.JSONTag)
		vals = append(vals, "x."+f.Name)
	}
	g.p("}\n\nfunc %sDefOf(x *%s) %sDef {\n\treturn %sDef{%s}\n}\n\n", n, t.Name, n, n, strings.Join(vals, ", "))
}

// strFields are the string fields of t that the decoder does not intern
// as modes.
func strFields(t *Type) []Field {
	var out []Field
	for _, f := range t.Fields {
		if f.Type == "string" && !f.Mode && f.Dec == "" {
			out = append(out, f)
		}
	}
	return out
}

func (g *gen) genDecode(t *Type) error {
	n := lower(t.Name)
	// How the string fields are read: pend (set at the next flush, for
	// structs that do not move), now (their own string, for the small
	// lists of the workflow), span (for lists built on a stack: their
	// places noted in sp, pended once the list is in place).
	strMode := "pend"
	switch {
	case t.use == "elem" && t.Stack:
		strMode = "span"
	case t.use == "elem":
		strMode = "now"
	}
	strs := strFields(t)
	switch t.use {
	case "ptr":
		g.p("// %s decodes %s of a stored graph (null: nil) in normal form.\nfunc (d *fastDecoder) %s() *%s {\n\tif d.null() {\n\t\treturn nil\n\t}\n", n, article(t.Name), n, t.Name)
		if t.Slab {
			g.p("\tx := d.pool.%sSlab.new()\n", n)
		} else {
			g.p("\tx := &%s{}\n", t.Name)
		}
	case "val", "elem":
		if strMode == "span" {
			g.p("// %s decodes %s of a stored graph (null: the zero value) into x in\n// normal form, the places of its strings into sp.\nfunc (d *fastDecoder) %s(x *%s, sp *[%d]fastSpan) {\n\tif d.null() {\n\t\treturn\n\t}\n", n, article(t.Name), n, t.Name, len(strs))
		} else {
			g.p("// %s decodes %s of a stored graph (null: the zero value) into x in\n// normal form.\nfunc (d *fastDecoder) %s(x *%s) {\n\tif d.null() {\n\t\treturn\n\t}\n", n, article(t.Name), n, t.Name)
		}
	case "root":
		g.p("// %s decodes the %s of a stored graph in normal form (but for the order\n// of its steps).\nfunc (d *fastDecoder) %s(x *%s) {\n", n, t.Name, n, t.Name)
	}
	g.p("\td.open('{')\n\tvar set uint32\n\tfirst := true\n\tfor d.more(&first, '}') {\n\t\tswitch string(d.key()) {\n")
	si := 0
	for i, f := range t.Fields {
		g.p("\t\tcase %q:\n\t\t\td.seen(&set, 1<<%d)\n", f.JSONKey, i)
		el, use := elemOf(f.Type)
		u := g.byName[el]
		switch {
		case f.Dec != "":
			g.p("\t\t\tx.%s = d.%s()\n", f.Name, f.Dec)
		case f.Type == "string" && f.Mode:
			g.p("\t\t\tx.%s = d.mode()\n", f.Name)
		case f.Type == "string" && strMode == "pend":
			g.p("\t\t\td.strTo(&x.%s)\n", f.Name)
		case f.Type == "string" && strMode == "now":
			g.p("\t\t\tx.%s = d.str()\n", f.Name)
		case f.Type == "string":
			g.p("\t\t\ts, _ := d.strBytes()\n\t\t\tsp[%d] = d.span(s)\n", si)
			si++
		case f.Type == "bool", f.Type == "int", f.Type == "int64", f.Type == "float64":
			g.p("\t\t\tx.%s = d.%s()\n", f.Name, f.Type)
		case f.Type == "[]string":
			g.p("\t\t\tx.%s = d.strings()\n", f.Name)
		case f.Type == "[]int":
			g.p("\t\t\tx.%s = d.ints()\n", f.Name)
		case f.Type == "json.RawMessage":
			g.p("\t\t\tx.%s = d.raw()\n", f.Name)
		case f.Type == "*Type":
			g.p("\t\t\tx.%s = d.typ()\n", f.Name)
		case f.Type == "NamedValues":
			g.p("\t\t\tx.%s = d.namedValues()\n", f.Name)
		case u == nil:
			return fmt.Errorf("irgen: %s.%s: no decoder for type %s", t.Name, f.Name, f.Type)
		case use == "val":
			if strMode != "pend" && len(strFields(u)) > 0 {
				return fmt.Errorf("irgen: %s.%s: a struct held in a list cannot hold a struct with strings (%s)", t.Name, f.Name, el)
			}
			g.p("\t\t\td.%s(&x.%s)\n", lower(el), f.Name)
		case strings.HasPrefix(f.Type, "map["):
			g.p("\t\t\tx.%s = d.%sMap()\n", f.Name, lower(el))
		case strings.HasPrefix(f.Type, "[]"):
			g.p("\t\t\tx.%s = d.%ss()\n", f.Name, lower(el))
		default:
			g.p("\t\t\tx.%s = d.%s()\n", f.Name, lower(el))
		}
	}
	g.p("\t\tdefault:\n\t\t\td.fail()\n\t\t}\n\t}\n")
	if t.Flush {
		g.p("\td.flushStrings()\n")
	}
	// The normal form of the struct itself: what it holds is normal already.
	for _, f := range t.Fields {
		switch {
		case f.Set:
			g.p("\td.names(&x.%s, %v)\n", f.Name, !f.Omit)
		case f.Sorted:
			el, _ := elemOf(f.Type)
			if g.byName[el] != nil && g.byName[el].Stack {
				return fmt.Errorf("irgen: %s.%s: a list built on a stack cannot be sorted", t.Name, f.Name)
			}
			g.p("\tencSortByName(&d.norm, x.%s, func(e %s) string { return e.Name })\n", f.Name, el)
		}
		switch {
		case f.Type == "json.RawMessage":
			g.p("\td.norm.raw(&x.%s)\n", f.Name)
		case collection(f.Type) && f.Omit:
			g.p("\tif len(x.%[1]s) == 0 {\n\t\tx.%[1]s = nil\n\t}\n", f.Name)
		case collection(f.Type):
			g.p("\tif x.%[1]s == nil {\n\t\tx.%[1]s = %[2]s{}\n\t}\n", f.Name, f.Type)
		}
	}
	if t.Share != "" {
		g.p("\t%s(x)\n", t.Share)
	}
	if t.use == "ptr" {
		g.p("\treturn x\n")
	}
	g.p("}\n\n")
	// The lists and maps of it.
	if t.use == "elem" {
		g.genElemList(t, len(strs))
	}
	if t.use == "ptr" {
		g.genPtrLists(t)
	}
	return nil
}

// genElemList writes the decoder of a []T field.
func (g *gen) genElemList(t *Type, nstr int) {
	n := lower(t.Name)
	g.p("// %ss decodes a list of %s (null: nil; a null element: the zero value).\nfunc (d *fastDecoder) %ss() []%s {\n\tif d.null() {\n\t\treturn nil\n\t}\n\td.open('[')\n", n, t.Name, n, t.Name)
	if !t.Stack {
		g.p("\tlist := []%s{}\n\tfirst := true\n\tfor d.more(&first, ']') {\n\t\tvar x %s\n\t\td.%s(&x)\n\t\tlist = append(list, x)\n\t}\n\treturn list\n}\n\n", t.Name, t.Name, n)
		return
	}
	g.p("\tbase := len(d.pool.%sStack)\n\tspans := len(d.spans)\n\tfirst := true\n\tfor d.more(&first, ']') {\n\t\tvar x %s\n\t\tvar sp [%d]fastSpan\n\t\td.%s(&x, &sp)\n\t\td.pool.%sStack = append(d.pool.%sStack, x)\n\t\td.spans = append(d.spans, sp[:]...)\n\t}\n", n, t.Name, nstr, n, n, n)
	g.p("\tlist := d.pool.%sLists.make(len(d.pool.%sStack) - base)\n\tcopy(list, d.pool.%sStack[base:])\n", n, n, n)
	if nstr > 0 {
		g.p("\tfor i := range list {\n\t\tsp := d.spans[spans+%d*i:]\n", nstr)
		for k, f := range strFields(t) {
			g.p("\t\td.pend(&list[i].%s, sp[%d])\n", f.Name, k)
		}
		g.p("\t}\n")
	}
	g.p("\td.spans = d.spans[:spans]\n\tclear(d.pool.%sStack[base:])\n\td.pool.%sStack = d.pool.%sStack[:base]\n\treturn list\n}\n\n", n, n, n)
}

// genPtrLists writes the decoders of the []*T and map[string]*T fields.
func (g *gen) genPtrLists(t *Type) {
	n := lower(t.Name)
	var list, mp bool
	for _, u := range g.types {
		for _, f := range u.Fields {
			if f.Dec != "" {
				continue
			}
			list = list || f.Type == "[]*"+t.Name
			mp = mp || f.Type == "map[string]*"+t.Name
		}
	}
	if list {
		g.p("// %ss decodes a list of %s (null: nil).\nfunc (d *fastDecoder) %ss() []*%s {\n\tif d.null() {\n\t\treturn nil\n\t}\n\td.open('[')\n", n, t.Name, n, t.Name)
		if t.Stack {
			g.p("\tbase := len(d.pool.%[1]sStack)\n\tfirst := true\n\tfor d.more(&first, ']') {\n\t\tx := d.%[1]s()\n\t\td.pool.%[1]sStack = append(d.pool.%[1]sStack, x)\n\t}\n\tlist := d.pool.%[1]sLists.make(len(d.pool.%[1]sStack) - base)\n\tcopy(list, d.pool.%[1]sStack[base:])\n\tclear(d.pool.%[1]sStack[base:])\n\td.pool.%[1]sStack = d.pool.%[1]sStack[:base]\n\treturn list\n}\n\n", n)
		} else {
			g.p("\tlist := []*%s{}\n\tfirst := true\n\tfor d.more(&first, ']') {\n\t\tlist = append(list, d.%s())\n\t}\n\treturn list\n}\n\n", t.Name, n)
		}
	}
	if mp {
		g.p("// %sMap decodes an object of %s (null: nil; a repeated key goes the\n// slow way).\nfunc (d *fastDecoder) %sMap() map[string]*%s {\n\tif d.null() {\n\t\treturn nil\n\t}\n\td.open('{')\n\tm := map[string]*%s{}\n\tfirst := true\n\tfor d.more(&first, '}') {\n\t\tk := d.mapKey()\n\t\tif _, dup := m[k]; dup {\n\t\t\td.fail()\n\t\t}\n\t\tm[k] = d.%s()\n\t}\n\treturn m\n}\n\n", n, t.Name, n, t.Name, t.Name, n)
	}
}

// recurse writes the calls of a walk (recv.NAME) into the generated
// struct held by field f of x, if the walk of that type does something.
func (g *gen) recurse(recv string, f Field, walks map[string]bool) {
	el, use := elemOf(f.Type)
	if g.byName[el] == nil || !walks[el] {
		return
	}
	m := lower(el)
	switch {
	case use == "val":
		g.p("\t%s.%s(&x.%s)\n", recv, m, f.Name)
	case use == "elem":
		g.p("\tfor i := range x.%s {\n\t\t%s.%s(&x.%s[i])\n\t}\n", f.Name, recv, m, f.Name)
	case f.Type == "*"+el:
		g.p("\t%s.%s(x.%s)\n", recv, m, f.Name)
	default:
		g.p("\tfor _, e := range x.%s {\n\t\t%s.%s(e)\n\t}\n", f.Name, recv, m)
	}
}

func (g *gen) genNorm(t *Type) {
	if !g.norm[t.Name] {
		return
	}
	n := lower(t.Name)
	g.p("// %s puts x and what it holds in normal form.\nfunc (n *encNormalizer) %s(x *%s) {\n\tif x == nil {\n\t\treturn\n\t}\n", n, n, t.Name)
	for _, f := range t.Fields {
		el, _ := elemOf(f.Type)
		switch {
		case f.Set:
			g.p("\tn.names(&x.%s, %v)\n", f.Name, !f.Omit)
		case f.Sorted:
			g.p("\tencSortByName(n, x.%s, func(e %s) string { return e.Name })\n", f.Name, el)
		}
		switch {
		case f.Type == "json.RawMessage":
			g.p("\tn.raw(&x.%s)\n", f.Name)
		case f.Type == "*Type":
			g.p("\tn.typ(x.%s)\n", f.Name)
		case collection(f.Type) && f.Omit:
			g.p("\tif len(x.%[1]s) == 0 && x.%[1]s != nil && n.change() {\n\t\tx.%[1]s = nil\n\t}\n", f.Name)
		case collection(f.Type):
			g.p("\tif x.%[1]s == nil && n.change() {\n\t\tx.%[1]s = %[2]s{}\n\t}\n", f.Name, f.Type)
		}
		switch {
		case f.Norm != "":
			g.p("\tn.%s(x)\n", f.Norm)
		case f.Type == "NamedValues":
			g.p("\tn.namedValues(x.%s)\n", f.Name)
		default:
			g.recurse("n", f, g.norm)
		}
	}
	g.p("}\n\n")
}

func (g *gen) genIntern(t *Type) {
	if !g.intern[t.Name] {
		return
	}
	n := lower(t.Name)
	g.p("// %s interns the types and the mode strings of x and what it holds.\nfunc (in *typeInterner) %s(x *%s) {\n\tif x == nil {\n\t\treturn\n\t}\n", n, n, t.Name)
	if t.Share != "" {
		g.p("\t%s(x)\n", t.Share)
	}
	for _, f := range t.Fields {
		switch {
		case f.Mode:
			g.p("\tx.%[1]s = modeString(x.%[1]s)\n", f.Name)
		case f.Type == "*Type":
			g.p("\tx.%[1]s = in.intern(x.%[1]s)\n", f.Name)
		case f.Type == "NamedValues":
			g.p("\tin.namedValues(x.%s)\n", f.Name)
		default:
			g.recurse("in", f, g.intern)
		}
	}
	g.p("}\n\n")
}

// differs is the condition that the field f of o and n differ: by value
// for the scalars, else by their encodings.
func differs(f Field) string {
	switch f.Type {
	case "string", "bool", "int", "int64", "float64":
		return fmt.Sprintf("o.%[1]s != n.%[1]s", f.Name)
	}
	return fmt.Sprintf("!diffSame(o.%[1]s, n.%[1]s)", f.Name)
}

var bumps = map[string]string{"major": "BumpMajor", "minor": "BumpMinor", "patch": "BumpPatch"}

func (g *gen) genDiff(t *Type) error {
	switch t.Diff {
	case "fields":
		return g.genDiffFields(t)
	case "parts":
		return g.genDiffParts(t)
	}
	return nil
}

func (g *gen) genDiffFields(t *Type) error {
	ctx, ctxArg := "", ""
	if t.DiffCtx != "" {
		ctx, ctxArg = ", c *"+t.DiffCtx, ", c"
	}
	n := lower(t.Name)
	g.p("// %sFields compares the fields of two versions of %s, one change a field.\nfunc (d *differ) %sFields(path string, o, n *%s%s) {\n", n, article(t.Name), n, t.Name, ctx)
	for _, f := range t.Fields {
		parts := strings.Split(f.Diff, ":")
		bad := func() error {
			return fmt.Errorf("irgen: %s.%s: diff=%s is not a diff spec", t.Name, f.Name, f.Diff)
		}
		bump := func(s string) (string, error) {
			if v, ok := bumps[s]; ok {
				return v, nil
			}
			return "", bad()
		}
		switch parts[0] {
		case "-":
			if len(parts) != 1 {
				return bad()
			}
		case "fn":
			if len(parts) != 2 {
				return bad()
			}
			amp := ""
			if _, use := elemOf(f.Type); use == "val" && g.byName[f.Type] != nil {
				amp = "&"
			}
			g.p("\td.%s(path, %so.%s, %sn.%s)\n", parts[1], amp, f.Name, amp, f.Name)
		case "whole":
			if len(parts) != 2 {
				return bad()
			}
			g.p("\td.%s(path, o, n%s)\n", parts[1], ctxArg)
		case "cel", "same", "ms", "or", "type":
			if len(parts) < 3 {
				return bad()
			}
			bp, err := bump(parts[1])
			if err != nil {
				return err
			}
			label := parts[2]
			switch parts[0] {
			case "cel":
				if len(parts) != 3 {
					return bad()
				}
				g.p("\tif !diffSame(o.%[1]s, n.%[1]s) {\n\t\td.add(path, %[2]s, %[3]q, diffExprArrow(o.%[1]s, n.%[1]s))\n\t}\n", f.Name, bp, label+" changed%s")
			case "same":
				if len(parts) != 3 {
					return bad()
				}
				g.p("\tif %[4]s {\n\t\td.add(path, %[2]s, %[3]q)\n\t}\n", f.Name, bp, label+" changed", differs(f))
			case "ms":
				if len(parts) != 3 {
					return bad()
				}
				g.p("\tif o.%[1]s != n.%[1]s {\n\t\td.add(path, %[2]s, %[3]q, diffMS(o.%[1]s), diffMS(n.%[1]s))\n\t}\n", f.Name, bp, label+" changed (%s → %s)")
			case "type":
				if len(parts) != 3 {
					return bad()
				}
				g.p("\tif !o.%[1]s.Equal(n.%[1]s) {\n\t\td.add(path, %[2]s, %[3]q, diffArrow(o.%[1]s.String(), n.%[1]s.String()))\n\t}\n", f.Name, bp, label+" changed%s")
			case "or":
				if len(parts) != 4 {
					return bad()
				}
				g.p("\tif o.%[1]s != n.%[1]s {\n\t\td.add(path, %[2]s, %[3]q, diffOr(o.%[1]s, %[4]q), diffOr(n.%[1]s, %[4]q))\n\t}\n", f.Name, bp, label+" changed (%s → %s)", parts[3])
			}
		default:
			bp, err := bump(parts[0])
			if err != nil || len(parts) != 2 {
				return bad()
			}
			g.p("\tif o.%[1]s != n.%[1]s {\n\t\td.add(path, %[2]s, %[3]q, o.%[1]s, n.%[1]s)\n\t}\n", f.Name, bp, parts[1]+" changed (%v → %v)")
		}
	}
	g.p("}\n\n")
	return nil
}

func (g *gen) genDiffParts(t *Type) error {
	n := lower(t.Name)
	g.p("// %sParts names what differs between two versions of %s, one part a\n// field (or group of fields), in the order of the fields.\nfunc %sParts(o, n *%s) []string {\n\tvar parts []string\n", n, article(t.Name), n, t.Name)
	// with[F] are the fields compared together with F.
	with := map[string][]string{}
	names := map[string]bool{}
	for _, f := range t.Fields {
		names[f.Name] = true
	}
	for _, f := range t.Fields {
		if w, ok := strings.CutPrefix(f.Diff, "with:"); ok {
			if !names[w] || w == f.Name {
				return fmt.Errorf("irgen: %s.%s: diff=%s names no other field", t.Name, f.Name, f.Diff)
			}
			with[w] = append(with[w], f.Name)
		}
	}
	for _, f := range t.Fields {
		parts := strings.Split(f.Diff, ":")
		bad := func() error {
			return fmt.Errorf("irgen: %s.%s: diff=%s is not a parts spec", t.Name, f.Name, f.Diff)
		}
		differ := fmt.Sprintf("o.%[1]s != n.%[1]s", f.Name)
		for _, w := range with[f.Name] {
			differ += fmt.Sprintf(" || o.%[1]s != n.%[1]s", w)
		}
		switch parts[0] {
		case "-", "with":
			if (parts[0] == "-") != (len(parts) == 1) {
				return bad()
			}
			continue
		case "fn":
			if len(parts) != 2 {
				return bad()
			}
			g.p("\tif p, ok := %s(o, n); ok {\n\t\tparts = append(parts, p)\n\t}\n", parts[1])
			continue
		}
		if len(with[f.Name]) > 0 {
			return fmt.Errorf("irgen: %s.%s: only a fn: spec compares fields together", t.Name, f.Name)
		}
		switch parts[0] {
		case "ms":
			if len(parts) != 2 {
				return bad()
			}
			g.p("\tif %s {\n\t\tparts = append(parts, %q+diffMS(o.%s)+\" → \"+diffMS(n.%s))\n\t}\n", differ, parts[1]+" ", f.Name, f.Name)
		case "or":
			if len(parts) != 3 {
				return bad()
			}
			g.p("\tif %s {\n\t\tparts = append(parts, %q+diffOr(o.%s, %q)+\" → \"+diffOr(n.%s, %q))\n\t}\n", differ, parts[1]+" ", f.Name, parts[2], f.Name, parts[2])
		case "cel":
			if len(parts) != 2 {
				return bad()
			}
			g.p("\tif !diffSame(o.%[1]s, n.%[1]s) {\n\t\tparts = append(parts, %[2]q+diffExprArrow(o.%[1]s, n.%[1]s))\n\t}\n", f.Name, parts[1])
		case "celtext":
			if len(parts) != 2 {
				return bad()
			}
			g.p("\tif diffCEL(o.%[1]s) != diffCEL(n.%[1]s) {\n\t\tparts = append(parts, %[2]q+diffCEL(o.%[1]s)+\" → \"+diffCEL(n.%[1]s))\n\t}\n", f.Name, parts[1]+" ")
		case "same":
			if len(parts) != 2 {
				return bad()
			}
			g.p("\tif %[3]s {\n\t\tparts = append(parts, %[2]q)\n\t}\n", f.Name, parts[1], differs(f))
		default:
			if len(parts) != 1 || f.Diff == "" {
				return bad()
			}
			g.p("\tif %s {\n\t\tparts = append(parts, fmt.Sprintf(%q, o.%s, n.%s))\n\t}\n", differ, parts[0]+" %v → %v", f.Name, f.Name)
			g.usesFmt = true
		}
	}
	g.p("\treturn parts\n}\n\n")
	return nil
}

// genWalk writes the walk that hands every expression of a graph to a
// visitor with its step and slot.
func (g *gen) genWalk() error {
	// Every expression a type holds must be under a slot.
	var check func(t *Type, slot string, path string, seen map[string]bool) error
	check = func(t *Type, slot, path string, seen map[string]bool) error {
		if seen[t.Name+"\x00"+slot] {
			return nil
		}
		seen[t.Name+"\x00"+slot] = true
		for _, f := range t.Fields {
			s := slot
			if f.Slot != "" {
				s = f.Slot
			}
			el, _ := elemOf(f.Type)
			switch {
			case f.Type == "*Expr" || f.Type == "NamedValues":
				if s == "" {
					return fmt.Errorf("irgen: %s.%s holds expressions and no slot= says in which scope (%s)", t.Name, f.Name, path+"."+f.Name)
				}
			case g.byName[el] != nil && g.exprs[el]:
				if err := check(g.byName[el], s, path+"."+f.Name, seen); err != nil {
					return err
				}
			case f.Slot != "":
				return fmt.Errorf("irgen: %s.%s holds no expression; it takes no slot=", t.Name, f.Name)
			}
		}
		return nil
	}
	for _, t := range g.types {
		if t.Root {
			if err := check(t, "", t.Name, map[string]bool{}); err != nil {
				return err
			}
		}
	}
	for _, t := range g.types {
		if !g.exprs[t.Name] || t.Name == "Expr" {
			continue
		}
		n := lower(t.Name)
		if t.Scope {
			// Its expressions are in its own scope.
			g.p("// %s hands every expression of x to fn, with x as their step.\nfunc (fn exprVisitor) %s(x *%s, _ *Step, slot string) {\n\tif x == nil {\n\t\treturn\n\t}\n\ts := x\n", n, n, t.Name)
		} else {
			g.p("// %s hands every expression of x to fn.\nfunc (fn exprVisitor) %s(x *%s, s *Step, slot string) {\n\tif x == nil {\n\t\treturn\n\t}\n", n, n, t.Name)
		}
		for _, f := range t.Fields {
			el, use := elemOf(f.Type)
			holds := f.Type == "*Expr" || f.Type == "NamedValues" || (g.byName[el] != nil && g.exprs[el])
			if !holds {
				continue
			}
			slot := "slot"
			if f.Slot != "" {
				slot = strconv.Quote(f.Slot)
			}
			m := lower(el)
			switch {
			case f.Type == "*Expr":
				g.p("\tif x.%s != nil {\n\t\tfn(x.%s, s, %s)\n\t}\n", f.Name, f.Name, slot)
			case f.Type == "NamedValues":
				g.p("\tfor _, nv := range x.%s {\n\t\tfn.value(nv.Value, s, %s)\n\t}\n", f.Name, slot)
			case use == "val":
				g.p("\tfn.%s(&x.%s, s, %s)\n", m, f.Name, slot)
			case use == "elem":
				g.p("\tfor i := range x.%s {\n\t\tfn.%s(&x.%s[i], s, %s)\n\t}\n", f.Name, m, f.Name, slot)
			case f.Type == "*"+el:
				g.p("\tfn.%s(x.%s, s, %s)\n", m, f.Name, slot)
			default:
				g.p("\tfor _, e := range x.%s {\n\t\tfn.%s(e, s, %s)\n\t}\n", f.Name, m, slot)
			}
		}
		g.p("}\n\n")
	}
	return nil
}

// Output is the file Generate's result is written to.
const Output = "ir_gen.go"

// ReadDir returns the files of the package in dir that Generate reads: the
// Go files but the tests and the generated file, sorted by name.
func ReadDir(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("irgen: %w", err)
	}
	var files []File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == Output {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("irgen: %w", err)
		}
		files = append(files, File{Name: name, Src: src})
	}
	return files, nil
}
