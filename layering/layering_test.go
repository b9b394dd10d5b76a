package layering

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/flowrun/flowrun/store"
)

const module = "github.com/flowrun/flowrun"

type pkg struct {
	ImportPath     string
	Dir            string
	Name           string
	GoFiles        []string
	IgnoredGoFiles []string // excluded on this system by build constraints
	TestGoFiles    []string
	XTestGoFiles   []string
	Imports        []string
	TestImports    []string
	XTestImports   []string
}

// sources are the package's non-test files for every system: the build's
// files here and those its build constraints leave out here
// (hold_other.go on Linux), which another system compiles.
func (p pkg) sources() []string {
	var out []string
	for _, f := range append(append([]string(nil), p.GoFiles...), p.IgnoredGoFiles...) {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, filepath.Join(p.Dir, f))
		}
	}
	return out
}

// testOnly returns the packages that tests import and no package's
// non-test code does (store/storetest, tui/internal/fixture): the
// packages a rule's "outside tests" leaves out. A package imported by
// nothing at all (the embedding facade) is not one.
func testOnly(list []pkg) map[string]bool {
	byCode, byTests := map[string]bool{}, map[string]bool{}
	for _, p := range list {
		for _, imp := range p.Imports {
			byCode[imp] = true
		}
		for _, imp := range append(append([]string(nil), p.TestImports...), p.XTestImports...) {
			if imp != p.ImportPath { // an external test of the package itself
				byTests[imp] = true
			}
		}
	}
	out := map[string]bool{}
	for imp := range byTests {
		if !byCode[imp] {
			out[imp] = true
		}
	}
	return out
}

// ignoredImports returns the imports of a package's files that build
// constraints leave out on this system, which go list does not report.
func ignoredImports(t *testing.T, p pkg) []string {
	t.Helper()
	var out []string
	for _, f := range p.IgnoredGoFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			out = append(out, strings.Trim(imp.Path.Value, `"`))
		}
	}
	return out
}

var listed struct {
	sync.Once
	list []pkg
	err  error
}

// packages lists the module's packages with `go list`, the build's own view
// of imports (build tags and all), once for all the tests.
func packages(t *testing.T) []pkg {
	t.Helper()
	listed.Do(func() { listed.list, listed.err = goList() })
	if listed.err != nil {
		t.Fatal(listed.err)
	}
	return listed.list
}

