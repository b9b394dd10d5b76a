package lang

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/flowrun/flowrun/lang/graph"
	"github.com/hashicorp/hcl/v2"
)

// Module is what a set of workflow files compiles to.
type Module struct {
	// Files holds every parsed file by the name used in diagnostics, for
	// WriteDiagnostics.
	Files map[string]*hcl.File
	// Workflows in the order they were read (files in the order given,
	// a directory's files sorted, blocks in file order).
	Workflows []*Workflow
}

// Workflow is one compiled workflow block.
type Workflow struct {
	Name  string
	File  string
	Range hcl.Range // the workflow block's header (workflow "NAME")
	// Graph is nil when the workflow has errors.
	Graph   *graph.Graph
	Sources *SourceMap
}

// Workflow returns the workflow named name, or nil.
func (m *Module) Workflow(name string) *Workflow {
	for _, w := range m.Workflows {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// LoadPaths reads and compiles workflow files. Each path is a file, or a
// directory whose *.hcl files (sorted, not recursive) are read. A missing
// path, a directory without .hcl files, no workflow at all, and two
// workflows with one name (in one file or across files) are errors. File
// names in diagnostics are the paths as given (joined with the file name
// for directories), so relative paths stay relative.
//
// The Module holds what could be decoded even when the diagnostics have
// errors; a workflow with errors has a nil Graph.
func LoadPaths(paths []string) (*Module, hcl.Diagnostics) {
	return LoadPathsWith(paths, LoadOptions{})
}

// LoadOptions are the settings of LoadPathsWith and LoadFileWith.
type LoadOptions struct {
	// Stored returns the stored versions of the workflow named name (nil
	// when there are none). A workflow step's child is looked up among the
	// files being loaded and these; the newest version its pin matches
	// gives the types of its inputs and outputs (language.md §8.6). With
	// Stored nil, a child that is in none of the files is not checked and
	// its output is typed any; with Stored set it is an error.
	Stored func(name string) ([]*graph.Graph, error)
	// MaxFileSize is the most bytes a workflow file may hold; 0 means
	// DefaultMaxWorkflowFile. A larger file is a "File too large" error,
	// found without reading it whole.
	MaxFileSize int64
	// CollectAfterDecode collects garbage once every file is decoded and
	// before any is compiled, when the files hold at least
	// parallelParseMin bytes in all. Decoding a large file holds, for a
	// moment, its syntax tree, its decoded steps and the pieces of their
	// source map at once; after it only the steps are kept. A collection
	// that happens to mark during that moment sets the next heap goal to
	// twice what was held then, and the compile grows the heap to that
	// goal; collecting once the moment has passed sets the goal from what
	// the compile keeps. For a process that compiles once (the command
	// line); a long-lived one (the language server) leaves it off, since a
	// collection marks its whole heap.
	CollectAfterDecode bool
	// NoDocuments, when set, is why no file beside a workflow file may be
	// read (an openapi action's document, language.md §8.10): for
	// sources that did not come from this machine's files, such as a
	// deploy through the API. It is the message of the error at each
	// openapi action.
	NoDocuments string
	// Documents, when set, keeps the OpenAPI documents read across loads
	// (a long-lived process that loads the same files again); nil: each
	// load reads them.
	Documents *DocumentCache
	// FetchDocument fetches the OpenAPI documents openapi actions name by
	// URL (language.md §8.10), once per URL per load: lang opens no
	// network connection itself. nil: a document named by URL is an error
	// that says to save a copy beside the workflow file.
	FetchDocument DocumentFetcher
}

// LoadPathsWith is LoadPaths with options.
func LoadPathsWith(paths []string, opts LoadOptions) (*Module, hcl.Diagnostics) {
	l := newFileLoader()
	l.opts = opts
	seen := map[string]bool{}
	for _, p := range paths {
		files, diags := expandPath(p)
		l.diags = append(l.diags, diags...)
		for _, f := range files {
			key := filepath.Clean(f)
			if abs, err := filepath.Abs(f); err == nil {
				key = abs
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			limit := opts.MaxFileSize
			if limit <= 0 {
				limit = DefaultMaxWorkflowFile
			}
			src, err := ReadFileMax(f, limit)
			var big *FileTooLargeError
			if errors.As(err, &big) {
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "File too large",
					Detail: fmt.Sprintf("%s is larger than %s, the most flowrun reads of a workflow file. Split the workflows into several files, or raise the limit with --max-file-size.",
						f, SizeText(limit)),
				})
				continue
			}
			if err != nil {
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Cannot read file",
					Detail:   fmt.Sprintf("Reading %s failed: %v. Check that the file exists and is readable.", f, err),
				})
				continue
			}
			l.load(f, src)
			l.read += len(src)
		}
	}
	if opts.CollectAfterDecode && l.read >= parallelParseMin {
		runtime.GC()
	}
	l.finish()
	if len(l.module.Workflows) == 0 && !l.diags.HasErrors() {
		l.diags = append(l.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No workflow",
			Detail:   fmt.Sprintf("No workflow block was found in %s. Define one, like workflow \"NAME\" { version = \"1.0.0\" ... }.", strings.Join(paths, ", ")),
		})
	}
	return l.module, l.diags
}

