package spec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
	"github.com/hashicorp/hcl/v2"
)

// command is one line of a script.
type command struct {
	line   int
	negate bool // "! cmd": the command must fail
	name   string
	args   []string
}

func (c command) String() string {
	s := strings.Join(append([]string{c.name}, c.args...), " ")
	if c.negate {
		s = "! " + s
	}
	return fmt.Sprintf("script:%d: %s", c.line, s)
}

// commands lists the script commands, how many arguments each takes, and
// whether "!" may precede it.
var commands = map[string]struct {
	min, max int
	negate   bool
}{
	"crash-at": {1, 2, false},
	"start":    {0, 1, true},
	"settle":   {0, 0, false},
	"advance":  {1, 1, false},
	"signal":   {1, 2, true},
	"cancel":   {0, 0, true},
	"restart":  {0, 0, false},
	"apply":    {1, 1, true},
	"redrive":  {0, 1, true},
	"decide":   {1, 1, true},
	"expect":   {1, -1, false},
	"runs":     {1, 1, false},
	"match":    {1, 1, false},
	"cmp":      {2, 2, false},
	"touch":    {1, 1, false},
	"child":    {2, 2, false},
}

// parseScript splits a script into commands and checks their names and
// argument counts. A signal's JSON payload is the rest of its line.
func parseScript(src string) ([]command, error) {
	var out []command
	for i, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := command{line: i + 1}
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			c.negate, line = true, strings.TrimSpace(rest)
		}
		name, rest, _ := strings.Cut(line, " ")
		c.name = name
		rest = strings.TrimSpace(rest)
		if name == "signal" {
			sig, payload, _ := strings.Cut(rest, " ")
			if sig != "" {
				c.args = append(c.args, sig)
			}
			if p := strings.TrimSpace(payload); p != "" {
				c.args = append(c.args, p)
			}
		} else {
			c.args = strings.Fields(rest)
		}
		spec, ok := commands[name]
		if !ok {
			return nil, fmt.Errorf("script:%d: unknown command %q; README.md lists the commands", c.line, name)
		}
		if len(c.args) < spec.min || (spec.max >= 0 && len(c.args) > spec.max) {
			return nil, fmt.Errorf("script:%d: wrong number of arguments to %s; README.md gives its form", c.line, name)
		}
		if c.negate && !spec.negate {
			return nil, fmt.Errorf("script:%d: %s cannot be negated with !", c.line, name)
		}
		out = append(out, c)
	}
	return out, nil
}