func goList() ([]pkg, error) {
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var list []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		list = append(list, p)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	if len(list) < 10 {
		return nil, fmt.Errorf("go list found %d packages; the module path is wrong", len(list))
	}
	return list, nil
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
	testPkgs := testOnly(list)
	drivers := []string{"store/sqlite", "store/postgres"}
	// A forbidden path ending in "." is that package alone, not the ones
	// below it: lang/graph must not import the front end, package lang,
	// and may import lang/naming. A rule with tests set holds for the
	// package's tests too.
	rules := []struct {
		from   string
		forbid []string
		tests  bool
		why    string
	}{
		{"lang/graph", []string{"lang.", "lang/expr"}, false, "the graph IR is what the front end compiles to and what the engine runs; it knows expressions as text and types, not the HCL front end or the CEL layer"},
		{"lang/expr", []string{"lang."}, false, "the CEL layer checks and evaluates a graph's expressions; the front end uses it, never the other way"},
		{"lang/graph/internal/irgen", []string{"lang.", "lang/graph.", "lang/expr", "interp", "store"}, false, "irgen writes part of lang/graph from its source text; it cannot depend on the package it writes"},
		{"lang/naming", []string{"lang.", "lang/graph", "lang/expr", "interp", "store"}, false, "naming words names for messages; every package of lang uses it, so it uses none of them"},
		{"lang/openapi", []string{"lang.", "lang/graph", "lang/expr", "interp", "store"}, false, "openapi reads an OpenAPI document's bytes into its model; the front end compiles against the model, so openapi knows neither it nor the IR"},
		{"store", []string{"lang", "interp"}, true, "the store keeps rows; it must not know the language or the engine"},
		{"lang", []string{"interp", "store"}, true, "the language compiles files; it must not run or store them"},
		{"interp", append([]string{"cmd", "tui"}, drivers...), false, "the engine sees the store through package store's interfaces and knows no front end"},
		{"interp", []string{"lang."}, false, "the engine runs stored graphs and parses no HCL: the front end, package lang, compiles them"},
		{"schedule", []string{"lang", "interp", "store", "cmd"}, false, "schedule is pure time: it parses specs and computes slots, and knows neither the language, the engine nor the store"},
		{"server", append([]string{"lang.", "cmd", "tui"}, drivers...), false, "the HTTP API calls the engine and reads through the store's interfaces; it parses no HCL, opens no driver and knows no front end"},
		{"cmd", drivers, false, "the binaries open the store that --db or FLOWRUN_DB names through store/backend, the one Open(dsn) they share"},
		{"termtext", []string{"lang", "interp", "store", "tui", "cmd"}, false, "termtext escapes text for terminals; the CLI and flowtui share it, so it depends on neither, nor on what the text came from"},
		{"telemetry", []string{"lang", "interp", "store", "tui", "cmd"}, false, "telemetry is what the engine reports, as plain values; it knows neither the engine, the store nor the language"},
		{".", []string{"cmd", "tui", "server", "telemetry/metrics", "telemetry/tracing", "lsp", "testrun", "bench"}, false, "package flowrun is the embedding facade over interp, lang and store: it calls them and knows no front end, server or exporter"},
		{"interp", []string{"telemetry/metrics", "telemetry/tracing"}, false, "the engine reports through package telemetry's Observer; the Prometheus and OpenTelemetry implementations are wired in by the CLI"},
	}
	for _, p := range list {
		from := rel(p.ImportPath)
		code := append(append([]string(nil), p.Imports...), ignoredImports(t, p)...)
		tests := append(append([]string(nil), p.TestImports...), p.XTestImports...)
		for _, imp := range append(code, tests...) {
			if rel(imp) == "layering" {
				t.Errorf("%s imports layering: it holds the module's rules as tests and must not be imported by anything", from)
			}
		}
		check := func(imp string, inTest bool) {
			to := rel(imp)
			if !strings.HasPrefix(imp, module) {
				// The compiler opens no network connection: a document
				// an openapi action names by URL is fetched by the
				// fetcher its caller gives it (package docfetch).
				if !inTest && under(from, "lang") && (imp == "net" || imp == "net/http" || strings.HasPrefix(imp, "net/http/")) {
					t.Errorf("%s imports %s: lang opens no network connection; its callers fetch OpenAPI documents by URL (lang.LoadOptions.FetchDocument)", from, imp)
				}
				// The OpenAPI reader takes bytes and returns its model:
				// it opens no file and no connection.
				if !inTest && under(from, "lang/openapi") && (imp == "os" || imp == "os/exec" || imp == "io/fs" || imp == "io/ioutil" ||
					imp == "net" || strings.HasPrefix(imp, "net/") && imp != "net/url") {
					t.Errorf("%s imports %s: lang/openapi does no file or network I/O; package lang reads the document and hands it the bytes", from, imp)
				}
				// The engine and telemetry's interface know no metrics or
				// tracing library: only telemetry/metrics and
				// telemetry/tracing (and the CLI that wires them) do.
				if !inTest && (under(from, "interp") || from == "telemetry" || under(from, "store") || under(from, "lang")) &&
					(strings.HasPrefix(imp, "github.com/prometheus/") || strings.HasPrefix(imp, "go.opentelemetry.io/")) {
					t.Errorf("%s imports %s: metrics and tracing libraries stay behind telemetry.Observer, in telemetry/metrics and telemetry/tracing", from, imp)
				}
				return
			}
			if !inTest && to == "." && from != "." {
				t.Errorf("%s imports package flowrun: the facade is for programs that embed flowrun; flowrun's own packages call interp, lang and store directly", from)
			}
			for _, r := range rules {
				if !under(from, r.from) || inTest && !r.tests {
					continue
				}
				for _, f := range r.forbid {
					if exact, ok := strings.CutSuffix(f, "."); ok && to == exact || !ok && under(to, f) {
						what := "imports"
						if inTest {
							what = "tests import"
						}
						t.Errorf("%s %s %s: %s", from, what, to, r.why)
					}
				}
			}
			if !inTest && under(from, "tui") && !testPkgs[p.ImportPath] {
				for _, d := range drivers {
					if under(to, d) {
						t.Errorf("%s imports %s: the TUI gets its store from the binary; only tests and test-only packages may open a driver", from, to)
					}
				}
			}
		}
		for _, imp := range code {
			check(imp, false)
		}
		for _, imp := range tests {
			if imp != p.ImportPath { // an external test importing its package
				check(imp, true)
			}
		}
	}
}

