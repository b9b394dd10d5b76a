package lang

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/internal/testsrc"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestParseConfigSplit checks that parsing a file in pieces gives the body
// of parsing it whole, and falls back to a whole parse (and its
// diagnostics) where the file cannot be cut or does not parse.
func TestParseConfigSplit(t *testing.T) {
	savedMin, savedBlocks := parallelParseMin, parallelParseBlocks
	defer func() { parallelParseMin, parallelParseBlocks = savedMin, savedBlocks }()
	parallelParseMin, parallelParseBlocks = 0, 2

	big := string(testsrc.Chain(300))
	sources := map[string]string{
		"chain": big,
		"comments and blank lines": strings.Replace(strings.Replace(big, "  step \"s7\" {", "\n  # a comment\n  // another\n\n  step \"s7\" {", 1),
			"  step \"s9\" {", "  step \"s9\" { # trailing\n  }\n  step \"s9b\" { x = 1 }\n  step \"s9c\" {", 1),
		"attribute between steps": strings.Replace(big, "  step \"s20\" {", "  description = \"a {brace} \\\" quote\"\n  step \"s20\" {", 1),
		"multi-line attribute":    strings.Replace(big, "  step \"s20\" {", "  meta = {\n    a = [1,\n 2]\n  }\n  step \"s20\" {", 1),
		"two workflows":           big + strings.Replace(big, "workflow \"big\"", "workflow \"big2\"", 1),
		"syntax error":            strings.Replace(big, "set {\n      n = \"{{ steps.s100", "set {\n      n = \"{{ steps.s100\" +", 1),
		"unbalanced":              strings.Replace(big, "  step \"s50\" {", "  step \"s50\" {{", 1),
		"extra brace":             strings.Replace(big, "  step \"s50\" {", "  }\n  step \"s50\" {", 1),
		"heredoc":                 strings.Replace(big, "label = \"step 3 of 300\"", "label = <<EOT\nstep {\nEOT\n", 1),
		"unterminated string":     strings.Replace(big, "label = \"step 3 of 300\"", "label = \"step 3 of 300", 1),
		"steps in a list":         strings.Replace(big, "  step \"s5\" {", "  x = [\n  step \"s5\" {", 1),
		"CRLF line ends":          strings.ReplaceAll(big, "\n", "\r\n"),
		"tabs and unicode":        strings.ReplaceAll(strings.ReplaceAll(big, "  ", "\t"), "of 300", "of 300 — ü̈ 🙂"),
	}
	files, err := filepath.Glob("testdata/*/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[f] = string(b)
	}
	split := 0
	for name, src := range sources {
		want, wantDiags := hclsyntax.ParseConfig([]byte(src), "f.hcl", hcl.InitialPos)
		got, gotDiags := parseConfig([]byte(src), "f.hcl")
		if !reflect.DeepEqual(want.Body, got.Body) || string(got.Bytes) != src {
			t.Errorf("%s: body differs from a whole parse", name)
		}
		if !reflect.DeepEqual(wantDiags, gotDiags) {
			t.Errorf("%s: diagnostics differ:\n%v\nvs\n%v", name, gotDiags, wantDiags)
		}
		if _, _, ok := parseConfigSplit([]byte(src), "f.hcl", 2, false); ok {
			split++
		}
	}
	if _, _, ok := parseConfigSplit([]byte(big), "f.hcl", 2, false); !ok {
		t.Error("the chain was not parsed in pieces")
	}
	for _, name := range []string{"syntax error", "unbalanced", "extra brace", "heredoc", "unterminated string", "steps in a list"} {
		if _, _, ok := parseConfigSplit([]byte(sources[name]), "f.hcl", 2, false); ok {
			t.Errorf("%s: parsed in pieces", name)
		}
	}
	for _, name := range []string{"comments and blank lines", "attribute between steps", "multi-line attribute", "two workflows", "CRLF line ends", "tabs and unicode"} {
		if _, _, ok := parseConfigSplit([]byte(sources[name]), "f.hcl", 2, false); !ok {
			t.Errorf("%s: not parsed in pieces", name)
		}
	}
	t.Logf("%d of %d sources parsed in pieces", split, len(sources))
}

// FuzzParseConfigSplit checks that a file parsed in pieces, whenever it can
// be, gives the body and diagnostics of a whole parse.
func FuzzParseConfigSplit(f *testing.F) {
	f.Add(string(testsrc.Chain(5)))
	f.Add("workflow \"w\" {\n  a { b = \"}\" }\n  c \"d\" {\n  }\n  e = [\n  f {\n  }\n]\n}\n")
	f.Fuzz(func(t *testing.T, src string) {
		savedMin, savedBlocks := parallelParseMin, parallelParseBlocks
		defer func() { parallelParseMin, parallelParseBlocks = savedMin, savedBlocks }()
		parallelParseMin, parallelParseBlocks = 0, 1
		want, wantDiags := hclsyntax.ParseConfig([]byte(src), "f.hcl", hcl.InitialPos)
		got, gotDiags := parseConfig([]byte(src), "f.hcl")
		if !reflect.DeepEqual(want.Body, got.Body) || !reflect.DeepEqual(wantDiags, gotDiags) {
			t.Errorf("parsing in pieces differs from a whole parse:\n%v\nvs\n%v", gotDiags, wantDiags)
		}
	})
}
