// Command flowtui is flowrun's full-screen monitor: the runs of a flowrun
// database, live, with their steps, events, dead letters and breakers, and
// the actions cancel, retry, signal and version decisions.
//
// main is thin: it reads the flags, opens the store (never creating one)
// and runs the tui/root program over an engine on it (interp.Engine: what
// flowtui reads, and acts through) in the alternate screen.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/project"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/backend"
	"github.com/flowrun/flowrun/tui/display"
	"github.com/flowrun/flowrun/tui/feed"
	"github.com/flowrun/flowrun/tui/root"
)

// Exit codes, as flowrun's.
const (
	exitOK    = 0
	exitUsage = 2
	exitStore = 5
)

// defaultDSN is the database used when neither --db nor FLOWRUN_DB is set.
const defaultDSN = backend.DefaultDSN

func main() { os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("flowtui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", getenv("FLOWRUN_DB"), "the flowrun database (env FLOWRUN_DB; default: the project's, found as flowrun finds it: "+defaultDSN+" here or in a parent directory)")
	server := fs.String("server", "", "show and steer the runs of this flowrun serve (https://HOST:PORT) instead of a database (default $FLOWRUN_SERVER, or the project's config.hcl server; the token is $FLOWRUN_TOKEN or the one flowrun login saved)")
	mouse := fs.Bool("mouse", false, "use the mouse: wheel scrolls, a click selects a run")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: flowtui [--db PATH | --server URL] [--mouse]\n\nflowtui shows the runs of a flowrun database, or of a flowrun serve, live, and acts on them.\n\nFlags:\n")
		// As flowrun prints them: --name, two dashes (one is accepted too).
		fs.VisitAll(func(f *flag.Flag) {
			arg := ""
			if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool {
				arg = " " + strings.ToUpper(strings.TrimSuffix(f.Name, "s"))
				switch f.Name {
				case "db":
					arg = " PATH"
				case "server":
					arg = " URL"
				}
			}
			fmt.Fprintf(stderr, "  --%s%s\n    \t%s\n", f.Name, arg, f.Usage)
		})
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "flowtui: unexpected argument %q; flowtui takes only flags. Run flowtui -h for the flags.\n", fs.Arg(0))
		return exitUsage
	}
	// --db "" or --server "" (a script's "$VAR" unset) is a mistake, as
	// for flowrun's verbs, not the project's store or server.
	empty := ""
	fs.Visit(func(f *flag.Flag) {
		if (f.Name == "db" || f.Name == "server") && f.Value.String() == "" && empty == "" {
			empty = f.Name
		}
	})
	switch empty {
	case "db":
		fmt.Fprintf(stderr, "flowtui: --db is empty. Name the database (--db PATH, or a postgres:// URL), or leave --db out to use the project's store (or FLOWRUN_DB).\n")
		return exitUsage
	case "server":
		fmt.Fprintf(stderr, "flowtui: --server is empty. Name the server (--server https://HOST:PORT), or leave --server out to use FLOWRUN_SERVER, the project's server or its store.\n")
		return exitUsage
	}
	by := "tui"
	if u := getenv("USER"); u != "" {
		by += " (user " + u + ")"
	}
	target, from, err := chooseServer(*server, *db != "", getenv)
	if err != nil {
		fmt.Fprintf(stderr, "flowtui: %v\n", err)
		return exitUsage
	}
	if target != "" {
		return runRemote(target, from, by, *mouse, getenv, stdin, stdout, stderr)
	}
	dsn := *db
	if dsn == "" {
		// The project's store, found as flowrun finds it: the .flowrun/
		// of this directory or its nearest parent (package project).
		p, err := project.Find(".")
		if err != nil {
			fmt.Fprintf(stderr, "flowtui: %v. Fix it, or pass --db (or set FLOWRUN_DB) with the path of a flowrun database.\n", err)
			return exitUsage
		}
		dsn = p.Store
	}
	if msg := badDSN(dsn, dbFrom(fs)); msg != "" {
		fmt.Fprintf(stderr, "flowtui: %s\n", msg)
		return exitUsage
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// NoCreateTables and no CreateFile: the monitor never creates a
	// database or flowrun's tables.
	opened, err := backend.Open(ctx, dsn, backend.Options{NoCreateTables: true})
	if err != nil {
		path := backend.SQLitePath(dsn)
		switch {
		case errors.Is(err, backend.ErrBadDSN):
			fmt.Fprintf(stderr, "flowtui: %v. Write the DSN as postgres://USER:PASSWORD@HOST:PORT/DATABASE.\n", err)
			return exitUsage
		case backend.IsPostgres(dsn):
			fmt.Fprintf(stderr, "flowtui: cannot open the Postgres database: %v. Check the DSN, that the server is up, and that flowrun has used this database before.\n", err)
		case errors.Is(err, backend.ErrNoDatabase):
			fmt.Fprintf(stderr, "flowtui: there is no flowrun database at %s. Run `flowrun apply FILE.hcl` or `flowrun init` in this directory (or a parent) first, or pass --db (or set FLOWRUN_DB) with the path of an existing database.\n", path)
		case errors.Is(err, backend.ErrNotAFile):
			fmt.Fprintf(stderr, "flowtui: %s is a directory, not a flowrun database; pass --db with the path of the database file (usually .flowrun/flowrun.db).\n", path)
		default:
			fmt.Fprintf(stderr, "flowtui: cannot open the database %s: %v.\n%s\n", path, err, openHint(err))
		}
		return exitStore
	}
	st, title := opened.Store, opened.Title
	defer st.Close()

	eng := interp.New(st, interp.Options{})
	return show(ctx, cancel, feed.Local(eng, by), title, *mouse, getenv, stdin, stdout, stderr)
}