// runCase runs one archive: it writes the files, compiles, and then either
// compares the diagnostics (want-errors) or runs the script and compares
// the run with want.json.
func runCase(t *testing.T, c *testCase) {
	ctx := context.Background()
	work := t.TempDir()
	hg, hangProg, err := newHangs(work)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(hg)
	t.Cleanup(srv.Close)
	subst := strings.NewReplacer("$WORK", work, "$HTTP", srv.URL, "$HANG", hangProg)
	for _, name := range c.order {
		c.files[name] = []byte(subst.Replace(string(c.files[name])))
		data := c.files[name]
		mode := os.FileMode(0o644)
		if bytes.HasPrefix(data, []byte("#!")) {
			mode = 0o755
		}
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			t.Fatal(err)
		}
	}

	var script []command
	if src, ok := c.file("script"); ok {
		if script, err = parseScript(string(src)); err != nil {
			t.Fatal(err)
		}
	}
	later := map[string]bool{} // files applied by the script, not at start
	hasStart := false
	for _, cmd := range script {
		switch cmd.name {
		case "apply":
			later[cmd.args[0]] = true
		case "start":
			hasStart = true
		}
	}
	if !hasStart {
		// The run starts after the set-up commands at the top.
		i := 0
		for i < len(script) && script[i].name == "crash-at" {
			i++
		}
		script = append(script[:i:i], append([]command{{line: 0, name: "start"}}, script[i:]...)...)
	}

	paths := []string{filepath.Join(work, "workflow.hcl")}
	for _, name := range c.order {
		if strings.HasSuffix(name, ".hcl") && name != "workflow.hcl" && !later[name] {
			paths = append(paths, filepath.Join(work, filepath.FromSlash(name)))
		}
	}
	mod, diags := lang.LoadPaths(paths)
	if want, ok := c.file("want-errors"); ok {
		checkErrors(t, work, diags, string(want))
		return
	}
	if diags.HasErrors() {
		t.Fatalf("the workflow does not compile:\n%s", diagLines(work, diags))
	}

	db, err := sqlite.Open(ctx, filepath.Join(work, "flowrun.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	d := &driver{t: t, ctx: ctx, db: db, work: work, clk: clock.NewFake(epoch), env: map[string]string{}, hangs: hg,
		workflow: mod.Workflows[0].Name}
	for _, w := range mod.Workflows {
		d.graphs = append(d.graphs, w.Graph)
	}
	if envText, ok := c.file("env"); ok {
		if d.env, err = parseEnv(string(envText)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(d.stop)

	for i, cmd := range script {
		if i == 0 || script[i-1].name == "crash-at" {
			if cmd.name == "crash-at" {
				if err := d.crashAt(cmd); err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
				continue
			}
		}
		if d.eng == nil {
			d.newEngine()
		}
		err := d.exec(c, cmd)
		switch {
		case cmd.negate && err == nil:
			t.Fatalf("%s: the command succeeded but the case says it must fail", cmd)
		case cmd.negate:
			t.Logf("%s: failed as expected: %v", cmd, err)
			if err := d.drain(); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		case err != nil:
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	if err := d.settle(); err != nil {
		t.Fatalf("end of script: %v", err)
	}
	want, _ := c.file("want.json")
	if err := d.match(want); err != nil {
		t.Fatalf("want.json: %v", err)
	}
}

// crashAt arms crash-at STEP_KEY [N] for the first engine.
func (d *driver) crashAt(cmd command) error {
	n := 1
	if len(cmd.args) == 2 {
		var err error
		if n, err = strconv.Atoi(cmd.args[1]); err != nil || n < 1 {
			return fmt.Errorf("N must be a whole number from 1, not %q", cmd.args[1])
		}
	}
	if d.crashKey != "" {
		return errors.New("only one crash-at per case")
	}
	d.crashKey, d.crashN = cmd.args[0], n
	return nil
}

// exec runs one command after set-up.
func (d *driver) exec(c *testCase, cmd command) error {
	if d.root == "" && cmd.name != "start" && cmd.name != "apply" && cmd.name != "touch" {
		return errors.New("no run has started yet; put start first")
	}
	a := cmd.args
	switch cmd.name {
	case "crash-at":
		return errors.New("crash-at is a set-up command: put it before everything else")
	case "start":
		name := "inputs.json"
		if len(a) == 1 {
			name = a[0]
		}
		inputs := map[string]any{}
		if b, ok := c.file(name); ok {
			if err := json.Unmarshal(b, &inputs); err != nil {
				return fmt.Errorf("%s is not a JSON object: %w", name, err)
			} else if inputs == nil {
				return fmt.Errorf("%s must be a JSON object, not null", name)
			}
		} else if len(a) == 1 {
			return fmt.Errorf("the archive has no file %s", name)
		}
		if _, err := d.start(inputs); err != nil {
			return err
		}
		return d.drain()
	case "settle":
		return d.settle()
	case "advance":
		dur, err := time.ParseDuration(a[0])
		if err != nil || dur <= 0 {
			return fmt.Errorf("advance needs a positive duration such as 5s, not %q", a[0])
		}
		d.clk.Advance(dur)
		return d.drain()
	case "signal":
		var payload json.RawMessage
		if len(a) == 2 {
			payload = json.RawMessage(a[1])
		}
		if _, err := d.eng.Signal(d.ctx, d.root, a[0], payload); err != nil {
			return err
		}
		return d.drain()
	case "cancel":
		if _, err := d.eng.Cancel(d.ctx, d.root); err != nil {
			return err
		}
		return d.drain()
	case "restart":
		return d.restart()
	case "apply":
		b, ok := c.file(a[0])
		if !ok || !strings.HasSuffix(a[0], ".hcl") {
			return fmt.Errorf("apply needs an .hcl file of the archive, not %q", a[0])
		}
		mod, diags := lang.LoadFile(a[0], b)
		if diags.HasErrors() {
			return fmt.Errorf("%s does not compile:\n%s", a[0], diagLines("", diags))
		}
		if err := d.storeGraphs(); err != nil {
			return err
		}
		for _, w := range mod.Workflows {
			if _, err := d.eng.StoreGraph(d.ctx, w.Graph); err != nil {
				return err
			}
		}
		return nil
	case "decide":
		return d.decide(a[0])
	case "redrive":
		from := ""
		if len(a) == 1 {
			from = a[0]
		}
		if _, err := d.eng.Retry(d.ctx, d.root, from); err != nil {
			return err
		}
		return d.drain()
	case "expect":
		return d.expect(a)
	case "runs":
		n, err := strconv.Atoi(a[0])
		if err != nil {
			return fmt.Errorf("runs needs a number, not %q", a[0])
		}
		runs, err := d.db.RunList(d.ctx, store.RunListParams{Workflow: d.workflow})
		if err != nil {
			return err
		}
		if len(runs) != n {
			return fmt.Errorf("the store holds %d runs of %q, want %d", len(runs), d.workflow, n)
		}
		return nil
	case "match":
		b, ok := c.file(a[0])
		if !ok {
			return fmt.Errorf("the archive has no file %s", a[0])
		}
		return d.match(b)
	case "child":
		kids, err := d.db.RunChildren(d.ctx, d.root)
		if err != nil {
			return err
		}
		var got []string
		for _, k := range kids {
			if k.ParentStepKey == a[0] {
				got = append(got, string(k.Status))
			}
		}
		if len(got) == 0 {
			return fmt.Errorf("step %s has no child run", a[0])
		}
		if last := got[len(got)-1]; last != a[1] {
			return fmt.Errorf("the child run of %s is %s, want %s", a[0], last, a[1])
		}
		return nil
	case "touch":
		p := filepath.Join(d.work, filepath.FromSlash(a[0]))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return fmt.Errorf("touch %s: %w", a[0], err)
		}
		return nil
	case "cmp":
		got, err := os.ReadFile(filepath.Join(d.work, filepath.FromSlash(a[0])))
		if err != nil {
			return fmt.Errorf("read %s: %w", a[0], err)
		}
		want, ok := c.file(a[1])
		if !ok {
			return fmt.Errorf("the archive has no file %s", a[1])
		}
		ids, err := d.runIDs()
		if err != nil {
			return err
		}
		got = []byte(mask(string(got), ids).(string))
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s holds %q, want %q (%s)", a[0], got, want, a[1])
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", cmd.name)
}

// expect checks the run's status and, for each STEP=STATUS (or
// STEP[i]=STATUS for a foreach item), a step's.
func (d *driver) expect(args []string) error {
	v, err := d.eng.Show(d.ctx, d.root)
	if err != nil {
		return err
	}
	var bad []string
	if string(v.Status) != args[0] {
		bad = append(bad, fmt.Sprintf("run is %s, want %s (error %s)", v.Status, args[0], v.Error))
	}
	for _, kv := range args[1:] {
		key, want, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("write STEP=STATUS, not %q", kv)
		}
		name, idx := key, -1
		if i := strings.IndexByte(key, '['); i > 0 && strings.HasSuffix(key, "]") {
			n, err := strconv.Atoi(key[i+1 : len(key)-1])
			if err != nil {
				return fmt.Errorf("bad item key %q", key)
			}
			name, idx = key[:i], n
		}
		sv := v.Steps[name]
		if sv == nil {
			return fmt.Errorf("the workflow has no step %q", name)
		}
		got := string(sv.Status)
		if idx >= 0 {
			got = "absent"
			for _, it := range sv.Items {
				if it.Index == idx {
					got = string(it.Status)
				}
			}
		}
		if got != want {
			bad = append(bad, fmt.Sprintf("%s is %s, want %s", key, got, want))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// match compares the run's view with a want document.
func (d *driver) match(want []byte) error {
	w, err := decodeDoc(want)
	if err != nil {
		return fmt.Errorf("the want document is not JSON: %w", err)
	}
	got, err := d.view()
	if err != nil {
		return err
	}
	if ms := subset("", w, got); len(ms) > 0 {
		return fmt.Errorf("the run does not match:\n%s\nthe run (show --json, ids masked):\n%s", mismatches(ms), pretty(got))
	}
	return nil
}

// parseEnv reads NAME=VALUE lines.
func parseEnv(src string) (map[string]string, error) {
	env := map[string]string{}
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("env:%d: write NAME=VALUE, not %q", i+1, line)
		}
		env[k] = v
	}
	return env, nil
}

// diagLines renders error diagnostics in the short form
// FILE:LINE:COL: SUMMARY, with FILE relative to dir.
func diagLines(dir string, diags hcl.Diagnostics) string {
	var lines []string
	for _, dg := range diags {
		if dg.Severity != hcl.DiagError {
			continue
		}
		pos := "-"
		if dg.Subject != nil {
			f := dg.Subject.Filename
			if dir != "" {
				if rel, err := filepath.Rel(dir, f); err == nil {
					f = filepath.ToSlash(rel)
				}
			}
			pos = fmt.Sprintf("%s:%d:%d", f, dg.Subject.Start.Line, dg.Subject.Start.Column)
		}
		lines = append(lines, pos+": "+dg.Summary)
	}
	return strings.Join(lines, "\n")
}

// checkErrors compares the compiler's errors with want-errors.
func checkErrors(t *testing.T, dir string, diags hcl.Diagnostics, want string) {
	got := diagLines(dir, diags)
	if !diags.HasErrors() {
		t.Fatalf("the workflow compiled, but the case wants errors:\n%s", want)
	}
	if strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Fatalf("compile errors differ\ngot:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
}
