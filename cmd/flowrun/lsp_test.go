package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/lang"
)

// The language server, driven through the flowrun binary (the test binary
// standing in for it, as in the tmux tests) over standard input and
// output by a JSON-RPC client, the way an editor drives it.

// lspClient is a minimal LSP client of a `flowrun lsp` process.
type lspClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
	// notes are the notifications read while waiting for a response.
	notes []rpcMsg
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type lspPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start lspPos `json:"start"`
	End   lspPos `json:"end"`
}

type lspDiag struct {
	Range    lspRange `json:"range"`
	Severity int      `json:"severity"`
	Message  string   `json:"message"`
}

// flowrunBinary is the test binary linked as flowrun (TestMain runs the
// command line under that name).
func flowrunBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	flowrun := filepath.Join(t.TempDir(), "flowrun")
	if err := os.Symlink(self, flowrun); err != nil {
		t.Fatal(err)
	}
	return flowrun
}

// startLSP starts `flowrun lsp` with the database at db (which may not
// exist) and initializes the session.
func startLSP(t *testing.T, db string) *lspClient {
	t.Helper()
	cmd := exec.Command(flowrunBinary(t), "lsp")
	cmd.Env = append(os.Environ(), "FLOWRUN_DB="+db, "NO_COLOR=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A safety net against a hung server, not a timing assumption.
	timer := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	t.Cleanup(func() {
		timer.Stop()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := &lspClient{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}
	var init struct {
		Capabilities struct {
			HoverProvider      bool `json:"hoverProvider"`
			CompletionProvider struct {
				TriggerCharacters []string `json:"triggerCharacters"`
			} `json:"completionProvider"`
		} `json:"capabilities"`
	}
	c.request("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, &init)
	if !init.Capabilities.HoverProvider || len(init.Capabilities.CompletionProvider.TriggerCharacters) == 0 {
		t.Fatalf("initialize result lacks capabilities: %+v", init)
	}
	c.notify("initialized", map[string]any{})
	return c
}

func (c *lspClient) write(m rpcMsg) {
	c.t.Helper()
	m.JSONRPC = "2.0"
	body, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

func (c *lspClient) read() rpcMsg {
	c.t.Helper()
	length := -1
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading from the server: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.out, body); err != nil {
		c.t.Fatalf("reading a body: %v", err)
	}
	var m rpcMsg
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("the server sent no JSON: %v: %s", err, body)
	}
	return m
}

func (c *lspClient) notify(method string, params any) {
	c.t.Helper()
	raw, _ := json.Marshal(params)
	c.write(rpcMsg{Method: method, Params: raw})
}

// call sends a request and returns its response, keeping the
// notifications that come before it.
func (c *lspClient) call(method string, params any) rpcMsg {
	c.t.Helper()
	c.nextID++
	id := json.RawMessage(strconv.Itoa(c.nextID))
	raw, _ := json.Marshal(params)
	c.write(rpcMsg{ID: id, Method: method, Params: raw})
	for {
		m := c.read()
		if m.Method != "" {
			c.notes = append(c.notes, m)
			continue
		}
		if string(m.ID) != string(id) {
			c.t.Fatalf("response to id %s while waiting for %s", m.ID, id)
		}
		return m
	}
}

// request is call for a request that must succeed; the result goes into
// result (when not nil).
func (c *lspClient) request(method string, params, result any) {
	c.t.Helper()
	m := c.call(method, params)
	if m.Error != nil {
		c.t.Fatalf("%s failed: %d %s", method, m.Error.Code, m.Error.Message)
	}
	if result != nil {
		if err := json.Unmarshal(m.Result, result); err != nil {
			c.t.Fatalf("%s result %s: %v", method, m.Result, err)
		}
	}
}

// diagnostics waits for the diagnostics of uri at version.
func (c *lspClient) diagnostics(uri string, version int) []lspDiag {
	c.t.Helper()
	for {
		for i, m := range c.notes {
			if m.Method != "textDocument/publishDiagnostics" {
				continue
			}
			var p struct {
				URI         string    `json:"uri"`
				Version     int       `json:"version"`
				Diagnostics []lspDiag `json:"diagnostics"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil {
				c.t.Fatal(err)
			}
			if p.URI == uri && p.Version == version {
				c.notes = append(c.notes[:i:i], c.notes[i+1:]...)
				return p.Diagnostics
			}
		}
		m := c.read()
		if m.Method == "" {
			c.t.Fatalf("unexpected response %s while waiting for diagnostics", m.ID)
		}
		c.notes = append(c.notes, m)
	}
}

func (c *lspClient) open(uri, text string) {
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "hcl", "version": 1, "text": text}})
}

func (c *lspClient) change(uri string, version int, text string) {
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]any{{"text": text}}})
}

// posOf is the position of the n-th byte after the first occurrence of
// marker in text (ASCII text: bytes are UTF-16 units).
func posOf(t *testing.T, text, marker string, n int) lspPos {
	t.Helper()
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("%q not in the text", marker)
	}
	i += n
	line := strings.Count(text[:i], "\n")
	return lspPos{Line: line, Character: i - (strings.LastIndex(text[:i], "\n") + 1)}
}

func at(uri string, p lspPos) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p}
}

// shutdown ends the session as an editor does and checks the exit code.
func (c *lspClient) shutdown() {
	c.t.Helper()
	c.request("shutdown", nil, nil)
	c.notify("exit", nil)
	if err := c.cmd.Wait(); err != nil {
		c.t.Fatalf("flowrun lsp exited with %v after shutdown and exit; want 0", err)
	}
}

const lspBroken = `workflow "ship" {
  version = "1.0.0"
  input "order_id" { type = string }
  step "build" {
    exec { command = ["echo", "{{ input.order_id }}"] }
  }
  step "notify" {
    when = "steps.build.output.exit_code == 0 && input.ordr_id != ''"
    exec { command = ["echo", "{{ steps.build.output.stdout }}"] }
  }
}
`

func TestLSPSession(t *testing.T) {
	dir := t.TempDir()
	c := startLSP(t, filepath.Join(dir, "none", "flowrun.db"))
	path := filepath.Join(dir, "ship.hcl")
	uri := "file://" + path

	// An error: the diagnostic of validate, on the misspelled name.
	c.open(uri, lspBroken)
	diags := c.diagnostics(uri, 1)
	if len(diags) != 1 || !strings.HasPrefix(diags[0].Message, "Unknown input") || diags[0].Severity != 1 {
		t.Fatalf("diagnostics of the broken file: %+v", diags)
	}
	if want := posOf(t, lspBroken, "ordr_id", 0); diags[0].Range.Start != want {
		t.Fatalf("diagnostic at %+v, want %+v", diags[0].Range.Start, want)
	}

	// Fixed: the diagnostic goes.
	fixed := strings.Replace(lspBroken, "ordr_id", "order_id", 1)
	c.change(uri, 2, fixed)
	if diags := c.diagnostics(uri, 2); len(diags) != 0 {
		t.Fatalf("diagnostics of the fixed file: %+v", diags)
	}

	// Hover: a field's CEL type, a step's output, a whole expression.
	var h struct {
		Contents struct {
			Value string `json:"value"`
		} `json:"contents"`
	}
	c.request("textDocument/hover", at(uri, posOf(t, fixed, "exit_code ==", 2)), &h)
	if !strings.Contains(h.Contents.Value, "steps.build.output.exit_code") || !strings.Contains(h.Contents.Value, "**int**") {
		t.Fatalf("hover on exit_code: %q", h.Contents.Value)
	}
	c.request("textDocument/hover", at(uri, posOf(t, fixed, "steps.build.output.exit_code", 7)), &h)
	if !strings.Contains(h.Contents.Value, "step **build** (exec)") || !strings.Contains(h.Contents.Value, "exit_code = int") {
		t.Fatalf("hover on a step reference: %q", h.Contents.Value)
	}
	c.request("textDocument/hover", at(uri, posOf(t, fixed, "== 0 &&", 1)), &h)
	if !strings.Contains(h.Contents.Value, "expression of type **bool**") {
		t.Fatalf("hover on an operator: %q", h.Contents.Value)
	}
	c.request("textDocument/hover", at(uri, posOf(t, fixed, `input "order_id"`, 9)), &h)
	if !strings.Contains(h.Contents.Value, "input **order_id**: **string**") {
		t.Fatalf("hover on an input: %q", h.Contents.Value)
	}
	c.request("textDocument/hover", at(uri, posOf(t, fixed, "command =", 2)), &h)
	if !strings.Contains(h.Contents.Value, "**command**") || !strings.Contains(h.Contents.Value, "§8.3") && !strings.Contains(h.Contents.Value, "8.3") {
		t.Fatalf("hover on an attribute name: %q", h.Contents.Value)
	}

	// Completion after "steps." while the expression is half typed.
	typing := strings.Replace(fixed, `when = "steps.build.output.exit_code == 0 && input.order_id != ''"`, `when = "steps."`, 1)
	c.change(uri, 3, typing)
	c.diagnostics(uri, 3)
	var list struct {
		Items []struct {
			Label  string `json:"label"`
			Detail string `json:"detail"`
		} `json:"items"`
	}
	c.request("textDocument/completion", at(uri, posOf(t, typing, `"steps.`, 7)), &list)
	if labels := itemLabels(list.Items); !strings.Contains(labels, "build") || !strings.Contains(labels, "notify") {
		t.Fatalf("completion after steps.: %s", labels)
	}
	typing = strings.Replace(typing, `when = "steps."`, `when = "steps.build.output."`, 1)
	c.change(uri, 4, typing)
	c.diagnostics(uri, 4)
	c.request("textDocument/completion", at(uri, posOf(t, typing, `"steps.build.output.`, 20)), &list)
	if labels := itemLabels(list.Items); labels != "exit_code json stderr stdout" {
		t.Fatalf("completion after steps.build.output.: %s", labels)
	}
	c.request("textDocument/completion", at(uri, posOf(t, typing, "\n  step \"build\"", 3)), &list)
	if labels := itemLabels(list.Items); !strings.Contains(labels, "step") || !strings.Contains(labels, "deadline") {
		t.Fatalf("completion of names in the workflow block: %s", labels)
	}

	// Go to definition of steps.build: the step's label.
	c.change(uri, 5, fixed)
	c.diagnostics(uri, 5)
	var locs []struct {
		URI   string   `json:"uri"`
		Range lspRange `json:"range"`
	}
	c.request("textDocument/definition", at(uri, posOf(t, fixed, "steps.build.output.stdout", 8)), &locs)
	if want := posOf(t, fixed, `"build"`, 0); len(locs) != 1 || locs[0].URI != uri || locs[0].Range.Start != want {
		t.Fatalf("definition of steps.build: %+v, want %+v", locs, want)
	}
	c.request("textDocument/definition", at(uri, posOf(t, fixed, "input.order_id }}", 7)), &locs)
	if want := posOf(t, fixed, `"order_id"`, 0); len(locs) != 1 || locs[0].Range.Start != want {
		t.Fatalf("definition of input.order_id: %+v, want %+v", locs, want)
	}

	// Formatting: the layout of flowrun fmt.
	messy := strings.ReplaceAll(fixed, "  version = ", "version=")
	c.change(uri, 6, messy)
	c.diagnostics(uri, 6)
	var edits []struct {
		Range   lspRange `json:"range"`
		NewText string   `json:"newText"`
	}
	c.request("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{"tabSize": 2, "insertSpaces": true}}, &edits)
	want, diags2 := lang.Format(path, []byte(messy))
	if diags2.HasErrors() {
		t.Fatal(diags2)
	}
	if len(edits) != 1 || edits[0].NewText != string(want) || edits[0].Range.Start != (lspPos{}) {
		t.Fatalf("formatting edits: %+v", edits)
	}

	// Symbols: the workflow and its steps.
	var syms []struct {
		Name     string `json:"name"`
		Children []struct {
			Name   string `json:"name"`
			Detail string `json:"detail"`
		} `json:"children"`
	}
	c.request("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
	if len(syms) != 1 || syms[0].Name != "ship" || len(syms[0].Children) != 3 || syms[0].Children[1].Name != "build" || syms[0].Children[1].Detail != "exec" {
		t.Fatalf("symbols: %+v", syms)
	}
	c.shutdown()
}

func itemLabels[T any](items []T) string {
	var out []string
	for _, it := range items {
		v := any(it)
		raw, _ := json.Marshal(v)
		var l struct {
			Label string `json:"label"`
		}
		_ = json.Unmarshal(raw, &l)
		out = append(out, l.Label)
	}
	return strings.Join(out, " ")
}

// A file that does not parse gets its syntax diagnostics, and every
// request on it is answered, never a crash; formatting says why not.
func TestLSPBrokenFile(t *testing.T) {
	dir := t.TempDir()
	c := startLSP(t, filepath.Join(dir, "flowrun.db"))
	uri := "file://" + filepath.Join(dir, "bad.hcl")
	text := "workflow \"w\" {\n  version = \"1.0.0\"\n  step \"a\" {\n    when = \"steps.\n  }\n"
	c.open(uri, text)
	diags := c.diagnostics(uri, 1)
	if len(diags) == 0 || diags[0].Severity != 1 {
		t.Fatalf("diagnostics of a file that does not parse: %+v", diags)
	}
	lines := strings.Split(text, "\n")
	for line := range lines {
		for ch := 0; ch <= len(lines[line])+1; ch++ {
			p := lspPos{Line: line, Character: ch}
			for _, method := range []string{"textDocument/hover", "textDocument/completion", "textDocument/definition"} {
				if m := c.call(method, at(uri, p)); m.Error != nil {
					t.Fatalf("%s at %+v: %s", method, p, m.Error.Message)
				}
			}
		}
	}
	m := c.call("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{}})
	// It says why the request failed, not that the file is unformatted
	// (which reads as fmt --check's answer, not as a refusal).
	if m.Error == nil || !strings.HasPrefix(m.Error.Message, "cannot format the document until it parses: ") {
		t.Fatalf("formatting a file that does not parse: %+v", m)
	}
	var list struct {
		Items []struct {
			Label string `json:"label"`
		} `json:"items"`
	}
	c.request("textDocument/completion", at(uri, posOf(t, text, `"steps.`, 7)), &list)
	if labels := itemLabels(list.Items); labels != "a" {
		t.Fatalf("completion after steps. in a string the parser gave up on: %q", labels)
	}
	c.shutdown()
}

const lspStored = `workflow "ship" {
  version = "1.0.0"
  input "order_id" {
    type    = string
    default = "A1"
  }
  step "build" {
    set { order = "{{ input.order_id }}" }
  }
}
`

// At the version attribute: the bump the edit needs against the stored
// version, by the rules and the diff of apply and plan; and the refusal
// validate would print is a diagnostic there.
func TestLSPVersionBump(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "flowrun.db")
	path := filepath.Join(dir, "ship.hcl")
	if err := os.WriteFile(path, []byte(lspStored), 0o600); err != nil {
		t.Fatal(err)
	}
	apply := exec.Command(flowrunBinary(t), "apply", path)
	apply.Env = append(os.Environ(), "FLOWRUN_DB="+db, "NO_COLOR=1")
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("flowrun apply: %v\n%s", err, out)
	}
	c := startLSP(t, db)
	uri := "file://" + path
	c.open(uri, lspStored)
	if diags := c.diagnostics(uri, 1); len(diags) != 0 {
		t.Fatalf("diagnostics of the stored version: %+v", diags)
	}
	var h struct {
		Contents struct {
			Value string `json:"value"`
		} `json:"contents"`
	}
	c.request("textDocument/hover", at(uri, posOf(t, lspStored, `"1.0.0"`, 2)), &h)
	if !strings.Contains(h.Contents.Value, "Version 1.0.0 is stored with this graph") {
		t.Fatalf("hover at the stored version: %q", h.Contents.Value)
	}

	edited := strings.Replace(lspStored, "  }\n}\n", "  }\n  step \"ship\" {\n    set { done = true }\n  }\n}\n", 1)
	c.change(uri, 2, edited)
	diags := c.diagnostics(uri, 2)
	if len(diags) != 1 || !strings.HasPrefix(diags[0].Message, "Version already stored") || diags[0].Range.Start != posOf(t, edited, `"1.0.0"`, 0) {
		t.Fatalf("diagnostics of an edit without a bump: %+v", diags)
	}
	c.request("textDocument/hover", at(uri, posOf(t, edited, `"1.0.0"`, 2)), &h)
	if !strings.Contains(h.Contents.Value, "Stored: **1.0.0**. This edit needs a **MINOR** bump: version 1.1.0 or later.") ||
		!strings.Contains(h.Contents.Value, `step "ship"`) {
		t.Fatalf("hover at the version of an edit: %q", h.Contents.Value)
	}
	bumped := strings.Replace(edited, `"1.0.0"`, `"1.1.0"`, 1)
	c.change(uri, 3, bumped)
	if diags := c.diagnostics(uri, 3); len(diags) != 0 {
		t.Fatalf("diagnostics after the bump: %+v", diags)
	}
	c.request("textDocument/hover", at(uri, posOf(t, bumped, `"1.1.0"`, 2)), &h)
	if !strings.Contains(h.Contents.Value, "1.1.0 declares MINOR") {
		t.Fatalf("hover at the bumped version: %q", h.Contents.Value)
	}
	c.shutdown()
}

// Without a database the version is compared with nothing.
func TestLSPVersionNoDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "none", "flowrun.db")
	c := startLSP(t, db)
	uri := "file://" + filepath.Join(dir, "ship.hcl")
	c.open(uri, lspStored)
	c.diagnostics(uri, 1)
	var h struct {
		Contents struct {
			Value string `json:"value"`
		} `json:"contents"`
	}
	c.request("textDocument/hover", at(uri, posOf(t, lspStored, "version", 1)), &h)
	if !strings.Contains(h.Contents.Value, "No database at "+db+": version 1.0.0 would be the first stored version") {
		t.Fatalf("hover at version without a database: %q", h.Contents.Value)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the server created the database: %v", err)
	}
	c.shutdown()
}

const lspChild = `workflow "restock" {
  version = "1.0.0"
  input "sku" { type = string }
  output "count" { value = 3 }
  step "a" {}
}
`

const lspParent = `workflow "order" {
  version = "1.0.0"
  step "restock" {
    workflow {
      name    = "restock"
      version = "1"
      input   = { sku = "x" }
    }
  }
  step "after" {
    when = "steps.restock.output.count > 2"
  }
}
`

// A document is compiled with the other workflow files of its folder, as
// validate DIR compiles them: a child in a saved sibling file types the
// parent's step, an edit of the open child shows at once in the open
// parent, and a test file is checked against the folder's workflows.
func TestLSPFolder(t *testing.T) {
	dir := t.TempDir()
	child, parent := filepath.Join(dir, "child.hcl"), filepath.Join(dir, "parent.hcl")
	if err := os.WriteFile(child, []byte(lspChild), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startLSP(t, filepath.Join(dir, "flowrun.db"))
	puri, curi := "file://"+parent, "file://"+child
	c.open(puri, lspParent)
	if diags := c.diagnostics(puri, 1); len(diags) != 0 {
		t.Fatalf("the parent with its child saved beside it: %+v", diags)
	}
	var h struct {
		Contents struct {
			Value string `json:"value"`
		} `json:"contents"`
	}
	c.request("textDocument/hover", at(puri, posOf(t, lspParent, "count > 2", 1)), &h)
	if !strings.Contains(h.Contents.Value, "**number**") {
		t.Fatalf("hover on the child's output field: %q", h.Contents.Value)
	}

	// Renaming the child's output in the open child breaks the parent.
	c.open(curi, lspChild)
	c.diagnostics(curi, 1)
	c.diagnostics(puri, 1)
	c.change(curi, 2, strings.Replace(lspChild, `output "count"`, `output "total"`, 1))
	if diags := c.diagnostics(curi, 2); len(diags) != 0 {
		t.Fatalf("the edited child: %+v", diags)
	}
	diags := c.diagnostics(puri, 1)
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "count") || diags[0].Range.Start.Line != 10 {
		t.Fatalf("the parent after its child lost the output: %+v", diags)
	}

	// Undone: the parent is clean again.
	c.change(curi, 3, lspChild)
	c.diagnostics(curi, 3)
	if diags := c.diagnostics(puri, 1); len(diags) != 0 {
		t.Fatalf("the parent after the child was restored: %+v", diags)
	}

	// A test file: checked against the folder's workflows.
	turi := "file://" + filepath.Join(dir, "order.test.hcl")
	c.open(turi, "test \"t\" {\n  workflow = \"order\"\n  mock \"nope\" { output = {} }\n  expect { status = \"completed\" }\n}\n")
	tdiags := c.diagnostics(turi, 1)
	if len(tdiags) != 1 || !strings.Contains(tdiags[0].Message, `"nope"`) || tdiags[0].Range.Start.Line != 2 {
		t.Fatalf("a test file mocking an unknown step: %+v", tdiags)
	}
	c.shutdown()
}

// TestLSPBlockAfterComment: completion inside a block whose header line
// follows a # comment line (examples/deploy.hcl's step "approve") offers
// the block's attributes; the comment token holds its newline, and the
// header used to be read with the comment in front of it (nothing offered).
func TestLSPBlockAfterComment(t *testing.T) {
	dir := t.TempDir()
	c := startLSP(t, filepath.Join(dir, "none", "flowrun.db"))
	uri := "file://" + filepath.Join(dir, "c.hcl")
	text := "workflow \"w\" {\n  version = \"1.0.0\"\n  # the approval\n  step \"approve\" {\n    \n    wait { signal = \"go\" }\n  }\n}\n"
	c.open(uri, text)
	c.diagnostics(uri, 1)
	var list struct {
		Items []struct {
			Label string `json:"label"`
		} `json:"items"`
	}
	c.request("textDocument/completion", at(uri, lspPos{Line: 4, Character: 4}), &list)
	if labels := itemLabels(list.Items); !strings.Contains(labels, "depends_on") || !strings.Contains(labels, "retry") {
		t.Fatalf("completion in a step block after a comment line: %q", labels)
	}
	c.shutdown()
}
