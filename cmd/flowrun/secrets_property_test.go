package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flowrun/flowrun/cmd/flowrun/internal/cli"
	"github.com/flowrun/flowrun/store/sqlite"
)

// The property: whatever shape a declared secret is printed in, by a
// program or a server, and whichever way the run goes (completed steps,
// failed ones, dead letters, alerts, a dead letter retried), neither the
// database file, nor its write-ahead log, nor any output of the CLI holds
// the secret, raw or encoded (language.md §4).

// propSeeds are the cases run in CI: each seed draws a secret and the
// shapes it is printed in. FLOWRUN_PROP_SEEDS=N runs seeds 1..N instead.
const propSeeds = 16

// secretClasses draw secrets of at least 8 characters.
var secretClasses = []struct {
	name  string
	chars string
}{
	{"digits", "0123456789"},
	{"quotes", `abcXYZ"'\` + "`"},
	{"unicode", "abcäöüßéñ日本語€😀"},
	{"url", "abcXYZ%&?#/ =+;:@"},
	{"mixed", `aZ09"'\` + "`äöü日😀%&?#/ =+;:@<>"},
	{"lines", "abcXYZ09+/=\n"}, // a key in PEM: lines of base64
}

// drawSecret draws a secret of the class: 8 to 20 characters (a secret of
// more than 15 digits is a JSON number a float64 does not keep exactly),
// not starting with 0 (so that it is a JSON number) nor with a space (a
// header value loses it) or a line break.
func drawSecret(rng *rand.Rand, chars string) string {
	runes := []rune(chars)
	n := 8 + rng.IntN(13)
	var sb strings.Builder
	for sb.Len() == 0 || utf8.RuneCountInString(sb.String()) < n {
		c := runes[rng.IntN(len(runes))]
		if sb.Len() == 0 && (c == '0' || c == ' ' || c == '\n') {
			continue
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

// shapes are the ways emitshape prints the secret on stdout (see
// emitShape); "json" and "number" make stdout one JSON document when they
// are the only shape.
var shapes = []string{"plain", "json", "number", "query", "path", "quoted", "split", "stderr", "big", "asciijson", "pyquote"}

// strictEscape percent-encodes every byte of s but ASCII letters, digits
// and those in keep (upper-case hex); with plus, a space is +.
func strictEscape(s, keep string, plus bool) string {
	var sb strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || strings.ContainsRune(keep, rune(c))):
			sb.WriteByte(c)
		case c == ' ' && plus:
			sb.WriteByte('+')
		default:
			fmt.Fprintf(&sb, "%%%02X", c)
		}
	}
	return sb.String()
}

// asciiJSON writes s as a JSON string the way Python's json.dumps does:
// ASCII only, each UTF-16 code unit past U+007F as \uXXXX; with slash,
// also / as \/ (PHP's json_encode).
func asciiJSON(s string, slash bool) string {
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	var sb strings.Builder
	for _, u := range utf16.Encode([]rune(strings.TrimSpace(plain.String()))) {
		switch {
		case u > 0x7f:
			fmt.Fprintf(&sb, "\\u%04x", u)
		case u == '/' && slash:
			sb.WriteString(`\/`)
		default:
			sb.WriteRune(rune(u))
		}
	}
	return sb.String()
}

// emitShape is the program the property's workflows run (the test binary
// under the name emitshape): it prints the secret in $T in each shape
// named by its arguments and exits with $EXIT (0 when unset). With $ITEM
// set, it is a foreach item: item 1 prints the secret to stderr and fails.
func emitShape() {
	sec := os.Getenv("T")
	if sec == "" {
		fmt.Fprintln(os.Stderr, "emitshape: $T is empty")
		os.Exit(9)
	}
	if item := os.Getenv("ITEM"); item != "" {
		if item == "1" {
			fmt.Fprintf(os.Stderr, "item %s failed: %s\n", item, sec)
			os.Exit(4)
		}
		_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"item": item, "tok": sec})
		os.Exit(0)
	}
	for _, shape := range os.Args[1:] {
		switch shape {
		case "plain":
			fmt.Printf("token=%s\n", sec)
		case "json":
			_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"tok": sec, sec: "key",
				"nested": map[string]any{"list": []any{sec, map[string]any{"deep": "<" + sec + ">"}}}})
		case "number":
			if strings.Trim(sec, "0123456789") == "" {
				fmt.Printf(`{"n": %s, "list": [%s, 1.5], "exp": %se0, "more": %s7}`+"\n", sec, sec, sec, sec)
			} else {
				enc := json.NewEncoder(os.Stdout)
				enc.SetEscapeHTML(false)
				_ = enc.Encode(map[string]any{"n": sec, "list": []any{sec, 1.5}})
			}
		case "query":
			fmt.Printf("https://x.example/cb?tok=%s&b=1\n", url.QueryEscape(sec))
		case "path":
			fmt.Printf("/files/%s/x %s\n", url.PathEscape(sec), (&url.URL{Path: "/" + sec}).EscapedPath())
		case "quoted":
			fmt.Printf("%q %+q\n", sec, sec)
		case "split": // two writes, the cut inside the secret
			r := []rune(sec)
			os.Stdout.WriteString("split=" + string(r[:len(r)/2]))
			os.Stdout.Sync()
			os.Stdout.WriteString(string(r[len(r)/2:]) + "\n")
		case "asciijson":
			fmt.Printf("{\"py\": %s, \"php\": %s}\n", asciiJSON(sec, false), asciiJSON(sec, true))
		case "pyquote": // Python's quote, quote_plus; JavaScript's encodeURIComponent
			fmt.Printf("q=%s p=%s u=%s\n", strictEscape(sec, "-._~/", false), strictEscape(sec, "-._~", true), strictEscape(sec, "-_.!~*'()", false))
		case "stderr":
			fmt.Fprintf(os.Stderr, "warning: %s\nlast line %q\n", sec, sec)
		case "big": // the secret straddles limits.output_bytes (1024)
			os.Stdout.WriteString(strings.Repeat("a", 1020) + sec + strings.Repeat("b", 1500))
		}
	}
	code, _ := strconv.Atoi(os.Getenv("EXIT"))
	os.Exit(code)
}

