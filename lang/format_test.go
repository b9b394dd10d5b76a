package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
)

const irMessy = "\n\n# leading comment   \nworkflow \"x\" {   \r\n  version = \"1.0.0\"   # trailing comment  \n\n\n\n  description=\"d\"\n  key   =  \"input.id\"\n\n\n  step \"a\" {\nexec { command = [\"a\",\"b\"] }\n    timeout=\"1s\"\n}\n  step \"h\" {\n    set {\n      text = <<EOT\n  keep   \n\n\n\tx \nEOT\n    }\n  }\n  /* block\n     comment */   \n}\n\n\n"

const irTidy = `# leading comment
workflow "x" {
  version = "1.0.0" # trailing comment

  description = "d"
  key         = "input.id"

  step "a" {
    exec { command = ["a", "b"] }
    timeout = "1s"
  }
  step "h" {
    set {
      text = <<EOT
  keep   


	x 
EOT
    }
  }
  /* block
     comment */
}
`

func TestFormat(t *testing.T) {
	out, diags := Format("x.hcl", []byte(irMessy))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if string(out) != irTidy {
		t.Fatalf("Format =\n%q\nwant\n%q", out, irTidy)
	}
}

func TestFormatIdempotent(t *testing.T) {
	inputs := []string{
		irMessy,
		irTidy,
		"",
		"\n\n\n",
		"a = 1",
		"a=1\n\n\n\nb=2   \n",
		"x = <<-EOT\n    indented   \n\n\n  EOT\n\n\ny = 1\n",
		"block {\n\n\n}\n",
		"# only a comment  \n\n\n# another\n",
		"a = {\n  b = [1,\n 2,\n\n\n 3]\n}\n",
	}
	for _, in := range inputs {
		once, diags := Format("x.hcl", []byte(in))
		if diags.HasErrors() {
			t.Fatalf("Format(%q): %v", in, diags)
		}
		twice, diags := Format("x.hcl", once)
		if diags.HasErrors() {
			t.Fatalf("Format(Format(%q)): %v", in, diags)
		}
		if string(once) != string(twice) {
			t.Errorf("Format is not idempotent on %q:\n%q\n%q", in, once, twice)
		}
		for i, line := range strings.Split(string(once), "\n") {
			if strings.Contains(in, "EOT") {
				break // heredoc bodies keep their whitespace
			}
			if strings.TrimRight(line, " \t") != line {
				t.Errorf("line %d of Format(%q) has trailing whitespace", i+1, in)
			}
		}
		if !strings.Contains(in, "EOT") && strings.Contains(string(once), "\n\n\n") || strings.HasPrefix(string(once), "\n") {
			t.Errorf("Format(%q) keeps runs of blank lines: %q", in, once)
		}
		if len(once) > 0 && (!strings.HasSuffix(string(once), "\n") || strings.HasSuffix(string(once), "\n\n")) {
			t.Errorf("Format(%q) does not end with exactly one newline: %q", in, once)
		}
	}
}

func TestFormatSyntaxError(t *testing.T) {
	src := "workflow \"x\" {\n  version = \n}\n"
	out, diags := Format("bad.hcl", []byte(src))
	if out != nil || !diags.HasErrors() {
		t.Fatalf("want syntax diagnostics, got %q %v", out, diags)
	}
	d := diags[0]
	if d.Subject == nil || d.Subject.Filename != "bad.hcl" || d.Subject.Start.Line < 2 {
		t.Fatalf("diagnostic has no useful range: %+v", d)
	}
}

// TestFormatKeepsGraphHash: formatting, comments and blank lines do not
// change the compiled graph (positions are not in the IR).
func TestFormatKeepsGraphHash(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "valid", "*.hcl"))
	examples, _ := filepath.Glob(filepath.Join("..", "examples", "*.hcl"))
	for _, f := range examples {
		if !IsTestFile(f) { // test files compile to no graph
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Skip("no workflow files to format")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), "<<") {
				t.Skip("heredoc bodies cannot be re-indented without changing them")
			}
			// Mangle the layout: comments, blank lines, no indentation.
			var mangled strings.Builder
			for _, line := range strings.Split(string(src), "\n") {
				mangled.WriteString("\n# a comment\n\n" + strings.TrimSpace(line) + "   \n")
			}
			out, diags := Format(f, []byte(mangled.String()))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			hashes := map[string]string{}
			for i, text := range []string{string(src), mangled.String(), string(out)} {
				m, diags := LoadFile(f, []byte(text))
				if diags.HasErrors() || m == nil {
					t.Fatalf("version %d does not compile: %v", i, diags)
				}
				for _, w := range m.Workflows {
					h, err := graph.Hash(w.Graph)
					if err != nil {
						t.Fatal(err)
					}
					if prev, ok := hashes[w.Graph.Workflow]; ok && prev != h {
						t.Fatalf("workflow %q: layout changed the graph hash", w.Graph.Workflow)
					}
					hashes[w.Graph.Workflow] = h
				}
			}
		})
	}
}