// TestOnlyTheEngineDecodesStoredGraphs: a stored graph is decoded in one
// place, the engine's graph cache (interp.Engine.Graph and what calls it),
// so the CLI, flowtui and the API share its one cache and a graph stored
// by this process is never decoded again. Outside lang/graph, which
// defines it, interp, and api (whose Client has no engine: it decodes the
// graphs a server sends, and keeps them by hash), no non-test code calls
// graph.Decode.
func TestOnlyTheEngineDecodesStoredGraphs(t *testing.T) {
	const graphPath = module + "/lang/graph"
	checked := 0
	for _, p := range packages(t) {
		from := rel(p.ImportPath)
		if under(from, "lang/graph") || from == "interp" || from == "api" {
			continue
		}
		for _, path := range p.sources() {
			fset, f := parseSource(t, path)
			checked++
			name := importName(f, graphPath, "graph")
			if name == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && sel.Sel.Name == "Decode" {
						t.Errorf("%s: graph.Decode: read a stored graph through the engine (interp.Engine.Graph, VersionGraph, RunGraph), whose cache every front end shares", fset.Position(sel.Pos()))
					}
				}
				return true
			})
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files", checked)
	}
}

// importName returns the name file f uses for the package path (its last
// element def unless renamed), or "" when f does not import it.
func importName(f *ast.File, path, def string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return def
		}
	}
	return ""
}

// clockFuncs are the time package's functions that read the wall clock or
// wait on it.
var clockFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"Tick": true, "NewTimer": true, "NewTicker": true, "AfterFunc": true,
}

// TestOnlyClockReadsTheWallClock scans every non-test file outside package
// clock, for every system (the files build constraints leave out here
// too). Test files and test-only packages (imported by tests alone, such
// as store/storetest, whose WaitForWork case needs a real commit and a
// real wait) are left out: they exercise real processes and real stores.
func TestOnlyClockReadsTheWallClock(t *testing.T) {
	checked := 0
	list := packages(t)
	testPkgs := testOnly(list)
	for _, p := range list {
		if under(rel(p.ImportPath), "clock") || testPkgs[p.ImportPath] {
			continue
		}
		for _, path := range p.sources() {
			fset, f := parseSource(t, path)
			checked++
			timeName := importName(f, "time", "time")
			if timeName == "" || timeName == "_" {
				continue
			}
			if timeName == "." {
				t.Errorf("%s: a dot import of time hides its wall-clock calls from this test; import it by name", path)
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

// goroutineClaims are the packages whose doc promises something of their
// goroutines: "none" starts no goroutine at all; "waited" may start them
// only with a sync.WaitGroup's Go whose Wait the same function calls, so
// none outlives the call that started it.
var goroutineClaims = map[string]string{
	"lang/expr":   "none",
	"lsp":         "none",
	"tui/display": "none",
	"tui/theme":   "none",
	"lang":        "waited",
	"lang/graph":  "waited",
}

var claimWords = map[string]string{"none": "no goroutines", "waited": "no goroutine outlives the call that started it"}

// TestGoroutineClaims holds the package docs that speak of goroutines to
// their word (see goroutineClaims).
func TestGoroutineClaims(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range packages(t) {
		claim, ok := goroutineClaims[rel(p.ImportPath)]
		if !ok {
			continue
		}
		seen[rel(p.ImportPath)] = true
		for _, path := range p.sources() {
			fset, f := parseSource(t, path)
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				waited := map[string]bool{} // receivers of a .Wait() call in fn
				var gos []*ast.SelectorExpr
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.GoStmt:
						t.Errorf("%s: a go statement in %s, whose doc promises %s: start goroutines with a WaitGroup's Go and wait for them in the same function, or change the doc", fset.Position(n.Pos()), rel(p.ImportPath), claimWords[claim])
					case *ast.CallExpr:
						if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
							if id, ok := sel.X.(*ast.Ident); ok {
								switch sel.Sel.Name {
								case "Wait":
									waited[id.Name] = true
								case "Go":
									gos = append(gos, sel)
								}
							}
						}
					}
					return true
				})
				for _, sel := range gos {
					name := sel.X.(*ast.Ident).Name
					switch {
					case claim == "none":
						t.Errorf("%s: %s.Go in %s, whose doc says it starts no goroutines", fset.Position(sel.Pos()), name, rel(p.ImportPath))
					case !waited[name]:
						t.Errorf("%s: %s.Go in %s without %s.Wait in the same function: the doc promises no goroutine outlives its call", fset.Position(sel.Pos()), name, rel(p.ImportPath), name)
					}
				}
			}
		}
	}
	for p := range goroutineClaims {
		if !seen[p] {
			t.Errorf("package %s of goroutineClaims is gone; update the table", p)
		}
	}
}