// LoadFile compiles one file's source; filename is used in diagnostics.
func LoadFile(filename string, src []byte) (*Module, hcl.Diagnostics) {
	return LoadFileWith(filename, src, LoadOptions{})
}

// LoadFileWith is LoadFile with options.
func LoadFileWith(filename string, src []byte, opts LoadOptions) (*Module, hcl.Diagnostics) {
	l := newFileLoader()
	l.opts = opts
	l.load(filename, src)
	l.finish()
	return l.module, l.diags
}

// expandPath turns a path into the files it names.
func expandPath(p string) ([]string, hcl.Diagnostics) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Path not found",
			Detail:   fmt.Sprintf("%s does not exist or cannot be read (%v). Give a workflow file or a directory of .hcl files.", p, err),
		}}
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read directory",
			Detail:   fmt.Sprintf("Listing %s failed: %v. Check that the directory is readable.", p, err),
		}}
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".hcl") && !strings.HasPrefix(e.Name(), ".") && !IsTestFile(e.Name()) {
			files = append(files, filepath.Join(p, e.Name()))
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "No workflow files",
			Detail:   fmt.Sprintf("The directory %s holds no .hcl files. Give a directory with workflow files, or the files themselves.", p),
		}}
	}
	return files, nil
}

// TestFileSuffix ends the name of a test file (spec/testing.md): loading a
// directory of workflows skips such files; flowrun test reads them.
const TestFileSuffix = ".test.hcl"

// IsTestFile reports whether name (a path or a base name) is a test file.
func IsTestFile(name string) bool { return strings.HasSuffix(name, TestFileSuffix) }

// fileLoader accumulates the files and workflows of one Load call. Files
// are parsed and decoded as they are read (load); the workflows are
// compiled at the end (finish), children before the workflows that start
// them, so that a child's compiled graph types its parent's step.
type fileLoader struct {
	opts   LoadOptions
	read   int // the bytes of the files loaded
	module *Module
	diags  hcl.Diagnostics
	first  map[string]hcl.Range // workflow name -> first declaration's label
	// files in the order read, with the diagnostics found in each so far.
	files []*loadedFile
}

// loadedFile is one parsed and decoded file awaiting compilation.
type loadedFile struct {
	name  string
	diags hcl.Diagnostics // decode diagnostics, then compile diagnostics
	decls []*workflowDecl
	// decodeDiags are the decode diagnostics, which decide whether a
	// workflow may get a graph.
	decodeDiags hcl.Diagnostics
	// asFound: the file did not parse; its diagnostics keep HCL's order.
	asFound bool
}

func newFileLoader() *fileLoader {
	return &fileLoader{
		module: &Module{Files: map[string]*hcl.File{}},
		first:  map[string]hcl.Range{},
	}
}

// load parses and compiles one file. A file with syntax errors is not
// decoded further: HCL's recovery would only add confusing follow-on
// errors.
func (l *fileLoader) load(filename string, src []byte) {
	if !utf8.Valid(src) {
		// HCL's positions are unreliable after invalid UTF-8, so stop here
		// with a precise position.
		l.module.Files[filename] = &hcl.File{Body: hcl.EmptyBody(), Bytes: src}
		l.files = append(l.files, &loadedFile{name: filename, diags: hcl.Diagnostics{invalidUTF8(filename, src)}, asFound: true})
		return
	}
	if d := checkShape(filename, src); d != nil {
		// hclsyntax would recurse once or more per level: stop here.
		l.module.Files[filename] = &hcl.File{Body: hcl.EmptyBody(), Bytes: src}
		l.files = append(l.files, &loadedFile{name: filename, diags: hcl.Diagnostics{d}, asFound: true})
		return
	}
	file, pre, diags := parseConfigDecoding(src, filename, true)
	if file != nil {
		l.module.Files[filename] = file
	}
	if diags.HasErrors() || file == nil {
		l.files = append(l.files, &loadedFile{name: filename, diags: diags, asFound: true})
		return
	}
	lf := &loadedFile{name: filename}
	lf.diags = append(lf.diags, diags...)
	// The module keeps the outline of the file's blocks, not its syntax
	// tree (outline.go); decodeFile takes the tree apart as it goes, so
	// that a step's syntax is garbage once the step is decoded (a long
	// file's steps were decoded as it was parsed, and their bodies
	// emptied: pre).
	l.module.Files[filename] = outlined(file)
	decls, diags := decodeFileWith(file, pre)
	lf.diags = append(lf.diags, diags...)
	lf.decls, lf.decodeDiags = decls, diags
	l.files = append(l.files, lf)
}

