package lang

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const tinyWorkflow = `workflow "%s" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
}
`

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func summaries(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary)
	}
	return out
}

func TestLoadPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.hcl"), strings.ReplaceAll(tinyWorkflow, "%s", "beta"))
	writeFile(t, filepath.Join(dir, "a.hcl"), strings.ReplaceAll(tinyWorkflow, "%s", "alpha"))
	writeFile(t, filepath.Join(dir, "notes.txt"), "not a workflow")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sub", "c.hcl"), strings.ReplaceAll(tinyWorkflow, "%s", "gamma"))

	m, diags := LoadPaths([]string{dir, filepath.Join(dir, "a.hcl")})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	var names []string
	for _, w := range m.Workflows {
		names = append(names, w.Name+"@"+filepath.Base(w.File))
		if w.Graph == nil {
			t.Errorf("%s has no graph", w.Name)
		}
	}
	if got := strings.Join(names, " "); got != "alpha@a.hcl beta@b.hcl" {
		t.Errorf("workflows %q: want the directory's files sorted, not recursive, each once", got)
	}
	if len(m.Files) != 2 {
		t.Errorf("files %v", m.Files)
	}
}

func TestLoadPathsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(dir, "one.hcl")
	two := filepath.Join(dir, "two.hcl")
	writeFile(t, one, strings.ReplaceAll(tinyWorkflow, "%s", "same"))
	writeFile(t, two, "\n\n"+strings.ReplaceAll(tinyWorkflow, "%s", "same"))

	m, diags := LoadPaths([]string{filepath.Join(dir, "missing.hcl"), empty, one, two})
	got := strings.Join(summaries(diags), ", ")
	if got != "Path not found, No workflow files, Duplicate workflow" {
		t.Fatalf("summaries %q", got)
	}
	dup := diags[2]
	if dup.Subject == nil || dup.Subject.Filename != two || dup.Subject.Start.Line != 3 || !strings.Contains(dup.Detail, one+":1") {
		t.Errorf("duplicate: subject %v detail %q; want the second declaration, naming the first", dup.Subject, dup.Detail)
	}
	if len(m.Workflows) != 1 || m.Workflows[0].File != one {
		t.Errorf("workflows %+v: the first declaration stays", m.Workflows)
	}

	_, diags = LoadPaths([]string{empty + "/../one.hcl"})
	if diags.HasErrors() {
		t.Errorf("a path with .. should load: %v", diags)
	}
	writeFile(t, filepath.Join(empty, "blank.hcl"), "# nothing here\n")
	_, diags = LoadPaths([]string{empty})
	if got := strings.Join(summaries(diags), ", "); got != "No workflow" {
		t.Errorf("summaries %q", got)
	}
}

func TestLoadFilePartial(t *testing.T) {
	t.Parallel()
	src := `workflow "good" {
  version = "1.0.0"
  step "a" {
    set { x = 1 }
  }
}

workflow "bad" {
  version = "1.0.0"
  step "a" {
    when = "input.nope"
    set { x = 1 }
  }
}
`
	m, diags := LoadFile("two.hcl", []byte(src))
	if !diags.HasErrors() {
		t.Fatal("want an error")
	}
	if len(m.Workflows) != 2 || m.Workflow("good").Graph == nil || m.Workflow("bad").Graph != nil {
		t.Errorf("want the good workflow compiled and the bad one without a graph: %+v", m.Workflows)
	}
}

func TestLoadFileInvalidUTF8(t *testing.T) {
	t.Parallel()
	_, diags := LoadFile("x.hcl", []byte("workflow \"a\" {\n  # caf\xe9\n}\n"))
	if len(diags) != 1 || diags[0].Summary != "Invalid character encoding" {
		t.Fatalf("diags %v", diags)
	}
	if s := diags[0].Subject; s.Start.Line != 2 || s.Start.Column != 8 || s.Start.Byte != 22 {
		t.Errorf("subject %+v", s.Start)
	}
}