// parseSource parses the Go file at path (comments are left out).
func parseSource(t *testing.T, path string) (*token.FileSet, *ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return fset, f
}

// eachStruct parses the file at path and calls fn with every struct type
// it declares (at any depth).
func eachStruct(t *testing.T, path string, fn func(fset *token.FileSet, ts *ast.TypeSpec, st *ast.StructType)) {
	t.Helper()
	fset, f := parseSource(t, path)
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok {
			if st, ok := ts.Type.(*ast.StructType); ok {
				fn(fset, ts, st)
			}
		}
		return true
	})
}

// structFields returns the struct types of the files (by name)
// with their fields as "Name Type", the type written without the package
// qualifier of pkg (store.RunStatus in tui is RunStatus in store).
func structFields(t *testing.T, paths []string, pkgName string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, path := range paths {
		eachStruct(t, path, func(fset *token.FileSet, ts *ast.TypeSpec, st *ast.StructType) {
			fields := map[string]bool{}
			for _, fl := range st.Fields.List {
				var b strings.Builder
				if err := printer.Fprint(&b, fset, fl.Type); err != nil {
					t.Fatal(err)
				}
				typ := b.String()
				for _, q := range []string{"store.", "interp.", "graph."} {
					typ = strings.ReplaceAll(typ, q, "")
				}
				for _, name := range fl.Names {
					fields[name.Name+" "+typ] = true
				}
			}
			out[pkgName+"."+ts.Name.Name] = fields
		})
	}
	return out
}

// TestTUIKeepsNoMirrors fails when a struct of the TUI repeats four or
// more fields (name and type) of a struct of the engine or the store: a
// mirror of an engine type, copied field by field by an adapter, that
// drifts from what it mirrors. The TUI embeds or holds the engine's own
// types instead.
func TestTUIKeepsNoMirrors(t *testing.T) {
	const most = 3
	engine := map[string]map[string]bool{}
	tui := map[string]map[string]bool{}
	for _, p := range packages(t) {
		from := rel(p.ImportPath)
		switch {
		case from == "interp" || from == "store":
			for k, v := range structFields(t, p.sources(), from) {
				engine[k] = v
			}
		case under(from, "tui"):
			for k, v := range structFields(t, p.sources(), from) {
				tui[k] = v
			}
		}
	}
	if len(engine) < 50 || len(tui) < 10 {
		t.Fatalf("found %d engine and %d TUI structs", len(engine), len(tui))
	}
	for tn, tf := range tui {
		for en, ef := range engine {
			var same []string
			for f := range tf {
				if ef[f] {
					same = append(same, strings.Fields(f)[0])
				}
			}
			if len(same) > most {
				sort.Strings(same)
				t.Errorf("%s repeats %d fields of %s (%s): embed or hold %s instead of mirroring it", tn, len(same), en, strings.Join(same, ", "), en)
			}
		}
	}
}

