// Package spec holds flowrun's reference documents and the conformance
// suite that checks the engine against them: every spec/testdata/*.txtar
// archive is a workflow, its inputs, a script of outside events and the
// expected `show --json` of the run, run by TestConformance on a fresh
// SQLite store with a fake clock.
//
// The suite drives the engine (interp) and the compiler (lang) through
// their exported APIs only; it must not reach into their internals or
// change what they do, so that a failing case always means the engine (or
// the case) disagrees with the spec. README.md documents the archive
// format.
package spec

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var runSkipped = flag.Bool("skipped", false, "also run the cases marked skip: (known engine bugs), to see whether they pass now")

// testCase is one parsed archive.
type testCase struct {
	name    string
	comment string
	skip    string // the known bug that makes the case skip, from a "skip:" line
	files   map[string][]byte
	order   []string // file names in archive order
}

func (c *testCase) file(name string) ([]byte, bool) {
	b, ok := c.files[name]
	return b, ok
}

// loadCase parses an archive and checks its sections.
func loadCase(path string) (*testCase, error) {
	a, err := txtar.ParseFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	c := &testCase{name: strings.TrimSuffix(filepath.Base(path), ".txtar"), comment: string(a.Comment), files: map[string][]byte{}}
	sc := bufio.NewScanner(bytes.NewReader(a.Comment))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "skip:"); ok {
			c.skip = strings.TrimSpace(rest)
			if c.skip == "" {
				return nil, fmt.Errorf("%s: a skip: line must name the engine bug that makes the case fail", path)
			}
		}
	}
	if strings.TrimSpace(strings.ReplaceAll(c.comment, "skip:"+c.skip, "")) == "" {
		return nil, fmt.Errorf("%s: the comment before the first section must say what the case checks", path)
	}
	for _, f := range a.Files {
		if _, dup := c.files[f.Name]; dup {
			return nil, fmt.Errorf("%s: section %q appears twice", path, f.Name)
		}
		if f.Name == "" || filepath.IsAbs(f.Name) || strings.Contains(f.Name, "..") {
			return nil, fmt.Errorf("%s: section name %q must be a relative path inside the case", path, f.Name)
		}
		c.files[f.Name] = f.Data
		c.order = append(c.order, f.Name)
	}
	if _, ok := c.files["workflow.hcl"]; !ok {
		return nil, fmt.Errorf("%s: the case has no workflow.hcl section", path)
	}
	_, hasWant := c.files["want.json"]
	_, hasErrs := c.files["want-errors"]
	if hasWant == hasErrs {
		return nil, fmt.Errorf("%s: the case needs exactly one of the sections want.json and want-errors", path)
	}
	if _, ok := c.files["script"]; ok && hasErrs {
		return nil, fmt.Errorf("%s: a want-errors case has no script: the workflow never runs", path)
	}
	return c, nil
}

// TestConformance runs every spec/testdata/*.txtar case as a subtest
// named after its file.
func TestConformance(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no conformance cases in testdata/*.txtar")
	}
	sort.Strings(paths)
	for _, p := range paths {
		c, err := loadCase(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.skip != "" && !*runSkipped {
				t.Skipf("known engine bug: %s (run with -skipped to try it)", c.skip)
			}
			runCase(t, c)
		})
	}
}

// TestCaseNames checks the naming rule of README.md: lower case
// TOPIC_WHAT.
func TestCaseNames(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, p := range paths {
		base := filepath.Base(p)
		name, ok := strings.CutSuffix(base, ".txtar")
		if !ok {
			t.Errorf("%s: testdata holds only .txtar cases", p)
			continue
		}
		if name != strings.ToLower(name) || !strings.Contains(name, "_") || strings.ContainsAny(name, " -") {
			t.Errorf("%s: name cases TOPIC_WHAT in lower case with underscores", p)
		}
	}
	if _, err := os.Stat("README.md"); err != nil {
		t.Errorf("spec/README.md must document the case format: %v", err)
	}
}
