package web

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/flowrun/flowrun/schedule"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

// funcs returns the templates' helpers (made with the handler, not when
// any flowrun process starts). None of them returns markup: every value
// stays text that html/template escapes.
func funcs() template.FuncMap {
	return template.FuncMap{
		// pretty indents a JSON value for a <pre>, escaped for the screen
		// (a control character or escape sequence is shown, not carried out).
		"pretty": pretty,
		// text escapes control characters of a value for display.
		"text": termtext.Line,
		// graphStep is whether a step row is a step of the workflow, not
		// one of the engine's (a saga's ~compensate rows).
		"graphStep": store.GraphStep,
		// json is a JSON value on one line, as it was sent (no HTML
		// escapes), control characters escaped.
		"json": func(raw json.RawMessage) string { return termtext.Line(string(unescapeHTML(raw))) },
		// iso is an instant for a <time datetime>; utc for people.
		"iso": func(t any) string {
			if tt, ok := instant(t); ok {
				return tt.UTC().Format(time.RFC3339)
			}
			return ""
		},
		"utc": func(t any) string {
			if tt, ok := instant(t); ok {
				return tt.UTC().Format("2006-01-02 15:04:05 UTC")
			}
			return ""
		},
		"duration": func(a, b any) string {
			ta, ok1 := instant(a)
			tb, ok2 := instant(b)
			if !ok1 || !ok2 {
				return ""
			}
			return tb.Sub(ta).Round(time.Millisecond).String()
		},
		"short": func(id string) string {
			if len(id) > 10 {
				return id[:10]
			}
			return id
		},
		"path": url.PathEscape,
		// inZone is a schedule's instant in its own time zone, UTC beside.
		"inZone": func(t any, tz string) string {
			if tt, ok := instant(t); ok {
				return schedule.InZone(tt, tz)
			}
			return ""
		},
		"join": strings.Join,
	}
}

// instant reads a time.Time, a *time.Time or an RFC 3339 string.
func instant(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, !t.IsZero()
	case *time.Time:
		if t == nil || t.IsZero() {
			return time.Time{}, false
		}
		return *t, true
	case string:
		tt, err := time.Parse(time.RFC3339Nano, t)
		return tt, err == nil
	case *string:
		if t == nil {
			return time.Time{}, false
		}
		tt, err := time.Parse(time.RFC3339Nano, *t)
		return tt, err == nil
	}
	return time.Time{}, false
}

// maxPretty bounds a value shown on a page; the rest is cut with a note.
const maxPretty = 64 << 10

// pretty is a JSON value indented for a <pre>: a string value is shown as
// its text, control characters escaped. A value stored with Go's HTML
// escapes (\u003c, \u003e, \u0026) shows the characters that were sent;
// numbers are kept as written (a big integer stays exact).
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(termtext.Lines(s))
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return clip(termtext.Lines(string(raw)))
	}
	return clip(termtext.Lines(string(unescapeHTML(b.Bytes()))))
}

// unescapeHTML turns the escapes encoding/json writes for <, > and & back
// into those characters, leaving every other escape as it is. A backslash
// appears in JSON only inside a string, where it begins an escape, so
// reading escape by escape never mistakes an escaped backslash followed
// by "u003c" for one.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch strings.ToLower(string(b[i+2 : i+6])) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, b[i], b[i+1]), i+1
	}
	return out
}

func clip(s string) string {
	if len(s) <= maxPretty {
		return s
	}
	return s[:maxPretty] + "\n… (cut: the value is longer; flowrun show --json prints it whole)"
}

// urlQueryEscape escapes a query value.
func urlQueryEscape(s string) string { return url.QueryEscape(s) }
