package cli

// flowrun test: runs the test blocks of *.test.hcl files (spec/testing.md)
// with package testrun, and words the results as go test does.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/flowrun/flowrun/termtext"
	"github.com/flowrun/flowrun/testrun"
	"github.com/hashicorp/hcl/v2"
)

// testFlags are the flags of flowrun test.
type testFlags struct {
	run          string
	json         bool
	junit        string
	cover        bool
	coverprofile string
	coverjson    string
	crash        bool
	mockAll      bool
}

func testCommand() *command {
	return &command{
		name:  "test",
		args:  "[PATH...]",
		short: "run the tests of *.test.hcl files with mocks, virtual time and crash replays",
		long: `Test runs every test block of the *.test.hcl files of each directory given
(default .), or of the test files given, against the workflows of the same
directory. A test runs in-process on a scratch store with a virtual clock
(sleeps, backoff and timeouts pass at once); mocks replace step actions,
signals and upgrades happen at virtual times, and expect compares the
finished run. It prints "--- PASS" or "--- FAIL" per test, with the
expected and actual values and the file:line of each failed expectation.
Exit codes: 0 every test passed, 1 a test failed, 2 a test file or workflow
is invalid (nothing runs then). It never opens the database.`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			var f testFlags
			fs.StringVar(&f.run, "run", "", "run only the tests whose FILE/NAME matches this regular expression")
			fs.BoolVar(&f.json, "json", false, "print one JSON event per line instead of text")
			fs.StringVar(&f.junit, "junit", "", "also write the results as JUnit XML to this file")
			fs.BoolVar(&f.cover, "cover", false, "print which steps ran, were skipped, and which switch branches were taken")
			fs.StringVar(&f.coverprofile, "coverprofile", "", "write the coverage in LCOV format (read by Codecov, Coveralls, SonarQube, genhtml) to this file")
			fs.StringVar(&f.coverjson, "coverjson", "", "write the coverage as flowrun's JSON (steps, switch branches, when conditions) to this file")
			fs.BoolVar(&f.crash, "crash", false, "run every test again once per commit point, the engine dropped after that commit and rebuilt from the store")
			fs.BoolVar(&f.mockAll, "mock-all", false, "make an exec or http step without a mock a test failure instead of running it")
			e.maxFileSizeFlag(fs)
			return func(ctx context.Context, args []string) error {
				return e.test(ctx, args, f)
			}
		},
	}
}

// testDir is one directory's workflows and test files.
type testDir struct {
	dir   string
	files []string // test files, sorted
	mod   *lang.Module
	tests []*testfile.File
}

func (e *env) test(ctx context.Context, args []string, f testFlags) error {
	var filter *regexp.Regexp
	if f.run != "" {
		re, err := regexp.Compile(f.run)
		if err != nil {
			return usageErrorf("-run %q is not a regular expression: %v", f.run, err).
				hint("Pass a Go regular expression matched against FILE/NAME, like -run 'deploy.test.hcl/approval'.")
		}
		filter = re
	}
	// A report that could not be written is found before the tests run,
	// not after a CI job spent its time on them.
	for _, r := range []struct{ flag, path string }{{"junit", f.junit}, {"coverprofile", f.coverprofile}, {"coverjson", f.coverjson}} {
		if r.path == "" {
			continue
		}
		dir := filepath.Dir(r.path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usageErrorf("--%s %s: there is no directory %s to write it in; no test ran", r.flag, r.path, dir).
				hint("Make the directory first, or write the file somewhere that exists.")
		}
		if fi, err := os.Stat(r.path); err == nil && fi.IsDir() {
			return usageErrorf("--%s %s is a directory; no test ran", r.flag, r.path).
				hint(fmt.Sprintf("Name a file in it, like --%s %s.", r.flag, filepath.Join(r.path, map[string]string{"junit": "junit.xml", "coverprofile": "coverage.lcov", "coverjson": "coverage.json"}[r.flag])))
		}
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	dirs, err := findTestFiles(args)
	if err != nil {
		return err
	}
	// Every file is checked before anything runs: an invalid one is exit 2.
	invalid := false
	for _, d := range dirs {
		if !e.checkTestDir(ctx, d) {
			invalid = true
		}
	}
	if invalid {
		return usageErrorf("invalid test files or workflows; no test ran").
			hint("Fix the errors above and run flowrun test again.")
	}
	rep := &testReport{e: e, flags: f}
	for _, d := range dirs {
		var all []*graph.Graph
		for _, w := range d.mod.Workflows {
			all = append(all, w.Graph)
			rep.sources(w.Name, w.Sources)
		}
		abs, err := filepath.Abs(d.dir)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", d.dir, err)
		}
		began := e.clock.Now()
		sc, err := testrun.NewScratch(ctx, "", all)
		if err != nil {
			return err
		}
		for _, tf := range d.tests {
			base := filepath.Base(tf.Name)
			for _, t := range tf.Tests {
				full := base + "/" + t.Name
				if filter != nil && !filter.MatchString(full) {
					continue
				}
				rep.start(d.dir, full)
				res := testrun.Run(ctx, t, testrun.Options{
					MockAll: f.mockAll, Crash: f.crash, Wall: e.clock, WorkDir: abs,
					Scratch: sc, Getenv: e.getenv, Environ: os.Environ,
				})
				rep.result(d.dir, full, t, res)
			}
		}
		if err := sc.Close(); err != nil {
			return fmt.Errorf("remove the scratch stores: %w", err)
		}
		rep.dirDone(d.dir, e.clock.Now().Sub(began))
	}
	if err := rep.finish(); err != nil {
		return err
	}
	if rep.ran == 0 {
		fmt.Fprintf(e.stderr, "flowrun test: no test matched -run %q\n", f.run)
	}
	if rep.failed > 0 {
		return exitCode(ExitFailed)
	}
	return nil
}

