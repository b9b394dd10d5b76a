package lsp

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang"
)

// Every block and attribute lang's decoder accepts has exactly one docs
// row, and every row names something the decoder accepts.
func TestDocsMatchSchema(t *testing.T) {
	want := map[string]bool{}
	var walk func(path []string)
	walk = func(path []string) {
		sch, ok := lang.SchemaOf(path)
		if !ok {
			t.Fatalf("SchemaOf(%v) not ok", path)
		}
		if len(path) > 0 {
			want[blockKey(path)] = true
		}
		for _, a := range sch.Attributes {
			want[attrKey(path, a)] = true
		}
		for _, b := range sch.Blocks {
			walk(append(slices.Clone(path), b.Type))
		}
	}
	walk(nil)
	for k := range want {
		if docIndex()[k] == nil {
			t.Errorf("no docs row for %q, which the decoder accepts: add its row to lsp/docs.go (type and default as in its spec/language.md row)", k)
		}
	}
	for _, d := range docs {
		if !want[d.Key] {
			t.Errorf("docs row %q names nothing the decoder accepts", d.Key)
		}
	}
	if len(docIndex()) != len(docs) {
		t.Errorf("%d docs rows but %d keys: a key is repeated", len(docs), len(docIndex()))
	}
}

// Each attribute's Type and Default are the cells of its row in
// spec/language.md, in the section the row names.
func TestDocsMatchSpec(t *testing.T) {
	spec, err := os.ReadFile("../spec/language.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(spec), "\n")
	for _, d := range docs {
		sec := section(lines, d.Section)
		if sec == nil {
			t.Errorf("%s: no section %q in spec/language.md", d.Key, d.Section)
			continue
		}
		if d.Type == "" && d.Default == "" {
			continue
		}
		name := d.Key[strings.LastIndexByte(d.Key, '.')+1:]
		found := false
		for _, l := range sec {
			cells := tableCells(l)
			if cells == nil || !slices.ContainsFunc(cells, func(c string) bool {
				c = strings.TrimSuffix(c, " †")
				return c == "`"+name+"`" || c == "`"+d.Key+"`"
			}) {
				continue
			}
			if (d.Type == "" || slices.Contains(cells, d.Type)) && (d.Default == "" || slices.Contains(cells, d.Default)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: no row of %s in spec/language.md has `%s` with type %q and default %q", d.Key, d.Section, name, d.Type, d.Default)
		}
	}
}

// section returns the lines under the heading that starts with prefix,
// up to the next heading of the same or a higher level.
func section(lines []string, prefix string) []string {
	level := strings.IndexByte(prefix, ' ')
	for i, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if h := strings.IndexByte(lines[j], ' '); strings.HasPrefix(lines[j], "#") && h > 0 && h <= level && strings.Trim(lines[j][:h], "#") == "" {
				return lines[i+1 : j]
			}
		}
		return lines[i+1:]
	}
	return nil
}

// tableCells splits a markdown table row into trimmed cells (nil for a
// line that is not a row).
func tableCells(l string) []string {
	l = strings.TrimSpace(l)
	if !strings.HasPrefix(l, "|") || !strings.HasSuffix(l, "|") {
		return nil
	}
	parts := strings.Split(l[1:len(l)-1], " | ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
