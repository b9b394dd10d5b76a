package testfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/hashicorp/hcl/v2"
)

// The invalid corpus: every file under testdata/invalid (test files and
// the upgrade files they name) marks each expected error with a comment
// "# ERROR: <Summary>", as lang's own corpus does: after code on a line,
// it expects an error with that Summary starting on that line; on a line
// of its own, on the next line that is not a marker line. Every marker
// must be matched by a diagnostic, and every error by a marker. The tests
// are checked against the workflows of testdata/wf.

var markerRe = regexp.MustCompile(`#\s*ERROR:\s*(.+?)\s*$`)

type marker struct {
	file    string
	line    int
	summary string
}

func readMarkers(file string, src []byte) []marker {
	var out []marker
	var pending []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		m := markerRe.FindStringSubmatch(text)
		if m == nil {
			for _, s := range pending {
				out = append(out, marker{file, line, s})
			}
			pending = nil
			continue
		}
		if strings.TrimSpace(text[:strings.Index(text, "#")]) == "" {
			pending = append(pending, m[1])
			continue
		}
		for _, s := range pending {
			out = append(out, marker{file, line, s})
		}
		pending = nil
		out = append(out, marker{file, line, m[1]})
	}
	for _, s := range pending {
		out = append(out, marker{file, line + 1, s})
	}
	return out
}

func loadWF(t *testing.T) *lang.Module {
	t.Helper()
	mod, diags := lang.LoadPaths([]string{"testdata/wf"})
	if diags.HasErrors() {
		t.Fatalf("testdata/wf: %s", diags.Error())
	}
	return mod
}

// checkFile parses and checks one test file as flowrun test does.
func checkFile(t *testing.T, name string, mod *lang.Module) (*File, hcl.Diagnostics) {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := Parse(name, src)
	if f.Syntax {
		return f, diags
	}
	files := map[string]*hcl.File{}
	return f, Sorted(append(diags, Check(f, mod, filepath.Dir(name), nil, files)...))
}

func TestInvalidCorpus(t *testing.T) {
	mod := loadWF(t)
	names, err := filepath.Glob("testdata/invalid/*.test.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 4 {
		t.Fatalf("the invalid corpus has %d test files", len(names))
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			_, diags := checkFile(t, name, mod)
			var want []marker
			for _, fn := range append([]string{name}, upgradeFiles(t)...) {
				src, err := os.ReadFile(fn)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, readMarkers(fn, src)...)
			}
			// Reported in file and position order (language.md §16).
			for i := 1; i < len(diags); i++ {
				a, b := diags[i-1].Subject, diags[i].Subject
				if a != nil && b != nil && a.Filename == b.Filename && a.Start.Byte > b.Start.Byte {
					t.Errorf("diagnostic at %s:%d comes after one at line %d", b.Filename, b.Start.Line, a.Start.Line)
				}
			}
			got := map[marker]int{}
			for _, d := range diags {
				if d.Severity != hcl.DiagError {
					continue
				}
				if d.Subject == nil {
					t.Errorf("error without a subject: %s: %s", d.Summary, d.Detail)
					continue
				}
				got[marker{d.Subject.Filename, d.Subject.Start.Line, d.Summary}]++
			}
			for _, m := range want {
				if m.file != name && got[m] == 0 {
					continue // an upgrade file's markers count where a test names it
				}
				if got[m] == 0 {
					t.Errorf("%s:%d: expected error %q; got:\n%s", m.file, m.line, m.summary, describe2(diags))
					continue
				}
				got[m]--
			}
			var extra []string
			for m, n := range got {
				if n > 0 {
					extra = append(extra, fmt.Sprintf("%s:%d: %q", m.file, m.line, m.summary))
				}
			}
			sort.Strings(extra)
			for _, e := range extra {
				t.Errorf("unexpected error at %s; all diagnostics:\n%s", e, describe2(diags))
			}
		})
	}
}

func upgradeFiles(t *testing.T) []string {
	l, err := filepath.Glob("testdata/invalid/up/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func describe2(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		if d.Subject != nil {
			fmt.Fprintf(&b, "  %s:%d:%d: %s: %s\n", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail)
		} else {
			fmt.Fprintf(&b, "  %s: %s\n", d.Summary, d.Detail)
		}
	}
	return b.String()
}

func TestSentence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"data.x is a number", "data.x is a number."},
		{`data has the field "stdot". Did you mean "stdout"?`, `data has the field "stdot". Did you mean "stdout"?`},
		{"done.", "done."},
	} {
		if got := sentence(errors.New(c.in)); got != c.want {
			t.Errorf("sentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCallsSuggestsValidMocksOnly: the "did you mean" of a calls entry
// that names no mock suggests only a mock of a step the workflow has.
func TestCallsSuggestsValidMocksOnly(t *testing.T) {
	mod := loadWF(t)
	name := filepath.Join(t.TempDir(), "ship.test.hcl")
	src := `test "t" {
  inputs = { service = "web" }
  mock "bild" { output = {} }
  mock "build" { output = { stdout = "" } }
  expect { calls = { bilt = 1 } }
}
`
	if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, diags := checkFile(t, name, mod)
	found := false
	for _, d := range diags {
		if d.Summary == "Calls of a step that is not mocked" {
			found = true
			if strings.Contains(d.Detail, `"bild"?`) || !strings.Contains(d.Detail, `"build"?`) {
				t.Errorf("suggestion: %s", d.Detail)
			}
		}
	}
	if !found {
		t.Fatalf("no calls error; got:\n%s", describe2(diags))
	}
}

// TestMockForeachSays: a mock of a foreach step gives one item's output,
// and a mock that gives the list says so, rather than that the step's
// output is the item's type ("The output of step "each" is object(...):
// output is a list"), which reads as if a foreach step's output were not
// a list.
func TestMockForeachSays(t *testing.T) {
	dir := t.TempDir()
	wf := `workflow "fan" {
  version = "1.0.0"
  step "each" {
    foreach { items = "[1, 2]" }
    exec { command = ["echo", "{{ item }}"] }
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "fan.hcl"), []byte(wf), 0o600); err != nil {
		t.Fatal(err)
	}
	mod, ld := lang.LoadPaths([]string{dir})
	if ld.HasErrors() {
		t.Fatal(ld.Error())
	}
	name := filepath.Join(dir, "fan.test.hcl")
	src := `test "t" {
  mock "each" { output = [{ stdout = "1" }, { stdout = "2" }] }
  expect { status = "completed" }
}
`
	if err := os.WriteFile(name, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, diags := checkFile(t, name, mod)
	for _, d := range diags {
		if d.Summary == "Mock output does not match the step" {
			if !strings.HasPrefix(d.Detail, `A mock of step "each" gives one foreach item's output, of type object(`) || !strings.Contains(d.Detail, "(the step's output is the list of them): output is a list") {
				t.Errorf("detail: %s", d.Detail)
			}
			return
		}
	}
	t.Fatalf("no mock output error; got:\n%s", describe2(diags))
}