func TestWriteDiagnostics(t *testing.T) {
	t.Parallel()
	src := "workflow \"w\" {\n  version = \"1.0.0\"\n  input \"order_id\" { type = string }\n  step \"rollout\" {\n\twhen = \"input.ordr_id == ''\"\n    set { x = 1 }\n  }\n}\n"
	m, diags := LoadFile("deploy.hcl", []byte(src))
	diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Just so you know", Detail: "A warning without a place."})
	var b bytes.Buffer
	if err := WriteDiagnostics(&b, m.Files, diags, false, 0); err != nil {
		t.Fatal(err)
	}
	want := "Error: Unknown input\n\n" +
		"  on deploy.hcl:5:16, in step \"rollout\":\n" +
		"     5: \twhen = \"input.ordr_id == ''\"\n" +
		"        \t              ^^^^^^^\n\n" +
		diags[0].Detail + "\n\n" +
		"Warning: Just so you know\n\nA warning without a place.\n\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := WriteDiagnostics(&b, m.Files, diags[:1], true, 40); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "\x1b[1;31mError:\x1b[0m") || !strings.Contains(out, "input.\x1b[1;4mordr_id\x1b[0m") {
		t.Errorf("colour output lacks the escapes:\n%q", out)
	}
	for _, line := range strings.Split(strings.SplitN(out, "\n\n", 3)[2], "\n") {
		if len(line) > 40 && !strings.Contains(line, "\x1b") {
			t.Errorf("detail line longer than the width: %q", line)
		}
	}

	b.Reset()
	if err := WriteDiagnostics(&b, nil, diags[:1], false, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  on deploy.hcl:5:16:\n  (source code not available)\n") {
		t.Errorf("without files:\n%s", b.String())
	}
}

// TestWriteDiagnosticsLongLine: a source line longer than maxLineChars is
// shown as a window of that many characters around the range, each cut end
// marked "...", with the caret still under the range (language.md §16).
func TestWriteDiagnosticsLongLine(t *testing.T) {
	t.Parallel()
	a, z := strings.Repeat("a", 200), strings.Repeat("z", 200)
	src := "workflow \"w\" {\n  version = \"1.0.0\"\n  input \"order_id\" { type = string }\n  step \"s\" {\n" +
		"\twhen = \"'" + a + "' == input.ordr_id && '" + z + "' == ''\"\n  }\n}\n"
	m, diags := LoadFile("long.hcl", []byte(src))
	var b bytes.Buffer
	if err := WriteDiagnostics(&b, m.Files, diags, false, 0); err != nil {
		t.Fatal(err)
	}
	// 40 characters before the range, the range, and the rest of the 160.
	shown := a[:29] + "' == input.ordr_id && '" + z[:160-29-23]
	want := "  on long.hcl:5:222, in step \"s\":\n" +
		"     5: ..." + shown + "...\n" +
		strings.Repeat(" ", 8+3+40) + "^^^^^^^\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("got:\n%s\nwant the snippet:\n%s", b.String(), want)
	}

	// A line of the context that does not hold the range keeps its start.
	src = "workflow \"w\" {\n  version = \"1.0.0\" # " + a + "\n  bogus = 1\n}\n"
	m, _ = LoadFile("ctx.hcl", []byte(src))
	d := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Test",
		Subject:  &hcl.Range{Filename: "ctx.hcl", Start: hcl.Pos{Line: 3, Column: 3, Byte: 240}, End: hcl.Pos{Line: 3, Column: 8, Byte: 245}},
		Context:  &hcl.Range{Filename: "ctx.hcl", Start: hcl.Pos{Line: 2, Column: 1, Byte: 15}, End: hcl.Pos{Line: 3, Column: 12, Byte: 249}},
	}
	b.Reset()
	if err := WriteDiagnostics(&b, m.Files, hcl.Diagnostics{d}, false, 0); err != nil {
		t.Fatal(err)
	}
	line2 := "  version = \"1.0.0\" # " + a
	want = "     2: " + line2[:160] + "...\n" +
		"     3:   bogus = 1\n" +
		"          ^^^^^\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("got:\n%s\nwant the snippet:\n%s", b.String(), want)
	}
}

// TestWriteDiagnosticsManyOnOneLine: text that is not HCL at all (here a
// long run of control characters, one mistake each, all on one line)
// renders in output proportional to the number of mistakes. Each
// diagnostic used to repeat the whole line, and rescan the whole file to
// find it, so the output and the time grew with the square of the file's
// size (found by FuzzLoadFile).
func TestWriteDiagnosticsManyOnOneLine(t *testing.T) {
	t.Parallel()
	const n = 3000
	m, diags := LoadFile("junk.hcl", bytes.Repeat([]byte{0x1b}, n))
	if len(diags) < n {
		t.Fatalf("want a diagnostic per character, got %d", len(diags))
	}
	var b bytes.Buffer
	if err := WriteDiagnostics(&b, m.Files, diags, false, 0); err != nil {
		t.Fatal(err)
	}
	// A diagnostic is its summary, place, two snippet lines of at most
	// maxLineChars characters and its detail: well under 1,000 bytes.
	if max := len(diags) * 1000; b.Len() > max {
		t.Errorf("%d diagnostics rendered in %d bytes, want at most %d", len(diags), b.Len(), max)
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	good := map[string]int64{
		"30s": 30000, "1m30s": 90000, "2h": 7200000, "1d": 86400000, "1d12h": 129600000,
		"500ms": 500, "1.5h": 5400000, "1000us": 1,
	}
	for s, want := range good {
		if got, err := ParseDuration(s); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "30", "-1s", "1y", "s", "1.2.3s", "10ns", "0s", "500000000d"} {
		if _, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) should fail", s)
		}
	}
	for s, want := range map[string]bool{"0": true, "0s": true, "0ms": true, "0.0s": true, "00m": true, "0x": false, "1s": false, ".s": false} {
		if isZeroDuration(s) != want {
			t.Errorf("isZeroDuration(%q) = %v", s, !want)
		}
	}
}
