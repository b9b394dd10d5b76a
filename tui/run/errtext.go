package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/termtext"
)

// stderrTail is how many lines of a failed program's stderr an error shows.
const stderrTail = 3

// ErrorText renders a stored error as text, escaped for the terminal: its
// kind and message on the first line, with the exit code of a program that
// exited, then the last lines of what it wrote to stderr, never the raw
// JSON of a {"kind","message"} error (issue 24: dead letters and runs
// showed it). nil when there is no error.
func ErrorText(raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var e struct {
		Kind     string `json:"kind"`
		Message  string `json:"message"`
		ExitCode *int   `json:"exit_code"`
		Stderr   string `json:"stderr"`
		Caught   bool   `json:"caught"`
		Output   *struct {
			ExitCode *int   `json:"exit_code"`
			Stderr   string `json:"stderr"`
		} `json:"output"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return []string{termtext.Line(strings.TrimSpace(string(raw)))}
	}
	if e.Output != nil {
		if e.ExitCode == nil {
			e.ExitCode = e.Output.ExitCode
		}
		if e.Stderr == "" {
			e.Stderr = e.Output.Stderr
		}
	}
	first := strings.TrimSpace(e.Message)
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i] + " …"
	}
	if e.Caught {
		e.Kind = "caught " + e.Kind
	}
	if e.Kind != "" {
		first = e.Kind + ": " + first
	}
	if e.ExitCode != nil && !strings.Contains(first, fmt.Sprintf("status %d", *e.ExitCode)) {
		first += fmt.Sprintf(" · exit code %d", *e.ExitCode)
	}
	out := []string{termtext.Line(first)}
	if s := strings.TrimRight(e.Stderr, "\n"); s != "" {
		ls := strings.Split(s, "\n")
		if len(ls) > stderrTail {
			ls = ls[len(ls)-stderrTail:]
		}
		for _, l := range ls {
			out = append(out, "  stderr│ "+termtext.Line(l))
		}
	}
	return out
}

// compact is JSON on one line, escaped, "" for null or nothing.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return termtext.Line(string(raw))
	}
	return termtext.Line(b.String())
}
