package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A fenced block in README.md or spec/*.md that shows a file of the
// repository is marked by the line
//
//	<!-- file: examples/hello.hcl -->
//
// right before its opening fence (invisible once rendered, so the block is
// the file and nothing else). TestDocFiles checks that each marked block is
// byte for byte the file it names, and that every HCL block declaring the
// workflow of an example file is marked: a snippet that looks like an
// example claims to be it.

var (
	fileMarker = regexp.MustCompile(`^<!-- file: (\S+) -->$`)
	workflowRE = regexp.MustCompile(`(?m)^workflow "([^"]+)"`)
)

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	doc    string
	line   int    // of the opening fence, 1-based
	lang   string // the fence's info string
	marked string // the path of its file marker, "" when none
	text   string // the lines between the fences, each ending in \n
}

// docBlocks splits a Markdown file into its fenced blocks.
func docBlocks(doc string, src []byte) []docBlock {
	var out []docBlock
	lines := strings.SplitAfter(string(src), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\n")
		if !strings.HasPrefix(l, "```") {
			continue
		}
		b := docBlock{doc: doc, line: i + 1, lang: strings.TrimPrefix(l, "```")}
		if i > 0 {
			if m := fileMarker.FindStringSubmatch(strings.TrimRight(lines[i-1], "\n")); m != nil {
				b.marked = m[1]
			}
		}
		var body strings.Builder
		for i++; i < len(lines) && strings.TrimRight(lines[i], "\n") != "```"; i++ {
			body.WriteString(lines[i])
		}
		b.text = body.String()
		out = append(out, b)
	}
	return out
}

func TestDocFiles(t *testing.T) {
	root := ".."
	docs := []string{"README.md"}
	specs, err := filepath.Glob(filepath.Join(root, "spec", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		docs = append(docs, filepath.Join("spec", filepath.Base(s)))
	}
	// The workflows the example files declare, by name.
	examples := map[string]string{}
	files, err := filepath.Glob(filepath.Join(root, "examples", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range workflowRE.FindAllStringSubmatch(string(src), -1) {
			examples[m[1]] = filepath.ToSlash(filepath.Join("examples", filepath.Base(f)))
		}
	}
	marked := 0
	for _, doc := range docs {
		src, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range docBlocks(doc, src) {
			if b.marked != "" {
				marked++
				want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(b.marked)))
				if err != nil {
					t.Errorf("%s:%d: the block claims to be %s, which cannot be read: %v", doc, b.line, b.marked, err)
					continue
				}
				if !bytes.Equal([]byte(b.text), want) {
					t.Errorf("%s:%d: the block claims to be %s but differs from it; copy the file into the block", doc, b.line, b.marked)
				}
				continue
			}
			if b.lang != "hcl" {
				continue
			}
			for _, m := range workflowRE.FindAllStringSubmatch(b.text, -1) {
				if f, ok := examples[m[1]]; ok {
					t.Errorf("%s:%d: the block declares workflow %q, the workflow of %s, without the marker <!-- file: %s --> before it: a snippet shown as an example must be that file", doc, b.line, m[1], f, f)
				}
			}
		}
	}
	if marked == 0 {
		t.Errorf("no block of %v is marked as a file; the README's hello example must be", docs)
	}
}

// TestDocBlocksSplit checks the splitting the check relies on: a marker
// applies only to the block right after it.
func TestDocBlocksSplit(t *testing.T) {
	src := "text\n<!-- file: a.hcl -->\n```hcl\nx = 1\n\ny\n```\n\n```sh\nz\n```\n"
	bs := docBlocks("d.md", []byte(src))
	if len(bs) != 2 {
		t.Fatalf("%d blocks, want 2: %+v", len(bs), bs)
	}
	if bs[0].marked != "a.hcl" || bs[0].text != "x = 1\n\ny\n" || bs[0].lang != "hcl" || bs[0].line != 3 {
		t.Errorf("first block: %+v", bs[0])
	}
	if bs[1].marked != "" || bs[1].text != "z\n" || bs[1].lang != "sh" {
		t.Errorf("second block: %+v", bs[1])
	}
}

// mdName is a Markdown file a document cites by name.
var mdName = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b`)

// TestDocsCiteOnlyRepositoryFiles: every Markdown file that README.md and
// spec/*.md name (language.md, spec/README.md, examples/README.md …) is in
// the repository, at the path given or beside the citing document, so the
// reference stands alone: no document cites one that is not there.
func TestDocsCiteOnlyRepositoryFiles(t *testing.T) {
	root := ".."
	docs := []string{"README.md"}
	specs, err := filepath.Glob(filepath.Join(root, "spec", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		docs = append(docs, filepath.Join("spec", filepath.Base(s)))
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil
	}
	for _, doc := range docs {
		src, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(strings.ToLower(line), "brief") {
				t.Errorf("%s:%d: cites a brief, which the repository does not hold: %s", doc, i+1, line)
			}
			for _, name := range mdName.FindAllString(line, -1) {
				if strings.Contains(name, "://") {
					continue
				}
				if !exists(name) && !exists(filepath.ToSlash(filepath.Join(filepath.Dir(doc), name))) {
					t.Errorf("%s:%d: names %s, which is not in the repository", doc, i+1, name)
				}
			}
		}
	}
}