// show runs the interface over src until the user quits. Without a
// terminal on both stdin and stdout it says so and returns exitUsage
// before writing anything to stdout: no alternate screen to leave, no
// hidden cursor, no escape codes in a pipe.
func show(ctx context.Context, cancel context.CancelFunc, src *feed.Source, title string, mouse bool, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if msg := noTerminal(stdin, stdout); msg != "" {
		cancel()
		fmt.Fprintf(stderr, "flowtui needs a terminal: %s. Run it in a terminal window; from a script or a pipe, use flowrun runs, flowrun show RUN or flowrun logs -f RUN instead.\n", msg)
		return exitUsage
	}
	disp := display.New(stdout, getenv("NO_COLOR") != "", clock.Real{})
	m := root.New(ctx, src, disp, root.Options{Title: title})
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(stdin), tea.WithOutput(stdout)}
	if mouse {
		opts = append(opts, tea.WithMouseCellMotion())
	}
	p := tea.NewProgram(m, opts...)
	_, err := p.Run()
	cancel() // stops the poll timer and any call still running
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		fmt.Fprintf(stderr, "flowtui: the terminal interface stopped: %v.\n", err)
		return 1
	}
	return exitOK
}

// noTerminal says which of stdin and stdout is not a terminal, or "" when
// both are.
func noTerminal(stdin io.Reader, stdout io.Writer) string {
	isTerm := func(v any) bool {
		f, ok := v.(*os.File)
		return ok && term.IsTerminal(f.Fd())
	}
	in, out := isTerm(stdin), isTerm(stdout)
	switch {
	case !in && !out:
		return "its standard input and output are not terminals"
	case !in:
		return "its standard input is not a terminal"
	case !out:
		return "its standard output is not a terminal"
	}
	return ""
}

// dbFrom says where the database value came from: "--db" when the flag
// was given, else "FLOWRUN_DB" (its default).
func dbFrom(fs *flag.FlagSet) string {
	from := "FLOWRUN_DB"
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "db" {
			from = "--db"
		}
	})
	return from
}

// badDSN says what is wrong with a database value that looks like a URL
// flowrun cannot use (store.DSNProblem, as flowrun's --db check does), or
// "" when the value is a supported URL or a file path.
func badDSN(dsn, from string) string {
	problem := store.DSNProblem(dsn)
	if problem == "" {
		return ""
	}
	shown := store.ShownDSN(dsn) // never the password
	what := fmt.Sprintf("--db %q", shown)
	fix := "Pass --db with"
	if from == "FLOWRUN_DB" {
		what, fix = fmt.Sprintf("FLOWRUN_DB=%q", shown), "Set FLOWRUN_DB to"
	}
	return fmt.Sprintf("%s %s. %s a postgres://USER:PASSWORD@HOST:PORT/DATABASE URL (or postgresql://), or the path of a SQLite file: a relative path like ./flowrun.db or an absolute path.", what, problem, fix)
}

func openHint(err error) string {
	switch {
	case errors.Is(err, store.ErrSchemaTooNew):
		return "This database was written by a newer flowrun; use a flowtui of that version."
	case errors.Is(err, store.ErrBusy):
		return "Another flowrun process holds the database; try again in a moment."
	}
	return "Pass --db (or set FLOWRUN_DB) with the path of a flowrun database."
}
