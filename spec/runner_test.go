package spec

import (
	"strings"
	"testing"
)

// TestSubset checks the comparison rules of README.md, so that a case
// whose run differs from its want.json really fails.
func TestSubset(t *testing.T) {
	tests := []struct {
		want, got string
		ok        bool
		path      string // of the first mismatch
	}{
		{`{"a": 1}`, `{"a": 1, "b": 2}`, true, ""},
		{`{"a": 1}`, `{"a": 1.0}`, true, ""},
		{`{"a": 1}`, `{"a": 2}`, false, "a"},
		{`{"a": 1}`, `{"a": "1"}`, false, "a"},
		{`{"a": null}`, `{}`, true, ""},
		{`{"a": null}`, `{"a": 0}`, false, "a"},
		{`{"a": {"b": [1, 2]}}`, `{"a": {"b": [1, 2, 3]}}`, false, "a.b"},
		{`{"a": [{"x": 1}, {"y": 2}]}`, `{"a": [{"x": 1}, {"y": 3, "z": 0}]}`, false, "a[1].y"},
		{`{"a": "<any>"}`, `{"a": false}`, true, ""},
		{`{"a": "<any>"}`, `{"a": null}`, false, "a"},
		{`{"a": "<any>"}`, `{}`, false, "a"},
		{`{"t": "<time>"}`, `{"t": "2025-01-01T00:00:01.5Z"}`, true, ""},
		{`{"t": "<time>"}`, `{"t": "soon"}`, false, "t"},
		{`{"t": "2025-01-01T00:00:00Z"}`, `{"t": "2025-01-01T00:00:00.000Z"}`, true, ""},
		{`{"t": "2025-01-01T00:00:00Z"}`, `{"t": "2025-01-01T00:00:00.001Z"}`, false, "t"},
		{`{"b": true}`, `{"b": false}`, false, "b"},
		{`[]`, `{}`, false, ""},
		{`{"big": 12345678901234567890}`, `{"big": 12345678901234567890}`, true, ""},
	}
	for _, tt := range tests {
		w, err := decodeDoc([]byte(tt.want))
		if err != nil {
			t.Fatal(err)
		}
		g, err := decodeDoc([]byte(tt.got))
		if err != nil {
			t.Fatal(err)
		}
		ms := subset("", w, g)
		if (len(ms) == 0) != tt.ok {
			t.Errorf("subset(%s, %s) = %v, want ok=%v", tt.want, tt.got, ms, tt.ok)
			continue
		}
		if !tt.ok && ms[0].path != tt.path {
			t.Errorf("subset(%s, %s): first mismatch at %q, want %q", tt.want, tt.got, ms[0].path, tt.path)
		}
	}
}

// TestMask checks that every run id of the store is masked wherever it
// occurs, and nothing else.
func TestMask(t *testing.T) {
	id := "01JGFJJZ009YW1MF8YC0E12PGB"
	other := "01JGFJJZ009YW1MF8YC0E12PGC" // looks like an id but is not a run's
	doc, err := decodeDoc([]byte(`{"run_id": "` + id + `", "steps": {"s": {"output": {"stdout": "` + id + `/s ` + other + `\n"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := show(mask(doc, map[string]bool{id: true}))
	want := `{"run_id":"<id>","steps":{"s":{"output":{"stdout":"<id>/s ` + other + `\n"}}}}`
	if got != want {
		t.Fatalf("mask = %s, want %s", got, want)
	}
}

func TestParseScript(t *testing.T) {
	cmds, err := parseScript("# set-up\ncrash-at work[1] 2\nstart\n\nsignal go {\"a\": [1, 2]}\n! signal other\nexpect waiting a=waiting b[0]=completed\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, c.String())
	}
	want := []string{
		"script:2: crash-at work[1] 2",
		"script:3: start",
		`script:5: signal go {"a": [1, 2]}`,
		"script:6: ! signal other",
		"script:7: expect waiting a=waiting b[0]=completed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("parsed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"frobnicate", "advance", "advance 1s 2s", "! expect running", "! restart"} {
		if _, err := parseScript(bad); err == nil {
			t.Errorf("parseScript(%q) accepted a bad script", bad)
		}
	}
}
