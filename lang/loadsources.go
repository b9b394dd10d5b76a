package lang

import "github.com/hashicorp/hcl/v2"

// Source is a workflow file given by its contents rather than read from
// disk: an editor's unsaved buffer.
type Source struct {
	// Name is the file name used in diagnostics and Workflow.File.
	Name string
	Src  []byte
}

// LoadSources compiles several files given by their contents, together,
// as LoadPathsWith compiles the files of a directory: a child workflow is
// found in any of them, and a workflow name declared in two is an error
// at the second. Each source is held to opts.MaxFileSize.
func LoadSources(sources []Source, opts LoadOptions) (*Module, hcl.Diagnostics) {
	l := newFileLoader()
	l.opts = opts
	limit := opts.MaxFileSize
	if limit <= 0 {
		limit = DefaultMaxWorkflowFile
	}
	for _, s := range sources {
		if int64(len(s.Src)) > limit {
			l.diags = append(l.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "File too large",
				Detail: s.Name + " is larger than " + SizeText(limit) +
					", the most flowrun reads of a workflow file. Split the workflows into several files, or raise the limit with --max-file-size.",
			})
			continue
		}
		l.load(s.Name, s.Src)
	}
	l.finish()
	return l.module, l.diags
}
