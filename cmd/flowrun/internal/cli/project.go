package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/backend"
	"os"
	"path/filepath"

	"github.com/flowrun/flowrun/project"
)

// findProject sets the store of a command given neither --db nor
// FLOWRUN_DB: the .flowrun/ of the working directory or its nearest parent
// (or the store its config.hcl names), else the default under the working
// directory (package project).
func (e *env) findProject() error {
	p, err := project.Find(".")
	if err != nil {
		var ce *project.ConfigError
		switch {
		case errors.As(err, &ce):
			return usageErrorf("%v", err).hint("Fix the config file: it may set store = \"postgres://...\" or the path of a SQLite file.")
		case errors.Is(err, project.ErrNotADir):
			return usageErrorf("%v", err).hint("Or point at a store with --db PATH or FLOWRUN_DB.")
		}
		return usageErrorf("%v", err).hint("Fix the file's mode or content, or point at a store with --db PATH or FLOWRUN_DB.")
	}
	e.project = p
	e.dsn = p.Store
	if p.Found() {
		e.dsnFrom = "project"
	}
	return nil
}

// storeOrigin says where the command's store came from, for -v and for
// the refusal of a verb that finds no database.
func (e *env) storeOrigin() string {
	switch e.dsnFrom {
	case "--db":
		return "named by --db"
	case "FLOWRUN_DB":
		return "named by FLOWRUN_DB"
	case "project":
		if e.project.Config != "" && e.dsn != filepath.Join(e.project.Dir, project.DBFile) {
			return "named by " + e.project.Config
		}
		return "the project's, found in " + e.project.Dir
	}
	return "the default: no " + project.Dir + "/ here or in a parent directory"
}

// announceNewStore tells, once apply (or another verb that creates the
// store) is about to create the store because no project was found, or
// because --db or FLOWRUN_DB names a file that does not exist yet, where
// it goes and how to choose.
func (e *env) announceNewStore() {
	if note := e.newStoreNote(); note != "" {
		fmt.Fprintf(e.stderr, "flowrun %s: %s\n", e.verb, note)
	}
}

// newStoreNote is what announceNewStore says, "" when the store exists
// (or is a project's, or on PostgreSQL); worker and serve log it.
func (e *env) newStoreNote() string {
	if e.dsnFrom == "project" || backend.IsPostgres(e.dsn) {
		return ""
	}
	path := backend.SQLitePath(e.dsn)
	if _, err := os.Stat(path); err == nil {
		return ""
	}
	if e.dsnFrom == "" {
		return fmt.Sprintf("no %s/ here or in a parent directory; creating the store %s (flowrun init makes one where you choose)",
			project.Dir, e.dsn)
	}
	// A store named by --db or FLOWRUN_DB that does not exist yet is made,
	// and said so: a mistyped path then shows at once.
	dir := ""
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		dir = " and its directory " + filepath.Dir(path)
	}
	return fmt.Sprintf("creating the store %s%s (%s)", e.dsn, dir, e.storeOrigin())
}

func initCommand() *command {
	return &command{
		name:  "init",
		args:  "[DIR]",
		short: "make a project's .flowrun/ directory and its store",
		long: `Init makes DIR/.flowrun/ (the working directory by default) and the SQLite
store in it. Every flowrun command run in DIR or below without --db or
FLOWRUN_DB then uses it, as git uses the nearest .git/: from a subdirectory
too. .flowrun/config.hcl may name another store for the project instead, a
Postgres URL or the path of a SQLite file (relative to DIR), so a checkout
anywhere points at its shared store:

    store = "postgres://flowrun@db.internal:5432/flowrun"

A config file that holds a password must be readable by its owner alone
(chmod 600). Init on a project that exists says so and changes nothing.`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				if len(args) > 1 {
					return usageErrorf("init takes at most one directory, got %d arguments", len(args)).hint("Run: flowrun init [DIR]")
				}
				dir := "."
				if len(args) == 1 {
					dir = args[0]
				}
				p, created, err := project.Init(dir)
				if err != nil {
					return usageErrorf("%v", err).hint("Pass a directory where a .flowrun/ directory can be made.")
				}
				if !created {
					fmt.Fprintf(e.stdout, "%s is a flowrun project already; its store is %s\n", p.Dir, store.ShownDSN(p.Store))
					return nil
				}
				e.dsn, e.dsnFrom, e.project = p.Store, "project", p
				if _, err := e.openStore(ctx, true); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "made %s with the store %s\n", p.Dir, store.ShownDSN(p.Store))
				return nil
			}
		},
	}
}