// propWorkflow is the workflow of a case: the secret printed by a program
// in the shapes drawn, by another in every shape, by a failing program, by foreach items (one dead-lettered,
// which fires an alert that fails printing it too), by a server (in the
// body, as text or a JSON number, and in response headers); a set step
// and the run's outputs copy what was stored.
func propWorkflow(emit string, drawn []string, limitOutput bool) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	args := make([]string, 0, len(drawn)+1)
	args = append(args, q(emit))
	for _, s := range drawn {
		args = append(args, q(s))
	}
	every := []string{q(emit)} // every shape, whatever was drawn, but big (cut)
	for _, s := range shapes {
		if s != "big" {
			every = append(every, q(s))
		}
	}
	limits := ""
	if limitOutput {
		limits = "limits { output_bytes = 1024 }"
	}
	return fmt.Sprintf(`workflow "prop" {
  version = "1.0.0"
  input "srv" { type = string }
  secret "tok" { env = "PROP_SECRET" }
  %s
  alert "dl" {
    on = ["dead_lettered", "failed"]
    exec {
      command = [%[2]s, "stderr"]
      env     = { T = "{{ secrets.tok }}", EXIT = "5" }
    }
  }
  step "emit" {
    exec {
      command = [%[3]s]
      env     = { T = "{{ secrets.tok }}" }
    }
  }
  step "every" {
    exec {
      command = [%[4]s]
      env     = { T = "{{ secrets.tok }}" }
    }
  }
  step "fails" {
    on_error = "continue"
    exec {
      command = [%[3]s]
      env     = { T = "{{ secrets.tok }}", EXIT = "3" }
    }
  }
  step "items" {
    foreach {
      items      = "[0, 1, 2]"
      on_failure = "dead_letter"
    }
    exec {
      command = [%[2]s]
      env     = { T = "{{ secrets.tok }}", ITEM = "{{ index }}" }
    }
  }
  step "web" {
    on_error = "continue"
    http {
      url     = "{{ input.srv }}/echo"
      headers = { X-Echo = "{{ secrets.tok }}" }
    }
  }
  step "web_list" {
    on_error = "continue"
    http {
      url     = "{{ input.srv }}/echo"
      headers = { X-Echo = "[{{ secrets.tok }}, 1]" }
    }
  }
  step "copy" {
    set {
      json   = "{{ steps.emit.output.json }}"
      stderr = "{{ steps.emit.output.stderr }}"
      body   = "{{ steps.web.status == 'completed' ? steps.web.output.body : null }}"
    }
  }
  step "end" {
    depends_on = [step.copy, step.every, step.fails, step.items, step.web_list]
    fail { message = "failed after {{ steps.copy.output.stderr }}" }
  }
  output "json" { value = "{{ steps.emit.output.json }}" }
}
`, limits, q(emit), strings.Join(args, ", "), strings.Join(every, ", "))
}

