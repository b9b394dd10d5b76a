package lang

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/rogpeppe/go-internal/txtar"
)

// quickSources are the workflow files the quick parser is held to
// hclsyntax on: examples, lang's test files, the HCL files of the
// conformance cases, of the command's scripts and of the fuzz corpus, and
// chains.
func quickSources(t testing.TB) map[string][]byte {
	t.Helper()
	sources := map[string][]byte{
		"chain":          testsrc.Chain(200),
		"template chain": testsrc.TemplateChain(200),
	}
	var files []string
	for _, p := range []string{"../examples/*.hcl", "testdata/*/*.hcl", "testfile/testdata/*/*.hcl", "../crashtest/testdata/*.hcl"} {
		m, _ := filepath.Glob(p)
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[f] = b
	}
	cases, _ := filepath.Glob("../spec/testdata/*.txtar")
	scripts, _ := filepath.Glob("../cmd/flowrun/testdata/*/*.txtar")
	cases = append(cases, scripts...)
	for _, c := range cases {
		a, err := txtar.ParseFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".hcl") {
				sources[c+"/"+f.Name] = f.Data
			}
		}
	}
	corpus, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, c := range corpus {
		b, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, pre := range []string{"[]byte(", "string("} {
				if s, ok := strings.CutPrefix(line, pre); ok {
					if u, err := strconv.Unquote(strings.TrimSuffix(s, ")")); err == nil {
						sources[c] = []byte(u)
					}
				}
			}
		}
	}
	if len(files) < 50 || len(cases) < 50 || len(corpus) < 5 {
		t.Fatalf("found %d files, %d conformance cases and %d fuzz inputs: too few", len(files), len(cases), len(corpus))
	}
	return sources
}

// checkQuick fails when the quick parser takes src and gives anything but
// the body hclsyntax.ParseConfig gives, or takes text hclsyntax reports.
func checkQuick(t *testing.T, name string, src []byte, start hcl.Pos) bool {
	t.Helper()
	got, ok := quickParseBody(src, "f.hcl", start)
	if !ok {
		return false
	}
	want, diags := hclsyntax.ParseConfig(src, "f.hcl", start)
	if len(diags) > 0 {
		t.Errorf("%s: the quick parser took text hclsyntax reports: %v", name, diags)
		return true
	}
	if !reflect.DeepEqual(want.Body, got) {
		t.Errorf("%s: the quick parser's body differs from hclsyntax's:\n%s", name, bodyDiff(want.Body.(*hclsyntax.Body), got))
	}
	return true
}

// bodyDiff names the first node at which two bodies differ.
func bodyDiff(want, got *hclsyntax.Body) string {
	if want.SrcRange != got.SrcRange || want.EndRange != got.EndRange || len(want.Blocks) != len(got.Blocks) || len(want.Attributes) != len(got.Attributes) {
		return fmt.Sprintf("body %#v\nvs %#v", want, got)
	}
	for k, a := range want.Attributes {
		if !reflect.DeepEqual(a, got.Attributes[k]) {
			return fmt.Sprintf("attribute %s: %#v %#v\nvs %#v %#v", k, a, a.Expr, got.Attributes[k], got.Attributes[k].Expr)
		}
	}
	for i, b := range want.Blocks {
		g := got.Blocks[i]
		if !reflect.DeepEqual(b.Body, g.Body) {
			return bodyDiff(b.Body, g.Body)
		}
		if !reflect.DeepEqual(b, g) {
			return fmt.Sprintf("block %#v\nvs %#v", b, g)
		}
	}
	return "(differs elsewhere)"
}

