package layering

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/flowrun/flowrun"

type pkg struct {
	ImportPath   string
	Dir          string
	Name         string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// packages lists the module's packages with `go list`, the build's own view
// of imports (build tags and all).
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	var list []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		list = append(list, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(list) < 10 {
		t.Fatalf("go list found %d packages; the module path is wrong", len(list))
	}
	return list
}

func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// under reports whether the package path p is dir or below it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func TestImportRules(t *testing.T) {
	list := packages(t)
	// A test-only package is imported by no package's non-test code and is
	// not a command.
	usedByCode := map[string]bool{}
	for _, p := range list {
		for _, imp := range p.Imports {
			usedByCode[rel(imp)] = true
		}
	}
	drivers := []string{"store/sqlite", "store/postgres"}
	// A forbidden path ending in "." is that package alone, not the ones
	// below it: lang/graph must not import the front end, package lang,
	// and may import lang/naming.
	rules := []struct {
		from   string
		forbid []string
		why    string
	}{
		{"lang/graph", []string{"lang.", "lang/expr"}, "the graph IR is what the front end compiles to and what the engine runs; it knows expressions as text and types, not the HCL front end or the CEL layer"},
		{"lang/expr", []string{"lang."}, "the CEL layer checks and evaluates a graph's expressions; the front end uses it, never the other way"},
		{"lang/graph/internal/stepgen", []string{"lang.", "lang/graph.", "lang/expr", "interp", "store"}, "stepgen writes part of lang/graph from its source text; it cannot depend on the package it writes"},
		{"lang/naming", []string{"lang.", "lang/graph", "lang/expr", "interp", "store"}, "naming words names for messages; every package of lang uses it, so it uses none of them"},
		{"store", []string{"lang", "interp"}, "the store keeps rows; it must not know the language or the engine"},
		{"lang", []string{"interp", "store"}, "the language compiles files; it must not run or store them"},
		{"interp", append([]string{"cmd", "tui"}, drivers...), "the engine sees the store through package store's interfaces and knows no front end"},
		{"schedule", []string{"lang", "interp", "store", "cmd"}, "schedule is pure time: it parses specs and computes slots, and knows neither the language, the engine nor the store"},
		{"server", append([]string{"lang.", "cmd", "tui"}, drivers...), "the HTTP API calls the engine and reads through the store's interfaces; it parses no HCL, opens no driver and knows no front end"},
		{"termtext", []string{"lang", "interp", "store", "tui", "cmd"}, "termtext escapes text for terminals; the CLI and flowtui share it, so it depends on neither, nor on what the text came from"},
		{"telemetry", []string{"lang", "interp", "store", "tui", "cmd"}, "telemetry is what the engine reports, as plain values; it knows neither the engine, the store nor the language"},
		{".", []string{"cmd", "tui", "server", "telemetry/metrics", "telemetry/tracing", "lsp", "testrun", "bench"}, "package flowrun is the embedding facade over interp, lang and store: it calls them and knows no front end, server or exporter"},
		{"interp", []string{"telemetry/metrics", "telemetry/tracing"}, "the engine reports through package telemetry's Observer; the Prometheus and OpenTelemetry implementations are wired in by the CLI"},
	}
	for _, p := range list {
		from := rel(p.ImportPath)
		for _, imp := range p.Imports {
			to := rel(imp)
			if !strings.HasPrefix(imp, module) {
				// The engine and telemetry's interface know no metrics or
				// tracing library: only telemetry/metrics and
				// telemetry/tracing (and the CLI that wires them) do.
				if (under(from, "interp") || from == "telemetry" || under(from, "store") || under(from, "lang")) &&
					(strings.HasPrefix(imp, "github.com/prometheus/") || strings.HasPrefix(imp, "go.opentelemetry.io/")) {
					t.Errorf("%s imports %s: metrics and tracing libraries stay behind telemetry.Observer, in telemetry/metrics and telemetry/tracing", from, imp)
				}
				continue
			}
			if to == "." && from != "." {
				t.Errorf("%s imports package flowrun: the facade is for programs that embed flowrun; flowrun's own packages call interp, lang and store directly", from)
			}
			for _, r := range rules {
				if !under(from, r.from) {
					continue
				}
				for _, f := range r.forbid {
					if exact, ok := strings.CutSuffix(f, "."); ok && to == exact || !ok && under(to, f) {
						t.Errorf("%s imports %s: %s", from, to, r.why)
					}
				}
			}
			if under(from, "tui") && usedByCode[from] {
				for _, d := range drivers {
					if under(to, d) {
						t.Errorf("%s imports %s: the TUI gets its store from the binary; only tests and test-only packages may open a driver", from, to)
					}
				}
			}
		}
	}
}

// clockFuncs are the time package's functions that read the wall clock or
// wait on it.
var clockFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"Tick": true, "NewTimer": true, "NewTicker": true, "AfterFunc": true,
}

// TestOnlyClockReadsTheWallClock scans every non-test file outside package
// clock. Test files and test-only packages (imported by tests alone, such
// as store/storetest, whose WaitForWork case needs a real commit and a real
// wait) are left out: they exercise real processes and real stores.
func TestOnlyClockReadsTheWallClock(t *testing.T) {
	checked := 0
	list := packages(t)
	usedByCode := map[string]bool{}
	for _, p := range list {
		for _, imp := range p.Imports {
			usedByCode[imp] = true
		}
	}
	for _, p := range list {
		if under(rel(p.ImportPath), "clock") || (!usedByCode[p.ImportPath] && p.Name != "main") {
			continue
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			timeName := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"time"` {
					timeName = "time"
					if imp.Name != nil {
						timeName = imp.Name.Name
					}
				}
			}
			if timeName == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && clockFuncs[sel.Sel.Name] {
					t.Errorf("%s: time.%s: read time through package clock (clock.Clock), so tests can run it on a fake clock", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files", checked)
	}
}
