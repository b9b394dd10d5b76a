package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
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
	Graph   *Graph
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
	l := newFileLoader()
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
			src, err := os.ReadFile(f)
			if err != nil {
				l.diags = append(l.diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Cannot read file",
					Detail:   fmt.Sprintf("Reading %s failed: %v. Check that the file exists and is readable.", f, err),
				})
				continue
			}
			l.load(f, src)
		}
	}
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
	l := newFileLoader()
	l.load(filename, src)
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
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".hcl") && !strings.HasPrefix(e.Name(), ".") {
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

// fileLoader accumulates the files and workflows of one Load call.
type fileLoader struct {
	module *Module
	diags  hcl.Diagnostics
	first  map[string]hcl.Range // workflow name -> first declaration's label
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
		l.diags = append(l.diags, invalidUTF8(filename, src))
		return
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if file != nil {
		l.module.Files[filename] = file
	}
	if diags.HasErrors() || file == nil {
		l.diags = append(l.diags, diags...)
		return
	}
	var all hcl.Diagnostics
	defer func() {
		// Report in source order, whatever stage found the problem.
		sort.SliceStable(all, func(i, j int) bool { return diagOffset(all[i]) < diagOffset(all[j]) })
		l.diags = append(l.diags, all...)
	}()
	all = append(all, diags...)
	decls, diags := decodeFile(file)
	all = append(all, diags...)
	for _, w := range decls {
		wdiags := workflowDiags(w, diags)
		g, cdiags := compileWorkflow(w, wdiags)
		all = append(all, cdiags...)
		if first, dup := l.first[w.Name]; dup {
			all = append(all, duplicate("workflow", w.Name, first, w.NameRange))
			continue
		}
		l.first[w.Name] = w.NameRange
		l.module.Workflows = append(l.module.Workflows, &Workflow{
			Name:    w.Name,
			File:    filename,
			Range:   w.DeclRange,
			Graph:   g,
			Sources: w.Sources,
		})
	}
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