// findTestFiles groups the test files named by args by directory: a
// directory gives its *.test.hcl files (not recursively), a file itself.
func findTestFiles(args []string) ([]*testDir, error) {
	byDir := map[string]*testDir{}
	var order []string
	add := func(dir, file string) {
		d := byDir[dir]
		if d == nil {
			d = &testDir{dir: dir}
			byDir[dir] = d
			order = append(order, dir)
		}
		for _, f := range d.files {
			if f == file {
				return
			}
		}
		d.files = append(d.files, file)
	}
	if err := notRecursive("test", args); err != nil {
		return nil, err
	}
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, usageErrorf("%s does not exist", a).hint("Name directories holding *.test.hcl files, or the test files themselves.")
		}
		if !info.IsDir() {
			if !lang.IsTestFile(a) {
				return nil, usageErrorf("%s is not a test file: test files end in %s", a, lang.TestFileSuffix).
					hint("Name the test file (NAME.test.hcl) or its directory.")
			}
			add(filepath.Dir(a), a)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(a, "*"+lang.TestFileSuffix))
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", a, err)
		}
		if len(matches) == 0 {
			return nil, usageErrorf("%s holds no test files (*%s)", a, lang.TestFileSuffix).
				hint(`Write one beside the workflows, like deploy.test.hcl holding test "it deploys" { expect { status = "completed" } }.`)
		}
		for _, m := range matches {
			add(filepath.Clean(a), m)
		}
	}
	out := make([]*testDir, 0, len(order))
	for _, dir := range order {
		d := byDir[dir]
		sort.Strings(d.files)
		out = append(out, d)
	}
	return out, nil
}

// checkTestDir loads a directory's workflows and parses and checks its
// test files, printing every diagnostic; it reports whether all are valid.
func (e *env) checkTestDir(ctx context.Context, d *testDir) bool {
	mod, err := e.loadFilesOnly(ctx, []string{d.dir})
	if err != nil {
		fmt.Fprintf(e.stderr, "flowrun test: %s: %s\n", d.dir, termtext.Line(err.Error()))
		return false
	}
	d.mod = mod
	ok := true
	for _, name := range d.files {
		tf, diags := e.checkTestFile(ctx, name, mod)
		if diags.HasErrors() {
			ok = false
			continue
		}
		d.tests = append(d.tests, tf)
	}
	return ok
}

// checkTestFile parses and checks one test file against mod and prints
// its diagnostics.
func (e *env) checkTestFile(ctx context.Context, name string, mod *lang.Module) (*testfile.File, hcl.Diagnostics) {
	src, err := lang.ReadFileMax(name, e.workflowFileLimit())
	if err != nil {
		d := hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read file", Detail: fmt.Sprintf("Reading %s failed: %v.", name, err)}}
		_ = e.writeDiags(nil, d)
		return nil, d
	}
	tf, diags := testfile.Parse(name, src)
	files := map[string]*hcl.File{name: tf.HCL}
	for k, v := range mod.Files {
		files[k] = v
	}
	if !tf.Syntax {
		load := func(p string) (*lang.Module, hcl.Diagnostics) {
			return lang.LoadPathsWith([]string{p}, e.loadOptions(ctx))
		}
		diags = testfile.Sorted(append(diags, testfile.Check(tf, mod, filepath.Dir(name), load, files)...))
	}
	if len(diags) > 0 {
		if err := e.writeDiags(files, diags); err != nil {
			fmt.Fprintf(e.stderr, "flowrun test: writing diagnostics: %v\n", err)
		}
	}
	return tf, diags
}

// seconds formats a duration as go test does: 0.01s.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// indentLines prefixes every line of s.
func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// splitTestArgs separates validate's arguments: test files named on their
// own, and the test files of the directories named, from the workflow
// paths (a directory stays a workflow path: loading it skips its test
// files).
func splitTestArgs(args []string) (workflows, tests []string, err error) {
	for _, a := range args {
		if lang.IsTestFile(a) {
			tests = append(tests, a)
			if !containsString(workflows, filepath.Dir(a)) {
				workflows = append(workflows, filepath.Dir(a))
			}
			continue
		}
		workflows = append(workflows, a)
		if info, err := os.Stat(a); err == nil && info.IsDir() {
			m, err := filepath.Glob(filepath.Join(a, "*"+lang.TestFileSuffix))
			if err != nil {
				return nil, nil, fmt.Errorf("list %s: %w", a, err)
			}
			tests = append(tests, m...)
		}
	}
	return workflows, tests, nil
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// validateTests checks test files against the workflows of their
// directories (validate: spec/testing.md): valid receives each valid file
// with its number of tests and the workflows they test (sorted, once
// each); the diagnostics of the others are printed.
func (e *env) validateTests(ctx context.Context, files []string, valid func(name string, tests int, workflows []string)) error {
	bad := 0
	for _, name := range files {
		mod, diags := lang.LoadPathsWith([]string{filepath.Dir(name)}, e.loadOptions(ctx))
		if diags.HasErrors() {
			// The workflows' own errors were reported by load.
			bad++
			continue
		}
		tf, d := e.checkTestFile(ctx, name, mod)
		if d.HasErrors() {
			bad++
			continue
		}
		tested := []string{}
		for _, t := range tf.Tests {
			if t.Graph != nil && !slices.Contains(tested, t.Graph.Workflow) {
				tested = append(tested, t.Graph.Workflow)
			}
		}
		slices.Sort(tested)
		valid(name, len(tf.Tests), tested)
	}
	if bad > 0 {
		return usageErrorf("%s invalid", plural(bad, "test file is", "test files are")).
			hint("Fix the errors above and run the command again.")
	}
	return nil
}