// TestQuickParseMatchesHCL: on every source, whole and from each line
// start of its nested blocks, the quick parser either declines or gives
// exactly hclsyntax's body, and only where hclsyntax reports nothing. It
// takes the chains and plain text, and declines what it leaves to
// hclsyntax.
func TestQuickParseMatchesHCL(t *testing.T) {
	taken := 0
	for name, src := range quickSources(t) {
		if checkQuick(t, name, src, hcl.InitialPos) {
			taken++
		}
		// A piece of the file at its own position, as parseConfigSplit
		// parses it: the blocks nested one level deep.
		if runs, ok := nestedBlocks(src); ok {
			for _, r := range runs {
				for _, s := range r {
					checkQuick(t, name+" at "+strconv.Itoa(s.line), src[s.start:s.end], hcl.Pos{Line: s.line, Column: 1, Byte: s.start})
				}
			}
		}
	}
	if taken < 20 {
		t.Errorf("the quick parser took %d sources: too few to compare", taken)
	}
	plain := map[string]string{
		"empty":              "",
		"blank":              "  \n\n",
		"comments":           "# a\n// b\n/* c\nd */\nx = 1 # e\ny = 2 // f\nz = 3 /* g */\n# end",
		"labels":             "a \"b\" c \"\" {\n}\nd{\n}\n",
		"one-line blocks":    "a { b = 1 }\nc \"d\" { e = [1, \"x\", true] }\nf {}\n",
		"numbers":            "a = 0\nb = 12.5\nc = 1e3\nd = 2.5E-2\ne = 007\n",
		"literals":           "a = true\nb = false\nc = null\nd = \"\"\ne = \"x y {{ z }}\"\n",
		"references":         "a = b\nc = d.e-f.g_h\ni = [j . k, l\n.m]\n",
		"tuples":             "a = []\nb = [\n  1,\n  # c\n  2,\n]\nc = [[1], [], {}]\n",
		"objects":            "a = {}\nb = { c = 1, d: \"e\" }\nf = {\n  g = [1,\n  2]\n  \"h\" = { i = j.k }\n\n  l = 1,\n}\n",
		"tabs":               "a {\n\tb = 1\n\tc = \"d\"\n}\n",
		"nested":             "w \"x\" {\n  s \"t\" {\n    u {\n      v = 1\n    }\n  }\n}\n",
		"no final newline":   "a {\n  b = 1\n}",
		"comment at the end": "a = 1\n// x",
		"calls":              "a = list(number)\nb = object({x = string, y = list(any)})\nc = f()\nd = f(1, \"x\",)\ne = f(\n  1, # one\n  g(2)\n)\nh = f (1)\n",
		"input types":        "input \"a\" {\n  type = map(list(object({n = number})))\n}\n",
		// Edges compared with hclsyntax (review): comments where the
		// body starts, ends or between a traversal's steps, keywords as
		// object keys and references, numbers at cty's limits, dashes.
		"comment first":           "/* c */ a = 1\n",
		"only a line comment":     "# c",
		"only a block comment":    "/* c */",
		"comments in a one-liner": "a { /* x */ b = 1 /* y */ } # z\n",
		"comment ends the line":   "a = 1 /* c\n */\nb = [1 /* c\n */ ]\n",
		"keyword keys":            "a = { null = 1, true: 2, in = 3 }\n",
		"expression keys":         "a = { b.c = 1, [1] = 2, {} = 3, f(1) = 4 }\n",
		"number limits":           "a = 99999999999999999999999999999999999999999\nb = 1e999999999\nc = 0.0000000000000000000000001\n",
		"for as a name":           "a = for\nb = for(1)\n",
		"dashes":                  "a-b = b-c.d-1\nx b-c \"d\" {\n}\n",
		"between steps":           "a = b /* x */ . c\nd = [e # x\n .f ]\ng = [h.\n i]\n",
		"calls across lines":      "a = f(\n)\nb = [f\n(1)]\nc { d = f(\n1) }\n",
	}
	for name, src := range plain {
		if !checkQuick(t, name, []byte(src), hcl.InitialPos) {
			t.Errorf("%s: declined", name)
		}
		if !checkQuick(t, name+" placed", []byte(src), hcl.Pos{Line: 7, Column: 1, Byte: 100}) {
			t.Errorf("%s placed: declined", name)
		}
	}
	declined := map[string]string{
		"expanded argument":    "a = f(x...)\n",
		"namespaced call":      "a = b::f(1)\n",
		"call after traversal": "a = b.c(1)\n",
		"call then traversal":  "a = f(1).x\n",
		"call arguments":       "a = f(1 2)\n",
		"call across lines":    "a = f\n(1)\n",
		"operator":             "a = 1 + 2\n",
		"negative":             "a = -1\n",
		"index":                "a = b[0]\n",
		"legacy index":         "a = b.0\n",
		"splat":                "a = b.*.c\n",
		"escape":               "a = \"\\n\"\n",
		"interpolation":        "a = \"${b}\"\n",
		"directive":            "a = \"%{ if b }c%{ endif }\"\n",
		"heredoc":              "a = <<EOT\nb\nEOT\n",
		"for":                  "a = [for x in y: x]\n",
		"object for":           "a = {for k, v in y: k => v}\n",
		"parentheses":          "a = (1)\n",
		"conditional":          "a = b ? 1 : 2\n",
		"unicode":              "a = \"ü\"\n",
		"CRLF":                 "a = 1\r\n",
		"duplicate attribute":  "a = 1\na = 2\n",
		"unclosed block":       "a {\n",
		"unclosed comment":     "a = 1 /* b\n",
		"two items on a line":  "a = 1 b = 2\n",
		"block then attribute": "a {} b = 1\n",
		"one-line two":         "a { b = 1, c = 2 }\n",
		"block header newline": "a\n{\n}\n",
		"equals for block":     "a = {\n} b\n",
		"== for =":             "a == 1\n",
		"quoted name":          "\"a\" = 1\n",
		"unterminated string":  "a = \"b\n",
		"missing value":        "a =\n",
		"object key newline":   "a = {\n  b\n  = 1\n}\n",
		"parenthesised key":    "a = { (b) = 1 }\n",
		"two dots":             "a = [1.2.3]\n",
		"comma after newline":  "a = { b = 1\n, c = 2 }\n",
		"empty tuple item":     "a = [,]\n",
		"for key":              "a = { for = 1 }\n",
		"for item":             "a = [for, 1]\n",
	}
	for name, src := range declined {
		if _, ok := quickParseBody([]byte(src), "f.hcl", hcl.InitialPos); ok {
			t.Errorf("%s: taken", name)
		}
	}
}