// finish compiles the decoded workflows, children first, and reports every
// file's diagnostics in source order, files in the order read.
func (l *fileLoader) finish() {
	type entry struct {
		f *loadedFile
		w *workflowDecl
		g *graph.Graph
	}
	var all []*entry
	byName := map[string][]*entry{}
	for _, f := range l.files {
		for _, w := range f.decls {
			e := &entry{f: f, w: w}
			all = append(all, e)
			byName[w.Name] = append(byName[w.Name], e)
		}
	}
	// Compile in depth-first order of the child references: a child
	// before its parents. A workflow that is its own descendant (a
	// recursion) sees itself, and its cycle, as not yet compiled.
	state := map[*entry]int{} // 0 new, 1 compiling, 2 done
	compiled := map[string]*graph.Graph{}
	children := &childResolver{module: compiled, declared: map[string]bool{}, stored: l.opts.Stored,
		docs: newDocCache(l.opts.NoDocuments, l.opts.Documents, l.opts.FetchDocument)}
	for name := range byName {
		children.declared[name] = true
	}
	var visit func(e *entry)
	visit = func(e *entry) {
		if state[e] != 0 {
			return
		}
		state[e] = 1
		for _, child := range childNames(e.w) {
			for _, c := range byName[child] {
				visit(c)
			}
		}
		wdiags := workflowDiags(e.w, e.f.decodeDiags)
		g, cdiags := compileWorkflowWith(e.w, wdiags, children)
		e.f.diags = append(e.f.diags, cdiags...)
		e.g = g
		if g != nil {
			if _, dup := compiled[e.w.Name]; !dup {
				compiled[e.w.Name] = g
			}
		}
		state[e] = 2
	}
	for _, e := range all {
		visit(e)
	}
	for _, e := range all {
		if first, dup := l.first[e.w.Name]; dup {
			e.f.diags = append(e.f.diags, duplicate("workflow", e.w.Name, first, e.w.NameRange))
			continue
		}
		l.first[e.w.Name] = e.w.NameRange
		l.module.Workflows = append(l.module.Workflows, &Workflow{
			Name:    e.w.Name,
			File:    e.f.name,
			Range:   e.w.DeclRange,
			Graph:   e.g,
			Sources: e.w.Sources,
		})
	}
	for _, f := range l.files {
		// Report in source order, whatever stage found the problem.
		if !f.asFound {
			sort.SliceStable(f.diags, func(i, j int) bool { return diagOffset(f.diags[i]) < diagOffset(f.diags[j]) })
		}
		l.diags = append(l.diags, f.diags...)
	}
	l.files = nil
}

// childNames returns the names of the workflows w's steps start.
func childNames(w *workflowDecl) []string {
	var out []string
	for _, s := range w.Steps {
		if s != nil && s.Action != nil && s.Action.Kind == graph.KindWorkflow && s.Action.Workflow != "" {
			out = append(out, s.Action.Workflow)
		}
	}
	return out
}

// workflowDiags picks the diagnostics that fall inside a workflow block.
func workflowDiags(w *workflowDecl, diags hcl.Diagnostics) hcl.Diagnostics {
	rng := w.Sources.Block("workflow")
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Subject != nil && rng.ContainsOffset(d.Subject.Start.Byte) {
			out = append(out, d)
		}
	}
	return out
}

// diagOffset is a diagnostic's byte offset for sorting; -1 without a
// subject.
func diagOffset(d *hcl.Diagnostic) int {
	if d.Subject == nil {
		return -1
	}
	return d.Subject.Start.Byte
}

// invalidUTF8 reports the first byte of src that is not UTF-8.
func invalidUTF8(filename string, src []byte) *hcl.Diagnostic {
	pos := hcl.Pos{Line: 1, Column: 1}
	for pos.Byte < len(src) {
		r, size := utf8.DecodeRune(src[pos.Byte:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		pos.Byte += size
		pos.Column++
		if r == '\n' {
			pos.Line++
			pos.Column = 1
		}
	}
	end := hcl.Pos{Line: pos.Line, Column: pos.Column + 1, Byte: pos.Byte + 1}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid character encoding",
		Detail:   "The file is not valid UTF-8 at this byte. Save it as UTF-8 in your editor.",
		Subject:  &hcl.Range{Filename: filename, Start: pos, End: end},
	}
}
