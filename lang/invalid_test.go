package lang

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/internal/testsrc"
	"github.com/hashicorp/hcl/v2"
)

// The invalid corpus: every file under testdata/invalid marks each
// expected error with a comment "# ERROR: <Summary>".
//
//   - A marker after code on a line expects an error diagnostic with that
//     exact Summary whose Subject starts on that line.
//   - A line holding only marker comments applies them to the next line that
//     is not itself a marker line (for errors on lines that cannot hold a
//     comment, such as the end of the file).
//
// Every marker must be matched by a diagnostic, and every error diagnostic
// by a marker.

var markerRe = regexp.MustCompile(`#\s*ERROR:\s*(.+?)\s*$`)

type marker struct {
	line    int
	summary string
}

// readMarkers returns the markers of a file.
func readMarkers(src []byte) []marker {
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
				out = append(out, marker{line, s})
			}
			pending = nil
			continue
		}
		code := strings.TrimSpace(text[:strings.Index(text, "#")])
		if code == "" {
			pending = append(pending, m[1])
			continue
		}
		for _, s := range pending {
			out = append(out, marker{line, s})
		}
		pending = nil
		out = append(out, marker{line, m[1]})
	}
	for _, s := range pending {
		out = append(out, marker{line + 1, s})
	}
	return out
}

func TestInvalidCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("the invalid corpus has %d files, want at least 20", len(files))
	}
	total := 0
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			want := readMarkers(src)
			if len(want) == 0 {
				t.Fatalf("%s has no ERROR markers", name)
			}
			total += len(want)
			// Children are looked up as the CLI does without a database.
			_, diags := LoadFileWith(name, src, LoadOptions{Stored: noStore})
			got := map[marker]int{}
			for _, d := range diags {
				if d.Severity != hcl.DiagError {
					continue
				}
				if d.Subject == nil {
					t.Errorf("error without a subject: %s: %s", d.Summary, d.Detail)
					continue
				}
				got[marker{d.Subject.Start.Line, d.Summary}]++
			}
			for _, m := range want {
				if got[m] == 0 {
					t.Errorf("line %d: expected error %q; got:\n%s", m.line, m.summary, testsrc.Describe(diags))
					continue
				}
				got[m]--
			}
			var extra []string
			for m, n := range got {
				if n > 0 {
					extra = append(extra, fmt.Sprintf("line %d: %q", m.line, m.summary))
				}
			}
			sort.Strings(extra)
			for _, e := range extra {
				t.Errorf("unexpected error at %s; all diagnostics:\n%s", e, testsrc.Describe(diags))
			}
		})
	}
	if total < 60 {
		t.Errorf("the invalid corpus has %d markers, want at least 60", total)
	}
}

// noStore is a store without workflows.
func noStore(string) ([]*graph.Graph, error) { return nil, nil }
