package server

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeCurlSendsJSON: every curl command of README.md and
// spec/api.md that sends a body (-d) to a /v1/ route sends it as JSON
// (Content-Type: application/json, written out or through a shell
// variable the same block sets), so a reader who pastes it is not
// answered 415.
func TestReadmeCurlSendsJSON(t *testing.T) {
	checked := 0
	for _, doc := range []string{"../README.md", "../spec/api.md"} {
		src, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]string{}
		setVar := regexp.MustCompile(`^(\w+)="([^"]*)"`)
		lines := strings.Split(string(src), "\n")
		for i := 0; i < len(lines); i++ {
			start := i
			line := strings.TrimSpace(lines[i])
			// Join continued lines, so a command is one line.
			for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(lines[i])
			}
			if strings.HasPrefix(line, "```") {
				vars = map[string]string{} // a new block
			}
			if m := setVar.FindStringSubmatch(line); m != nil {
				vars[m[1]] = m[2]
			}
			if !strings.HasPrefix(line, "curl ") || !strings.Contains(line, "/v1/") || !regexp.MustCompile(`\s(-d|--data\S*)\s`).MatchString(line) {
				continue
			}
			checked++
			expanded := line
			for k, v := range vars {
				expanded = strings.ReplaceAll(expanded, "$"+k, v)
			}
			if !regexp.MustCompile(`(?i)Content-Type:\s*application/json`).MatchString(expanded) {
				t.Errorf("%s, line %d: the command sends a body without Content-Type: application/json, which the server refuses (415):\n%s", doc, start+1, line)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no curl command with a body was found; the pattern missed them")
	}
}