// TestQuickParseTakesChains: the quick parser takes the bench's template
// chain whole, its shell and its pieces (so parseConfigSplit parses none
// of them with hclsyntax), and the file parsed in pieces is hclsyntax's.
func TestQuickParseTakesChains(t *testing.T) {
	src := testsrc.TemplateChain(300)
	if _, ok := quickParseFile(src, "f.hcl"); !ok {
		t.Fatal("the chain was declined")
	}
	runs, ok := nestedBlocks(src)
	if !ok || len(runs) != 1 {
		t.Fatalf("nestedBlocks: %d runs, %v", len(runs), ok)
	}
	for _, s := range runs[0] {
		if _, ok := quickParseBody(src[s.start:s.end], "f.hcl", hcl.Pos{Line: s.line, Column: 1, Byte: s.start}); !ok {
			t.Fatalf("the step at line %d was declined", s.line)
		}
	}
	savedQuick := quickParsed
	defer func() { quickParsed = savedQuick }()
	var pieces, whole atomic.Int64
	quickParsed = func(piece bool) {
		if piece {
			pieces.Add(1)
		} else {
			whole.Add(1)
		}
	}
	f, pre, ok := parseConfigSplit(src, "f.hcl", 2, false)
	if !ok || pre != nil {
		t.Fatal("the chain was not parsed in pieces")
	}
	if pieces.Load() < 8 || whole.Load() != 1 {
		t.Errorf("the quick parser took %d pieces and %d shells", pieces.Load(), whole.Load())
	}
	want, _ := hclsyntax.ParseConfig(src, "f.hcl", hcl.InitialPos)
	if !reflect.DeepEqual(want.Body, f.Body) || !bytes.Equal(f.Bytes, src) {
		t.Error("the chain parsed in pieces differs from hclsyntax's")
	}
	if f.OutermostBlockAtPos(hcl.Pos{Line: 5, Column: 5, Byte: 60}) == nil {
		t.Error("the file's navigation finds no block")
	}
	whole.Store(0)
	if f, diags := parseConfig(testsrc.TemplateChain(3), "f.hcl"); len(diags) > 0 || f == nil || whole.Load() != 1 {
		t.Errorf("a small file was not parsed quickly whole (%d)", whole.Load())
	}
}

// FuzzQuickParse: wherever the quick parser takes a text, hclsyntax
// parses it without a diagnostic to the same body.
func FuzzQuickParse(f *testing.F) {
	for _, src := range quickSources(f) {
		f.Add(string(src))
	}
	f.Add("a = { b = [1, c.d], \"e\": null }\n")
	f.Add("x \"y\" z { a = 1 }\n")
	f.Fuzz(func(t *testing.T, src string) {
		checkQuick(t, "input", []byte(src), hcl.InitialPos)
		checkQuick(t, "placed input", []byte(src), hcl.Pos{Line: 3, Column: 1, Byte: 17})
	})
}

// TestQuickParseAllocs: a piece of the template chain is parsed with at
// most 13 allocations a step: a block and its body together, a block's
// one label with its range, a string with its part, and each identifier
// once a piece (19 allocations a step when each node was its own).
func TestQuickParseAllocs(t *testing.T) {
	src := testsrc.TemplateChain(101)
	runs, ok := nestedBlocks(src)
	if !ok {
		t.Fatal("the chain was not cut")
	}
	s := runs[0]
	piece := src[s[1].start:s[100].end]
	pos := hcl.Pos{Line: s[1].line, Column: 1, Byte: s[1].start}
	n := testing.AllocsPerRun(20, func() {
		if _, ok := quickParseBody(piece, "f.hcl", pos); !ok {
			t.Fatal("declined")
		}
	})
	if n/100 > 13 {
		t.Errorf("%.1f allocations a step, want at most 13", n/100)
	}
}
