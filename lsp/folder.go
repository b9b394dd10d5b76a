package lsp

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/testfile"
	"github.com/hashicorp/hcl/v2"
)

// maxFolderFiles bounds the other files of a document's folder compiled
// with it; past it the first ones, by name, are taken.
const maxFolderFiles = 1024

// sources are the files compiled with d, sorted by name as a directory's
// files are: the other workflow files of its folder (open documents as
// edited, saved or not, then the saved files; unreadable or too large
// ones left out, their problems are their own) and, when withSelf, d
// itself. A document
// that is not a file:// .hcl file is compiled alone.
func (s *server) sources(d *document, withSelf bool) []lang.Source {
	var out []lang.Source
	if withSelf {
		out = append(out, lang.Source{Name: d.path, Src: d.text.src})
	}
	if !filepath.IsAbs(d.path) || !strings.HasSuffix(d.path, ".hcl") {
		return out
	}
	dir := filepath.Dir(d.path)
	workflowFile := func(base string) bool {
		return strings.HasSuffix(base, ".hcl") && !strings.HasPrefix(base, ".") && !lang.IsTestFile(base)
	}
	// Open documents of the folder, as edited (saved or not).
	open := map[string]bool{}
	var opened []*document
	for _, o := range s.docs {
		if o != d && filepath.IsAbs(o.path) && filepath.Dir(o.path) == dir && workflowFile(filepath.Base(o.path)) {
			opened = append(opened, o)
		}
	}
	sort.Slice(opened, func(i, j int) bool { return opened[i].path < opened[j].path })
	n := 0
	for _, o := range opened {
		if n++; n > maxFolderFiles {
			break
		}
		open[o.path] = true
		if int64(len(o.text.src)) <= s.opts.MaxFileSize {
			out = append(out, lang.Source{Name: o.path, Src: o.text.src})
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		entries = nil
	}
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if name == d.path || open[name] || !e.Type().IsRegular() || !workflowFile(e.Name()) {
			continue
		}
		if n++; n > maxFolderFiles {
			break
		}
		src, err := lang.ReadFileMax(name, s.opts.MaxFileSize)
		if err != nil {
			continue
		}
		out = append(out, lang.Source{Name: name, Src: src})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// own keeps the diagnostics that belong to d: those in its file, and
// those that belong to no file.
func own(d *document, diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, x := range diags {
		if x.Subject == nil || x.Subject.Filename == d.path {
			out = append(out, x)
		}
	}
	return out
}

// checkTestFile parses the test file d and checks it against its folder's
// workflows (testfile.Parse and testfile.Check, as `flowrun test` does).
func (s *server) checkTestFile(d *document, opts lang.LoadOptions) hcl.Diagnostics {
	tf, diags := testfile.Parse(d.path, d.text.src)
	if tf == nil || tf.Syntax {
		return own(d, diags)
	}
	mod, _ := lang.LoadSources(s.sources(d, false), lang.LoadOptions{MaxFileSize: opts.MaxFileSize, Documents: opts.Documents, FetchDocument: opts.FetchDocument})
	files := map[string]*hcl.File{d.path: tf.HCL}
	for k, v := range mod.Files {
		files[k] = v
	}
	load := func(p string) (*lang.Module, hcl.Diagnostics) {
		return lang.LoadPathsWith([]string{p}, lang.LoadOptions{MaxFileSize: opts.MaxFileSize, Documents: opts.Documents, FetchDocument: opts.FetchDocument})
	}
	diags = append(diags, testfile.Check(tf, mod, filepath.Dir(d.path), load, files)...)
	return own(d, diags)
}