// leakedForms are the texts a secret must never appear as: itself and the
// ways URLs, Go quoting and JSON encode it.
func leakedForms(secret string) []string {
	body := func(quoted string) string { return quoted[1 : len(quoted)-1] }
	var nohtml bytes.Buffer
	enc := json.NewEncoder(&nohtml)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(secret)
	j, _ := json.Marshal(secret)
	forms := []string{
		secret,
		url.QueryEscape(secret),
		url.PathEscape(secret),
		(&url.URL{Path: secret}).EscapedPath(),
		body(strconv.Quote(secret)),
		body(strconv.QuoteToASCII(secret)),
		body(string(j)),
		body(strings.TrimSpace(nohtml.String())),
		body(asciiJSON(secret, false)),
		body(asciiJSON(secret, true)),
		strictEscape(secret, "-._~/", false),
		strictEscape(secret, "-._~", true),
		strictEscape(secret, "-_.!~*'()", false),
	}
	// Each form also as it is stored inside a JSON string (a program's
	// stdout holding Python's form of the secret is stored with its
	// backslashes doubled). A form that is the same as another is checked
	// once.
	seen := map[string]bool{}
	var out []string
	for _, f := range forms {
		j, _ := json.Marshal(f)
		for _, g := range []string{f, body(string(j))} {
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// propCLI runs the flowrun command in this process and returns its exit
// code and what it printed (stdout, then stderr).
func propCLI(args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String() + errb.String()
}

func TestSecretsNeverLeakProperty(t *testing.T) {
	emit, err := exec.LookPath("emitshape")
	if err != nil {
		t.Fatalf("emitshape is not on PATH (TestMain puts it there): %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := r.Header.Get("X-Echo")
		w.Header().Set("X-Echo", echo)
		w.Header().Set("X-Echo-Quoted", strconv.Quote(echo))
		w.Header().Set("X-Echo-Query", url.QueryEscape(echo))
		_, _ = w.Write([]byte(echo))
	}))
	defer srv.Close()

	seeds := propSeeds
	if n, err := strconv.Atoi(os.Getenv("FLOWRUN_PROP_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for seed := 1; seed <= seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		class := secretClasses[(seed-1)%len(secretClasses)]
		secret := drawSecret(rng, class.chars)
		picked := pickShapes(rng, class.name == "digits")
		t.Run(fmt.Sprintf("seed%d_%s", seed, class.name), func(t *testing.T) {
			checkNoLeak(t, emit, srv.URL, secret, picked)
		})
	}
}

// pickShapes draws the shapes of stdout: one JSON shape alone (so that
// stdout parses; a secret of digits then is a JSON number) or one to four
// shapes of any kind.
func pickShapes(rng *rand.Rand, digits bool) []string {
	if rng.IntN(3) == 0 {
		if digits {
			return []string{"number"}
		}
		return []string{[]string{"json", "number"}[rng.IntN(2)]}
	}
	n := 1 + rng.IntN(4)
	out := make([]string, n)
	for i := range out {
		out[i] = shapes[rng.IntN(len(shapes))]
	}
	return out
}

// checkNoLeak runs one case in a fresh directory and database and checks
// every CLI output, the database file and its write-ahead log.
func checkNoLeak(t *testing.T, emit, srvURL, secret string, picked []string) {
	dir := t.TempDir()
	db := filepath.Join(dir, "flowrun.db")
	t.Setenv("FLOWRUN_DB", db)
	t.Setenv("PROP_SECRET", secret)
	t.Setenv("NO_COLOR", "1")
	t.Chdir(dir)
	big := false
	for _, s := range picked {
		big = big || s == "big"
	}
	src := propWorkflow(emit, picked, big)
	if err := os.WriteFile("prop.hcl", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A connection of this test keeps the write-ahead log from being
	// checkpointed away when each command closes the database, so the
	// log holds every page the commands wrote.
	hold, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()

	forms := leakedForms(secret)
	check := func(what, text string) {
		t.Helper()
		for _, f := range forms {
			if i := strings.Index(text, f); i >= 0 {
				lo, hi := max(0, i-150), min(len(text), i+len(f)+80)
				t.Errorf("secret %q (shapes %q): %s holds %q: ...%q...", secret, picked, what, f, text[lo:hi])
			}
		}
	}
	checkFiles := func(after string) {
		t.Helper()
		for _, p := range []string{db, db + "-wal"} {
			data, err := os.ReadFile(p)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			check(filepath.Base(p)+" after "+after, string(data))
		}
	}

	code, out := propCLI("apply", "prop.hcl", "--input", "srv="+srvURL)
	check("apply", out)
	checkFiles("apply")
	if fi, err := os.Stat(db + "-wal"); err != nil || fi.Size() < 64<<10 {
		t.Fatalf("the write-ahead log after apply: %v (a run's pages are in it while the test holds the database open)", err)
	}
	if code != 1 {
		t.Fatalf("apply exited %d, want 1 (the run fails at its end step):\n%s", code, out)
	}
	id := runIDPattern.FindString(out)
	if id == "" {
		t.Fatalf("no run id in:\n%s", out)
	}
	var shown string
	for _, args := range [][]string{
		{"show", id}, {"show", id, "--json"}, {"logs", id}, {"logs", id, "--json"}, {"logs", id, "--output"}, {"runs"}, {"runs", "--json"},
		{"dlq", "list"}, {"dlq", "list", "--json"}, {"apply", "prop.hcl", "--input", "srv=" + srvURL, "--json"},
	} {
		_, out := propCLI(args...)
		check(strings.Join(args, " "), out)
		if args[0] == "show" && len(args) == 3 {
			shown = out
		}
	}
	// The case is only worth something if the secret reached the program
	// and came back: what it printed is stored with *** in its place.
	if !strings.Contains(shown, "***") {
		t.Errorf("show --json holds no ***: the secret never came back\n%s", shown)
	}
	_, list := propCLI("dlq", "list", "--json")
	var letters []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(list), &letters); err != nil || len(letters) == 0 {
		_, sh := propCLI("show", id)
		t.Fatalf("dlq list --json: %v, %d letters:\n%s\n%s", err, len(letters), list, sh)
	}
	code, out = propCLI("dlq", "retry", strconv.FormatInt(letters[0].ID, 10))
	check("dlq retry", out)
	if code != 1 {
		t.Errorf("dlq retry exited %d, want 1 (item 1 fails again):\n%s", code, out)
	}
	for _, args := range [][]string{{"dlq", "list", "--all", "--json"}, {"logs", id}} {
		_, out := propCLI(args...)
		check(strings.Join(args, " "), out)
	}
	checkFiles("dlq retry")
	if os.Getenv("FLOWRUN_PROP_DUMP") != "" {
		for _, args := range [][]string{{"show", id, "--json"}, {"logs", id}, {"dlq", "list", "--all", "--json"}} {
			_, out := propCLI(args...)
			t.Logf("%s:\n%s", strings.Join(args, " "), out)
		}
	}
}
