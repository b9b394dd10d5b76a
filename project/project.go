// Package project finds the store of a flowrun project the way git finds
// its repository: without --db or FLOWRUN_DB, a command looks for a
// .flowrun/ directory in the working directory and then in each parent
// directory, and uses the first one found. That directory holds the
// embedded SQLite store (flowrun.db) and, optionally, config.hcl, which may
// name another store instead (a Postgres URL, or the path of a SQLite file
// shared by several checkouts):
//
//	store = "postgres://flowrun@db.internal:5432/flowrun"
//
// It may name the project's server too (server = "https://..."): verbs
// that can go through a flowrun serve use it (cli.md §9).
//
// project only reads directories and the config file (and Init creates the
// directory); it must not open a store, print, pick exit codes or read the
// environment: the binaries do that and word its errors for their users.
package project

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Dir is the name of a project's directory.
const Dir = ".flowrun"

// DBFile is the embedded store's file in Dir.
const DBFile = "flowrun.db"

// ConfigFile is the optional config file in Dir.
const ConfigFile = "config.hcl"

// maxConfigSize bounds what Find reads of a config file.
const maxConfigSize = 64 << 10

// Project is the project a command works in.
type Project struct {
	// Dir is the absolute path of the .flowrun directory found; "" when
	// none was found (Store is then the default in the working directory).
	Dir string
	// Store is the database value: config.hcl's store, else Dir's
	// flowrun.db, else .flowrun/flowrun.db under the working directory.
	Store string
	// Config is the config file's path when one was read.
	Config string
	// Server is config.hcl's server: the flowrun serve the verbs that can
	// go through one use (cli.md §9); "" when it names none.
	Server string
}

// Found reports whether a .flowrun directory was found.
func (p Project) Found() bool { return p.Dir != "" }

// ErrNotADir is a .flowrun that is not a directory.
var ErrNotADir = errors.New("is not a directory")

// Find looks for Dir in cwd and its parents. With none, the project is the
// default store under cwd (not created: Found is false). A .flowrun that
// is a file, a config file that does not parse or has unknown keys, and a
// config naming a password that others may read are errors; nothing is
// created.
func Find(cwd string) (Project, error) {
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return Project{}, err
	}
	for d := cwd; ; {
		cand := filepath.Join(d, Dir)
		fi, err := os.Stat(cand)
		switch {
		case err == nil && fi.IsDir():
			return load(cand)
		case err == nil:
			return Project{}, fmt.Errorf("%s %w: a project's %s holds its store; move the file away or remove it", cand, ErrNotADir, Dir)
		case !errors.Is(err, fs.ErrNotExist):
			return Project{}, fmt.Errorf("looking for %s: %w", Dir, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return Project{Store: filepath.Join(cwd, Dir, DBFile)}, nil
}

// Init makes dir/.flowrun (0700), and dir when it is missing, and returns
// its project; created is
// false when it already existed. It refuses a .flowrun that is a file.
func Init(dir string) (p Project, created bool, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return Project{}, false, err
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return Project{}, false, fmt.Errorf("%s %w: name the directory to make the project in", dir, ErrNotADir)
	}
	cand := filepath.Join(dir, Dir)
	fi, err := os.Stat(cand)
	switch {
	case err == nil && fi.IsDir():
		p, err = load(cand)
		return p, false, err
	case err == nil:
		return Project{}, false, fmt.Errorf("%s %w: move the file away or remove it", cand, ErrNotADir)
	case !errors.Is(err, fs.ErrNotExist):
		return Project{}, false, err
	}
	// As git init DIR does, a missing DIR is made.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Project{}, false, fmt.Errorf("cannot make the directory %s: %w", dir, unwrapPath(err))
	}
	if err := os.Mkdir(cand, 0o700); err != nil {
		return Project{}, false, fmt.Errorf("cannot make %s: %w", cand, unwrapPath(err))
	}
	p, err = load(cand)
	return p, true, err
}

