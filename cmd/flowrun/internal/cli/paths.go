package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/lang"
)

// A path argument DIR/... stands for DIR and every directory below it, as
// in Go's tools (spec/cli.md §4); a plain directory stands for the *.hcl
// files directly in it (spec/language.md §1).

// recursiveRoot returns DIR for an argument DIR/... (and "." for ...).
func recursiveRoot(arg string) (string, bool) {
	switch {
	case arg == "...":
		return ".", true
	case strings.HasSuffix(arg, "/..."):
		dir := strings.TrimSuffix(arg, "/...")
		if dir == "" {
			dir = "/"
		}
		return dir, true
	}
	return "", false
}

// notRecursive refuses an argument DIR/... of a verb that does not recurse
// (all but validate and fmt, spec/cli.md §4), where a path of that name
// does not exist: the user meant Go's ./..., which only those two read.
func notRecursive(verb string, paths []string) error {
	for _, p := range paths {
		root, ok := recursiveRoot(p)
		if !ok {
			continue
		}
		if _, err := os.Lstat(p); err == nil {
			continue // a file or directory really named so
		}
		return usageErrorf("%s: %s does not recurse into sub-directories; DIR/... is for validate and fmt", p, verb).
			hint(fmt.Sprintf("Name the directory for the *.hcl files directly in it (flowrun %s %s), or the files.", verb, root))
	}
	return nil
}

// hclDirs returns root and the directories below it that hold a *.hcl
// file, sorted; with workflowsOnly, a file that is a test file
// (*.test.hcl) does not count. Directories whose names start with "." or
// "_", and those named testdata, are skipped with what is below them, as
// Go's tools skip them; symbolic links to directories are not followed.
func hclDirs(arg, root string, workflowsOnly bool) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, usageErrorf("cannot read %s: %v", arg, unwrapPathError(err)).
			hint("DIR/... names a directory and every directory below it; check DIR.")
	}
	if !st.IsDir() {
		return nil, usageErrorf("%s: %s is not a directory", arg, root).
			hint("DIR/... names a directory and every directory below it; name a file on its own.")
	}
	var dirs []string
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !d.Type().IsRegular() || !strings.HasSuffix(name, ".hcl") || strings.HasPrefix(name, ".") {
			return nil
		}
		if workflowsOnly && lang.IsTestFile(name) {
			return nil
		}
		if dir := filepath.Dir(path); !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
		return nil
	})
	if err != nil {
		return nil, usageErrorf("cannot list %s: %v", arg, unwrapPathError(err)).
			hint("Check that the directories are readable.")
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		return nil, usageErrorf("%s: no .hcl files in %s or below it", arg, root).
			hint("Name a directory that holds workflow files.")
	}
	return dirs, nil
}