// maxFields is the most fields a struct type may have before it is
// several ideas that want types of their own.
const maxFields = 20

// bigStructs are the struct types allowed more than maxFields fields, with
// why each is one idea.
var bigStructs = map[string]string{
	"store.Run":       "a row of the runs table: one field a column",
	"store.Schedule":  "a row of the schedules table: one field a column",
	"tui/keys.KeyMap": "one binding an action; the help bar lists them",
}

// TestStructSizes fails when a struct type of the module, tests included,
// has more than maxFields fields (an embedded field counts once) and is not
// in bigStructs, and when an entry of bigStructs is no longer over the
// limit (or gone): the table lists only what needs it.
func TestStructSizes(t *testing.T) {
	n := 0
	big := map[string]bool{}
	for _, p := range packages(t) {
		from := rel(p.ImportPath)
		files := p.sources()
		for _, f := range append(append([]string(nil), p.TestGoFiles...), p.XTestGoFiles...) {
			files = append(files, filepath.Join(p.Dir, f))
		}
		for _, path := range files {
			eachStruct(t, path, func(fset *token.FileSet, ts *ast.TypeSpec, st *ast.StructType) {
				n++
				fields := 0
				for _, fl := range st.Fields.List {
					fields += max(len(fl.Names), 1)
				}
				if fields > maxFields {
					big[from+"."+ts.Name.Name] = true
				}
				if fields > maxFields && bigStructs[from+"."+ts.Name.Name] == "" {
					t.Errorf("%s: %s.%s has %d fields (at most %d): group the fields of each idea in a type of its own, or say in bigStructs why it is one idea",
						fset.Position(ts.Pos()), from, ts.Name.Name, fields, maxFields)
				}
			})
		}
	}
	if n < 200 {
		t.Fatalf("found only %d struct types", n)
	}
	for name := range bigStructs {
		if !big[name] {
			t.Errorf("bigStructs lists %s, which no longer has more than %d fields: remove it from the table", name, maxFields)
		}
	}
}

// cliStoreCalls are the store methods the CLI may call itself, as its
// package doc says: reads of what it prints, and the two writes that change
// no run. Everything else goes through the engine. (BreakerList,
// DeadLetterList and WorkerList are also the engine's names; all are
// reads.)
var cliStoreCalls = map[string]bool{
	"RunGet": true, "RunList": true, "EventList": true, "StepHeads": true, "VersionHeads": true,
	"ScheduleList": true, "ScheduleGet": true, "TokenList": true, "RunQueue": true, "BreakerList": true,
	"DeadLetterList": true, "DeadLetterOpenCount": true, "WorkerList": true, "Close": true,
	"RunPrune": true, "TokenCreate": true, "TokenRevoke": true,
}

// TestCLIStoreCalls fails when the CLI calls a method of the store contract
// that its package doc does not allow it (a method by that name, whatever
// the receiver: the engine's names differ from the store's but for two
// reads).
func TestCLIStoreCalls(t *testing.T) {
	methods := map[string]bool{}
	for _, it := range []reflect.Type{reflect.TypeFor[store.Store](), reflect.TypeFor[store.TransitionClaimer](),
		reflect.TypeFor[store.CancelPoller](), reflect.TypeFor[store.WorkWaiter]()} {
		for i := range it.NumMethod() {
			methods[it.Method(i).Name] = true
		}
	}
	checked := 0
	for _, p := range packages(t) {
		if rel(p.ImportPath) != "cmd/flowrun/internal/cli" {
			continue
		}
		for _, path := range p.sources() {
			fset, f := parseSource(t, path)
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if sel, ok := c.Fun.(*ast.SelectorExpr); ok && methods[sel.Sel.Name] && !cliStoreCalls[sel.Sel.Name] {
						t.Errorf("%s: the CLI calls the store's %s: carry it out through interp.Engine (cli's package doc lists what the CLI may call itself)", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files of the CLI", checked)
	}
}
