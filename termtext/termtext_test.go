package termtext

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain ASCII is unchanged", "step charge: exit status 1", "step charge: exit status 1"},
		{"empty", "", ""},
		{"the issue's erase-line trick", "fake\x1b[2K\rall good", `fake\x1b[2K\rall good`},
		{"colour and cursor moves", "\x1b[31mred\x1b[0m\x1b[1A", `\x1b[31mred\x1b[0m\x1b[1A`},
		{"window title (OSC) ended by BEL", "\x1b]0;pwned\a", `\x1b]0;pwned\a`},
		{"named C0 escapes", "\a\b\t\n\v\f\r", `\a\b\t\n\v\f\r`},
		{"other C0 controls and NUL", "\x00\x01\x1f", `\x00\x01\x1f`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 controls: NEL and CSI", "a\u0085b\u009b2J", `a\u0085b\u009b2J`},
		{"first and last C1", "\u0080\u009f", `\u0080\u009f`},
		{"Latin-1 just past C1 is kept", "\u00a0é\u00ff", "\u00a0é\u00ff"},
		{"invalid UTF-8: a raw 8-bit CSI byte", "x\x9b2Jy", `x\x9b2Jy`},
		{"invalid UTF-8: truncated sequence and 0xff", "\xe2\x82 \xff", `\xe2\x82 \xff`},
		{"a real U+FFFD is kept", "\ufffd", "\ufffd"},
		{"bidi overrides (Trojan Source)", "if admin\u202e {\u202c", `if admin\u202e {\u202c`},
		{"bidi embeddings and isolates", "\u202a\u202b\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202d\u2066\u2067\u2068\u2069`},
		{"bidi marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"other Unicode is kept", "日本語 ✓ 👍🏽 zero\u200dwidth joiner", "日本語 ✓ 👍🏽 zero\u200dwidth joiner"},
		{"backslashes are kept as they are", `C:\dir\x1b`, `C:\dir\x1b`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.want {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestLinesKeepsNewlines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\tb\nc\n", "a\\tb\nc\n"},
		{"fake\x1b[2K\rall good\n", "fake\\x1b[2K\\rall good\n"},
		{"crlf\r\n", "crlf\\r\n"},
		{"\u202eevil\n\x00", "\\u202eevil\n\\x00"},
		{"bad \xc3\n", "bad \\xc3\n"},
	} {
		if got := Lines(c.in); got != c.want {
			t.Errorf("Lines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The escapes' table in the package comment names exactly the runes
// unicode.Bidi_Control holds, so a Unicode update that adds one is noticed.
func TestBidiControlsAreTheDocumentedOnes(t *testing.T) {
	var got []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Bidi_Control, r) {
			got = append(got, r)
		}
	}
	want := []rune{0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069}
	if string(got) != string(want) {
		t.Errorf("Bidi_Control = %U, want %U", got, want)
	}
}

// checkSafe fails when out holds anything that could move a terminal's
// cursor or reorder text.
func checkSafe(t *testing.T, in, out string, keepNewline bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("escape(%q) = %q: not valid UTF-8", in, out)
	}
	for _, r := range out {
		if keepNewline && r == '\n' {
			continue
		}
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			t.Fatalf("escape(%q) = %q: holds %U", in, out, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "fake\x1b[2K\rall good", "\xff\xfe", "\u202e\u0085", "a\tb\nc", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, lines := Line(s), Lines(s)
		checkSafe(t, s, line, false)
		checkSafe(t, s, lines, true)
		// Escaping twice changes nothing: the escaped form is printable.
		if again := Line(line); again != line {
			t.Fatalf("Line(Line(%q)) = %q, want %q", s, again, line)
		}
		if again := Lines(lines); again != lines {
			t.Fatalf("Lines(Lines(%q)) = %q, want %q", s, again, lines)
		}
		// Lines differs from Line only by keeping \n.
		if strings.ReplaceAll(lines, "\n", `\n`) != line {
			t.Fatalf("Lines(%q) = %q and Line = %q differ by more than \\n", s, lines, line)
		}
		// Text that needs nothing is returned as it is.
		safe := true
		for _, r := range s {
			if r < 0x20 || r == 0x7f || unsafeRune(r) || r == utf8.RuneError {
				safe = false
			}
		}
		if safe && line != s {
			t.Fatalf("Line(%q) = %q, want it unchanged", s, line)
		}
	})
}

func TestJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":"plain","n":1}`, `{"a":"plain","n":1}`},
		{`"fake\u001b[2K\rall good"`, `"fake\u001b[2K\rall good"`}, // encoding/json's escapes stay
		{"\"a\u0085b\u009bc\x7f\"", `"a\u0085b\u009bc\u007f"`},
		{"{\"k\u202e\":\"\u2066x\u2069\u200f\"}", `{"k\u202e":"\u2066x\u2069\u200f"}`},
		{"[\"\u2028\u2029\"]", `["\u2028\u2029"]`},
		{`"日本語 ✓ \u00e9"`, `"日本語 ✓ \u00e9"`},
		{"\"é\u00a0\"", "\"é\u00a0\""},
	} {
		if got := string(JSON([]byte(c.in))); got != c.want {
			t.Errorf("JSON(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "fake\x1b[2K\rall good", "\u202e\u0085\u2028", "\xff", "a\tb\nc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(map[string]any{s: []string{s, "x" + s}})
		if err != nil {
			t.Skip()
		}
		out := JSON(b)
		var before, after any
		if err := json.Unmarshal(b, &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("JSON(%s) = %s: not JSON: %v", b, out, err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("JSON(%s) = %s: the value changed", b, out)
		}
		checkSafe(t, string(b), string(out), false)
	})
}
