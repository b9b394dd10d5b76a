package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/lang"
)

// nvimSession is the Lua that headless Neovim runs: it opens the file,
// starts `flowrun lsp` with Neovim's built-in client (vim.lsp.start where
// it exists, else start_client and buf_attach_client as in Neovim 0.7),
// and goes through the session an editor user would, writing what it saw
// as JSON.
const nvimSession = `
local path, outp, flowrun = os.getenv('LSPTEST_FILE'), os.getenv('LSPTEST_OUT'), os.getenv('LSPTEST_FLOWRUN')
local res = {}
local function finish()
  vim.fn.writefile({ vim.fn.json_encode(res) }, outp)
  vim.cmd('qa!')
end
local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local config = { name = 'flowrun', cmd = { flowrun, 'lsp' }, root_dir = vim.fn.fnamemodify(path, ':h') }
  local id
  if vim.lsp.start then
    id = vim.lsp.start(config) -- Neovim 0.8 and later: the README's form
  else
    id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(buf, id)
  end
  local function find(text)
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      local s = string.find(l, text, 1, true)
      if s then return i - 1, s - 1 end
    end
    error('not in the buffer: ' .. text)
  end
  local function req(method, line, col)
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) } }
    if line then params.position = { line = line, character = col } else params.options = { tabSize = 2, insertSpaces = true } end
    local r = vim.lsp.buf_request_sync(buf, method, params, 30000)
    return r and r[id] and r[id].result
  end
  local function replace(from, to)
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    for i, l in ipairs(lines) do
      local s, e = string.find(l, from, 1, true)
      if s then lines[i] = string.sub(l, 1, s - 1) .. to .. string.sub(l, e + 1) end
    end
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  end

  res.got_diag = vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
  local d = vim.diagnostic.get(buf)[1]
  res.diag = d and d.message or ''
  res.diag_line, res.diag_col = d and d.lnum or -1, d and d.col or -1

  replace('ordr_id', 'order_id')
  res.fixed = vim.wait(60000, function() return #vim.diagnostic.get(buf) == 0 end, 20)

  local l, c = find('exit_code ==')
  local h = req('textDocument/hover', l, c + 2)
  res.hover = h and h.contents and h.contents.value or ''

  local dl, dc = find('steps.build.output.stdout')
  local def = req('textDocument/definition', dl, dc + 8)
  res.def_line = def and def[1] and def[1].range.start.line or -1

  replace('"steps.build.output.exit_code == 0 && input.order_id != \'\'"', '"steps."')
  vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
  local cl, cc = find('"steps.')
  local comp = req('textDocument/completion', cl, cc + 7)
  local items = comp and (comp.items or comp) or {}
  res.completion = {}
  for _, it in ipairs(items) do table.insert(res.completion, it.label) end

  replace('"steps."', '"steps.build.output.exit_code == 0"')
  replace('  version = ', 'version=')
  vim.wait(60000, function() return #vim.diagnostic.get(buf) == 0 end, 20)
  local edits = req('textDocument/formatting')
  vim.lsp.util.apply_text_edits(edits or {}, buf, 'utf-16')
  vim.cmd('write')
  vim.lsp.stop_client(id)
end)
if not ok then res.error = tostring(err) end
finish()
`

// TestLSPNeovim runs the session in headless Neovim's built-in LSP client,
// a real editor's client: diagnostics, the fix, hover, definition,
// completion after steps., formatting written back to the file.
func TestLSPNeovim(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed; the Neovim end-to-end test needs it (apt-get install neovim)")
	}
	if testing.Short() {
		t.Skip("the Neovim end-to-end test is skipped under -short")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ship.hcl")
	if err := os.WriteFile(path, []byte(lspBroken), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "session.lua")
	if err := os.WriteFile(script, []byte(nvimSession), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "result.json")
	// A safety net against a hung editor, not a timing assumption.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LSPTEST_FILE="+path, "LSPTEST_OUT="+out, "LSPTEST_FLOWRUN="+flowrunBinary(t),
		"FLOWRUN_DB="+filepath.Join(dir, "none", "flowrun.db"), "HOME="+dir, "XDG_STATE_HOME="+dir, "XDG_CACHE_HOME="+dir)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("nvim wrote no result: %v", err)
	}
	var res struct {
		Error      string   `json:"error"`
		GotDiag    bool     `json:"got_diag"`
		Diag       string   `json:"diag"`
		DiagLine   int      `json:"diag_line"`
		DiagCol    int      `json:"diag_col"`
		Fixed      bool     `json:"fixed"`
		Hover      string   `json:"hover"`
		DefLine    int      `json:"def_line"`
		Completion []string `json:"completion"`
	}
	t.Logf("neovim saw: %s", raw)
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	if res.Error != "" {
		t.Fatalf("the Neovim session failed: %s", res.Error)
	}
	want := posOf(t, lspBroken, "ordr_id", 0)
	if !res.GotDiag || !strings.HasPrefix(res.Diag, "Unknown input") || res.DiagLine != want.Line || res.DiagCol != want.Character {
		t.Errorf("diagnostic: %+v, want Unknown input at %+v", res, want)
	}
	if !res.Fixed {
		t.Errorf("the diagnostic stayed after the fix")
	}
	if !strings.Contains(res.Hover, "**int**") {
		t.Errorf("hover on exit_code: %q", res.Hover)
	}
	if want := posOf(t, lspBroken, `"build"`, 0).Line; res.DefLine != want {
		t.Errorf("definition of steps.build at line %d, want %d", res.DefLine, want)
	}
	if got := strings.Join(res.Completion, " "); got != "build notify" {
		t.Errorf("completion after steps.: %q", got)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	formatted, diags := lang.Format(path, written)
	if diags.HasErrors() || string(formatted) != string(written) || !strings.Contains(string(written), "  version = \"1.0.0\"") {
		t.Errorf("the file Neovim wrote after formatting is not in fmt's layout:\n%s", written)
	}
}
