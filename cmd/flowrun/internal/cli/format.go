package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/flowrun/flowrun/lang"
	"github.com/hashicorp/hcl/v2"
)

func fmtCommand() *command {
	return &command{
		name:  "fmt",
		args:  "[--check] PATH... | -",
		short: "rewrite workflow files in canonical HCL formatting",
		long: `Fmt rewrites each workflow file (and every *.hcl file of each directory) in
place in the canonical formatting. With --check it changes nothing: it lists
the files whose formatting differs and exits 1 when there is any, like
gofmt -l. A file that does not parse is reported with its diagnostics and
exit 2. DIR/... formats the *.hcl files of DIR and of every directory below
it. "flowrun fmt -" reads a file from standard input and writes it formatted
to standard output (with --check, it writes nothing and exits 1 when the
input is not formatted), for editors.`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			e.maxFileSizeFlag(fs)
			check := fs.Bool("check", false, "list the files that need formatting and exit 1 if any; change nothing")
			return func(ctx context.Context, args []string) error {
				return e.runFmt(args, *check)
			}
		},
	}
}

func (e *env) runFmt(paths []string, check bool) error {
	if len(paths) == 0 {
		return usageErrorf("no workflow files given").
			hint("Name one or more .hcl files or directories: flowrun fmt PATH...")
	}
	for _, p := range paths {
		if p == "-" {
			if len(paths) > 1 {
				return usageErrorf("fmt - reads standard input and takes no other path, got %s", plural(len(paths), "path", "paths")).
					hint("Run flowrun fmt - < FILE.hcl on its own, or name the files without -.")
			}
			return e.fmtStdin(check)
		}
	}
	files, err := expandHCL(paths)
	if err != nil {
		return err
	}
	bad, changed := 0, 0
	for _, name := range files {
		src, err := lang.ReadFileMax(name, e.workflowFileLimit())
		var big *lang.FileTooLargeError
		if errors.As(err, &big) {
			return usageErrorf("%s is larger than %s, the most flowrun reads of a workflow file", name, lang.SizeText(big.Limit)).
				hint("Split the workflows into several files, or raise the limit with --max-file-size.")
		}
		if err != nil {
			return usageErrorf("cannot read %s: %v", name, err).hint("Check that the file exists and is readable.")
		}
		out, diags := lang.Format(name, src)
		if diags.HasErrors() {
			bad++
			hf := map[string]*hcl.File{name: {Bytes: src}}
			if werr := lang.WriteDiagnostics(e.stderr, hf, diags, e.useColor(e.stderr), width(e.stderr)); werr != nil {
				return fmt.Errorf("writing diagnostics: %w", werr)
			}
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		changed++
		if check {
			fmt.Fprintln(e.stdout, name)
			continue
		}
		// A symbolic link stays a link: its target is rewritten, in the
		// target's directory.
		target, err := filepath.EvalSymlinks(name)
		if err != nil {
			return &exitError{code: ExitFailed, msg: fmt.Sprintf("cannot rewrite %s", name), err: err,
				hintText: "Check that the file and, for a symbolic link, its target exist."}
		}
		if err := writeFileKeepMode(target, out); err != nil {
			return &exitError{code: ExitFailed, msg: fmt.Sprintf("cannot rewrite %s", name), err: err,
				hintText: "Check that the file is writable."}
		}
	}
	switch {
	case bad > 0:
		return usageErrorf("%s could not be formatted because of syntax errors", plural(bad, "file", "files")).
			hint("Fix the errors above and run flowrun fmt again.")
	case check && changed > 0:
		return exitCode(ExitFailed)
	}
	return nil
}

// expandHCL returns the files named by paths, a directory standing for the
// *.hcl files directly in it, sorted, and DIR/... for those of DIR and of
// every directory below it.
func expandHCL(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		if root, ok := recursiveRoot(p); ok {
			dirs, err := hclDirs(p, root, false)
			if err != nil {
				return nil, err
			}
			for _, d := range dirs {
				matches, err := filepath.Glob(filepath.Join(d, "*.hcl"))
				if err != nil {
					return nil, fmt.Errorf("listing %s: %w", d, err)
				}
				sort.Strings(matches)
				files = append(files, matches...)
			}
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, usageErrorf("cannot read %s: %v", p, unwrapPathError(err)).
				hint("Check the path: it must be a workflow file or a directory of .hcl files.")
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.hcl"))
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", p, err)
		}
		sort.Strings(matches)
		files = append(files, matches...)
	}
	return files, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// writeFileKeepMode replaces name's content, keeping its permissions, so a
// crash never leaves a half-written workflow (writeFileAtomic).
func writeFileKeepMode(name string, data []byte) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	return writeFileAtomic(name, data, st.Mode().Perm())
}

// writeFileAtomic writes data to name with permissions perm by writing a
// temporary file next to it and renaming it over name: a reader sees the
// old content or the whole new one, never an empty or partial file.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// stdinName names standard input in diagnostics.
const stdinName = "<stdin>"

// fmtStdin formats standard input to standard output. Input that does not
// parse is reported with its diagnostics (as <stdin>:LINE:COL) and exit 2,
// and nothing is written to standard output.
func (e *env) fmtStdin(check bool) error {
	limit := e.workflowFileLimit()
	src, err := io.ReadAll(io.LimitReader(e.stdin, limit+1))
	if err != nil {
		return usageErrorf("cannot read standard input: %v", err).hint("Pipe a workflow file into flowrun fmt -.")
	}
	if int64(len(src)) > limit {
		return usageErrorf("standard input is larger than %s, the most flowrun reads of a workflow file", lang.SizeText(limit)).
			hint("Split the workflows into several files, or raise the limit with --max-file-size.")
	}
	out, diags := lang.Format(stdinName, src)
	if diags.HasErrors() {
		hf := map[string]*hcl.File{stdinName: {Bytes: src}}
		if werr := lang.WriteDiagnostics(e.stderr, hf, diags, e.useColor(e.stderr), width(e.stderr)); werr != nil {
			return fmt.Errorf("writing diagnostics: %w", werr)
		}
		return usageErrorf("standard input could not be formatted because of syntax errors").
			hint("Fix the errors above; nothing was written to standard output.")
	}
	if check {
		if !bytes.Equal(src, out) {
			return exitCode(ExitFailed)
		}
		return nil
	}
	_, err = e.stdout.Write(out)
	return err
}