// load reads the project of the .flowrun directory dir.
func load(dir string) (Project, error) {
	p := Project{Dir: dir, Store: filepath.Join(dir, DBFile)}
	cfg := filepath.Join(dir, ConfigFile)
	f, err := os.Open(cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("reading %s: %w", cfg, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return p, fmt.Errorf("reading %s: %w", cfg, err)
	}
	if fi.Size() > maxConfigSize {
		return p, fmt.Errorf("%s is %d bytes; a config file holds at most %d", cfg, fi.Size(), maxConfigSize)
	}
	src := make([]byte, fi.Size())
	if _, err := f.ReadAt(src, 0); err != nil && fi.Size() > 0 {
		return p, fmt.Errorf("reading %s: %w", cfg, err)
	}
	store, server, err := parseConfig(cfg, src)
	if err != nil {
		return p, err
	}
	p.Config, p.Server = cfg, server
	if store != "" {
		if hasPassword(store) && fi.Mode().Perm()&0o077 != 0 {
			return p, fmt.Errorf("%s names a store with a password and others may read it (mode %04o); run: chmod 600 %s", cfg, fi.Mode().Perm(), cfg)
		}
		if !strings.Contains(store, "://") && !filepath.IsAbs(store) {
			// A relative SQLite path is the config's, as a path in a
			// file of a repository is.
			store = filepath.Join(filepath.Dir(dir), store)
		}
		p.Store = store
	}
	return p, nil
}

// ConfigError is a config file that does not parse or says something
// flowrun does not know; its message names the file, line and column.
type ConfigError struct{ Diags hcl.Diagnostics }

func (e *ConfigError) Error() string {
	var b strings.Builder
	for i, d := range e.Diags {
		if i > 0 {
			b.WriteString("; ")
		}
		if d.Subject != nil {
			fmt.Fprintf(&b, "%s:%d:%d: ", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		b.WriteString(d.Summary)
		if d.Detail != "" {
			b.WriteString(": " + d.Detail)
		}
	}
	return b.String()
}

// configSchema is what config.hcl may say.
var configSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "store"}, {Name: "server"}}}

// parseConfig reads config.hcl: attributes only, each a literal string.
func parseConfig(name string, src []byte) (store, server string, err error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return "", "", &ConfigError{diags}
	}
	content, diags := f.Body.Content(configSchema)
	if diags.HasErrors() {
		for _, d := range diags {
			if strings.HasPrefix(d.Summary, "Unsupported") {
				d.Detail += " A project's config.hcl may set: store, server."
			}
		}
		return "", "", &ConfigError{diags}
	}
	literal := func(name, detail string) (string, error) {
		a := content.Attributes[name]
		if a == nil {
			return "", nil
		}
		v, d := a.Expr.Value(nil)
		if d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String || v.AsString() == "" {
			r := a.Expr.Range()
			return "", &ConfigError{hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid " + name, Detail: detail, Subject: &r}}}
		}
		return v.AsString(), nil
	}
	if store, err = literal("store", `store is a literal string: a postgres:// URL or the path of a SQLite file, like store = "postgres://flowrun@db:5432/flowrun".`); err != nil {
		return "", "", err
	}
	if server, err = literal("server", `server is a literal string: the URL of a flowrun serve, like server = "https://flowrun.internal:8443" (its token goes in FLOWRUN_TOKEN or flowrun login, never in this file).`); err != nil {
		return "", "", err
	}
	if u, perr := url.Parse(server); server != "" && perr == nil && u.User != nil {
		r := content.Attributes["server"].Expr.Range()
		return "", "", &ConfigError{hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid server",
			Detail: "the server URL holds a user name or password; a token goes in FLOWRUN_TOKEN or flowrun login, never in this file.", Subject: &r}}}
	}
	return store, server, nil
}

// hasPassword reports whether a store value is a URL with a password.
func hasPassword(store string) bool {
	u, err := url.Parse(store)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// unwrapPath drops the operation and path of a *fs.PathError, which the
// message around it names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
