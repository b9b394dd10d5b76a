package spec

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSecurityPromisesHaveTests checks that every test, fuzz target and
// script that security.md names exists, so the page cannot promise on the
// strength of a test that was renamed or deleted.
func TestSecurityPromisesHaveTests(t *testing.T) {
	doc, err := os.ReadFile("security.md")
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	declared := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range declared.FindAllSubmatch(src, -1) {
				funcs[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(doc), -1) {
		ref := m[1]
		switch {
		case regexp.MustCompile(`^(Test|Fuzz)\w+$`).MatchString(ref):
			named++
			if !funcs[ref] {
				t.Errorf("security.md names %s, which no test file declares", ref)
			}
		case strings.HasSuffix(ref, ".txtar") || strings.HasSuffix(ref, ".hcl"):
			named++
			path := filepath.Join("..", ref)
			if !strings.Contains(ref, "/") {
				path = filepath.Join("..", "cmd", "flowrun", "testdata", "script", ref)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("security.md names %s: %v", ref, err)
			}
		}
	}
	if named < 50 {
		t.Errorf("security.md names only %d tests; the pattern missed them", named)
	}
}
