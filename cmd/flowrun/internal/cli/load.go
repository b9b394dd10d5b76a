package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/flowrun/flowrun/lang"
)

// load compiles the workflow files and directories at paths. Diagnostics
// (warnings too) go to stderr; any error ends the verb with exit 2, after
// every diagnostic of every file was printed.
func (e *env) load(paths []string) (*lang.Module, error) {
	if len(paths) == 0 {
		return nil, usageErrorf("no workflow files given").
			hint(fmt.Sprintf("Name one or more .hcl files or directories: flowrun %s PATH...", e.verb))
	}
	mod, diags := lang.LoadPaths(paths)
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if mod != nil {
			files = mod.Files
		}
		if err := lang.WriteDiagnostics(e.stderr, files, diags, e.useColor(e.stderr), width(e.stderr)); err != nil {
			return nil, fmt.Errorf("writing diagnostics: %w", err)
		}
	}
	if diags.HasErrors() {
		n := 0
		var files []string
		seen := map[string]bool{}
		for _, d := range diags {
			if d.Severity != hcl.DiagError {
				continue
			}
			n++
			if d.Subject != nil && !seen[d.Subject.Filename] {
				seen[d.Subject.Filename] = true
				files = append(files, d.Subject.Filename)
			}
		}
		where := strings.Join(files, ", ")
		if where == "" {
			where = strings.Join(paths, ", ")
		}
		return nil, usageErrorf("%s in %s", plural(n, "error", "errors"), where).
			hint("Fix the errors above and run the command again.")
	}
	if mod == nil || len(mod.Workflows) == 0 {
		return nil, usageErrorf("no workflow blocks found in %s", strings.Join(paths, ", ")).
			hint(`A workflow file holds one or more blocks like: workflow "name" { version = "1.0.0" ... }.`)
	}
	return mod, nil
}

// pickWorkflow returns the workflow named name, or the only one when name is
// empty. Several workflows without a name is bad input: the message lists
// them.
func pickWorkflow(mod *lang.Module, name string) (*lang.Workflow, error) {
	var names []string
	for _, w := range mod.Workflows {
		if name != "" && w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	sort.Strings(names)
	if name != "" {
		return nil, usageErrorf("no workflow named %q in the given files; they define %s", name, quoteList(names)).
			hint("Pass --workflow with one of those names.")
	}
	if len(mod.Workflows) == 1 {
		return mod.Workflows[0], nil
	}
	return nil, usageErrorf("the given files define %d workflows (%s) and it is not clear which one to use", len(names), quoteList(names)).
		hint(fmt.Sprintf("Pass --workflow NAME, for example --workflow %s.", names[0]))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// shortHash is the prefix of a graph hash people see.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
