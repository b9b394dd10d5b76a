// Package cli is the flowrun command line: verb dispatch, flags, wiring of
// lang, interp and store, output formats and exit codes.
//
// It parses flags and prints. It must not hold engine logic: scheduling,
// retries, run state changes, the version promise of an apply
// (interp.Engine.CheckVersion), version bindings and decisions, and the
// conversion of --input values by the declared types (interp.ConvertInputs)
// are interp's; the CLI words their outcomes for its flags and picks the
// exit code. It must not parse HCL beyond calling lang, must not decode a
// stored graph (every stored graph comes through the command's one engine
// and its cache: Engine.Graph, VersionGraph, StoredGraphs), and must not
// touch the database except through interp and, through the store
// interface, to read what it prints (runs, events, steps, versions,
// schedules, tokens, workers, the metrics' gauges, completion candidates) and to
// make the two writes that change no run: pruning finished runs
// (RunPrune) and creating and revoking API tokens (TokenCreate,
// TokenRevoke; api.HashToken hashes them).
// Every user mistake is found before the store is opened, so bad input
// never writes to the database.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/flowrun/flowrun/lang/naming"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/docfetch"
	"github.com/flowrun/flowrun/internal/deepstack"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/project"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

// Exit codes, as fixed by the CLI design (spec/cli.md).
const (
	// ExitOK: the run completed, was detached, or the verb succeeded.
	ExitOK = 0
	// ExitFailed: the run failed or was canceled; fmt -check found files
	// that need formatting.
	ExitFailed = 1
	// ExitInvalid: an invalid workflow, bad flags or bad input (including
	// an unknown or ambiguous run id, and a request the run's state does
	// not allow, such as canceling a finished run).
	ExitInvalid = 2
	// ExitParked: the run is parked (timer, signal, queue) or was
	// interrupted with Ctrl-C, and the command returned.
	ExitParked = 3
	// ExitDecision: a version decision is needed and there is no terminal
	// to ask on.
	ExitDecision = 4
	// ExitStore: the store failed (locked, corrupt, newer schema, cannot
	// be opened).
	ExitStore = 5
	// ExitConflict: a version decision was refused because the run was
	// decided already, by someone else or at the same moment
	// (spec/versioning.md §5); nothing was written.
	ExitConflict = 6
)

// command is one verb.
type command struct {
	name  string
	args  string // the synopsis after the verb
	short string // one line for `flowrun help`
	long  string // the paragraph for `flowrun help VERB`
	// store says the verb takes --db.
	store bool
	// remote says the verb takes --server: it reads and steers runs
	// through the one door (package api; remote.go), which may be a
	// flowrun serve.
	remote bool
	// reads says the verb only reads (or makes one short write): Ctrl-C
	// and SIGTERM cancel its context, so its statement is canceled on the
	// database server too, and it exits 128+the signal's number. Verbs
	// that drive runs, serve or work handle the signals themselves.
	reads bool
	// setup declares the verb's flags on fs and returns the function that
	// runs it with the positional arguments.
	setup func(fs *flag.FlagSet, e *env) func(ctx context.Context, args []string) error
}

// commands returns every verb, in the order `flowrun help` lists them.
func commands() []*command {
	return []*command{
		applyCommand(),
		validateCommand(),
		fmtCommand(),
		graphCommand(),
		diffCommand(),
		planCommand(),
		runsCommand(),
		showCommand(),
		logsCommand(),
		resumeCommand(),
		retryCommand(),
		cancelCommand(),
		signalCommand(),
		dlqCommand(),
		breakersCommand(),
		workersCommand(),
		workflowsCommand(),
		waitCommand(),
		initCommand(),
		schedulesCommand(),
		versionsCommand(),
		workerCommand(),
		serveCommand(),
		tokensCommand(),
		loginCommand(),
		logoutCommand(),
		pruneCommand(),
		benchCommand(),
		lspCommand(),
		versionCommand(),
		testCommand(),
		completionCommand(),
	}
}

// env is what a verb runs with: the streams, the environment, and the
// store, opened on first use.
type env struct {
	// execUser is the user exec programs run as (--exec-user; nil: this
	// process's).
	execUser *interp.ExecUser
	verb     string
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	getenv   func(string) string
	clock    clock.Clock
	// display is how apply, resume and retry show progress (drive.go).
	display display

	// maxFileSize is --max-file-size (0: the defaults, filesize.go).
	maxFileSize int64
	// diags, when not nil, collects diagnostics instead of printing them
	// (validate --json, diagjson.go).
	diags *[]diagJSON

	dsn string // from --db, FLOWRUN_DB, the project's .flowrun or the default
	// queryTimeout is --query-timeout or FLOWRUN_QUERY_TIMEOUT (0: the
	// DSN's statement_timeout or the store's default).
	queryTimeout time.Duration
	// dsnFrom says where dsn came from: "--db", "FLOWRUN_DB", "project"
	// (a .flowrun/ found here or above, or its config.hcl) or "" (the
	// default under the working directory, none found).
	dsnFrom string
	project project.Project
	// opened is the store once openStore opened it.
	opened    openedStore
	cmdEngine commandEngine
	traces    commandTraces // the tracer of the command's engine (tracing.go)
	// remote is the server of a remote verb (--server, FLOWRUN_SERVER)
	// and its client once dialed (remote.go).
	remote remoteTarget
	// documents keeps the OpenAPI documents the command's loads fetched
	// by URL (load.go): one fetch, and one document, per URL a command.
	documents *docfetch.Cache
	closers   []func() error
}

// openedStore is what openStore found: the store, or why a verb that
// only reads has none.
type openedStore struct {
	st store.Store
	// noTables is the store's account of a PostgreSQL schema that holds
	// no flowrun tables, which a verb that only reads found instead of
	// creating them (openStore, noDatabase); it names no password.
	noTables string
}

// commandEngine is the command's engine over st (env.engine), onEvent
// its progress hook, and events the queue through which the engine's
// events reach the progress or the log (eventqueue.go; nil until the
// command's engine is made).
type commandEngine struct {
	eng     *interp.Engine
	st      store.Store
	onEvent atomic.Pointer[func(store.Event)]
	events  *eventQueue
	// prog is the progress lines of the run the command drives
	// (newProgress), which drive tells the run it drives.
	prog *progress
}

// Main runs the flowrun command line with args (without the program name)
// and returns the process exit code. Errors are printed once, to stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Compiling and applying go deep (CEL's environment, SQLite): grow the
	// stack while it is shallow, so that its copies do not map the code
	// metadata of every package on a deep one (package deepstack).
	deepstack.Grow()
	e := &env{
		stdin:  stdin,
		stdout: stdout,
		stderr: stderr,
		getenv: os.Getenv,
		clock:  clock.Real{},
	}
	defer e.close()
	return e.main(context.Background(), args)
}

func (e *env) main(ctx context.Context, args []string) int {
	// --db may also stand before the verb: flowrun --db x.db runs.
	var globalDB string
	emptyDB := false // --db "" given: a script's unset variable, never the default
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		switch {
		case name == "db" && hasValue:
			globalDB, args = value, args[1:]
			emptyDB = emptyDB || value == ""
		case name == "db" && len(args) > 1:
			globalDB, args = args[1], args[2:]
			emptyDB = emptyDB || globalDB == ""
		case name == "h" || name == "help":
			e.usage(e.stdout)
			return ExitOK
		case name == "version" && !hasValue:
			// flowrun --version is flowrun version (which ends the loop).
			args = append([]string{"version"}, args[1:]...)
		default:
			e.verb = ""
			return e.report(usageErrorf("flag %s must come after a verb", args[0]).
				hint("Run `flowrun help` for the verbs and their flags."))
		}
	}
	if len(args) == 0 {
		e.usage(e.stderr)
		return ExitInvalid
	}
	verb := args[0]
	if verb == completeVerb {
		return e.complete(ctx, args[1:])
	}
	if verb == "help" {
		return e.help(args[1:])
	}
	cmd := lookup(verb)
	if cmd == nil {
		return e.report(unknownVerb(verb))
	}
	e.verb = cmd.name

	fs := flag.NewFlagSet("flowrun "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var dbFlag string
	var verbose bool
	var queryTimeout time.Duration
	var serverFlag string
	if cmd.remote {
		fs.StringVar(&serverFlag, "server", "", serverUsage)
	}
	if cmd.store {
		fs.StringVar(&dbFlag, "db", "", dbUsage)
		fs.DurationVar(&queryTimeout, "query-timeout", 0, queryTimeoutUsage)
		fs.BoolVar(&verbose, "v", false, "say which store the command uses, and how it was found")
	}
	run := cmd.setup(fs, e)
	positional, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		e.commandUsage(e.stdout, cmd, fs)
		return ExitOK
	}
	if err != nil {
		msg := flagMessage(err)
		if typed, ok := strings.CutPrefix(msg, "unknown flag "); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			msg += flagSuggestion(strings.TrimLeft(typed, "-"), names)
		}
		return e.report(usageErrorf("%s", msg).
			hint(fmt.Sprintf("Run `flowrun %s -h` for its usage.", cmd.name)))
	}
	fs.Visit(func(f *flag.Flag) { emptyDB = emptyDB || (f.Name == "db" && dbFlag == "") })
	if emptyDB && cmd.store {
		return e.report(usageErrorf("--db is empty").
			hint("Name the database (--db PATH, or a postgres:// URL), or leave --db out to use the project's store (or FLOWRUN_DB)."))
	}
	emptyServer := false
	fs.Visit(func(f *flag.Flag) { emptyServer = emptyServer || (f.Name == "server" && serverFlag == "") })
	if emptyServer {
		return e.report(usageErrorf("--server is empty").
			hint("Name the server (--server https://HOST:PORT), or leave --server out to use FLOWRUN_SERVER, the project's server or its store."))
	}
	if cmd.remote {
		if err := e.chooseServer(serverFlag, dbFlag != "" || globalDB != ""); err != nil {
			return e.report(err)
		}
	}
	if e.remote.url != "" {
		if verbose {
			fmt.Fprintf(e.stderr, "flowrun %s: using the server %s, named by %s\n", cmd.name, e.remote.url, e.remote.from)
		}
	} else if cmd.store {
		switch {
		case dbFlag != "" || globalDB != "":
			e.dsn, e.dsnFrom = firstNonEmpty(dbFlag, globalDB), "--db"
		case e.getenv("FLOWRUN_DB") != "":
			e.dsn, e.dsnFrom = e.getenv("FLOWRUN_DB"), "FLOWRUN_DB"
		default:
			if err := e.findProject(); err != nil {
				return e.report(err)
			}
		}
		if err := checkDSN(e.dsn, e.dsnFrom); err != nil {
			return e.report(err)
		}
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "query-timeout" })
		if e.queryTimeout, err = e.readQueryTimeout(queryTimeout, given); err != nil {
			return e.report(err)
		}
		if verbose {
			fmt.Fprintf(e.stderr, "flowrun %s: using the store %s, %s\n", cmd.name, store.ShownDSN(e.dsn), e.storeOrigin())
		}
	}
	if cmd.reads {
		rctx, stop := interruptible(ctx)
		err := run(rctx, positional)
		if sig := stop(); sig != nil {
			return e.report(interrupted(sig))
		}
		return e.report(err)
	}
	return e.report(run(ctx, positional))
}

// interruptible returns ctx canceled by the first SIGINT or SIGTERM, and
// the function that stops watching and tells which signal came, if any.
func interruptible(ctx context.Context) (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done, finished := make(chan struct{}), make(chan struct{})
	var got os.Signal
	go func() { // owned by stop, which waits for it
		defer close(finished)
		select {
		case got = <-sigs:
			cancel()
		case <-done:
		}
	}()
	return ctx, func() os.Signal {
		signal.Stop(sigs)
		close(done)
		<-finished
		cancel()
		return got
	}
}

// interrupted is the end of a reading verb stopped by a signal: exit
// 128+the signal's number, as a shell reports a command the signal ended.
func interrupted(sig os.Signal) error {
	code := 130
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	return &exitError{code: code, msg: "interrupted by " + signalName(sig) + "; the read was canceled on the database too, and nothing was changed"}
}

func signalName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "Ctrl-C (SIGINT)"
	}
	return "SIGTERM"
}

// unknownVerb is the error of a verb flowrun does not have, with the
// nearest one it has when there is one.
func unknownVerb(verb string) *exitError {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("unknown verb %q", verb)
	if near := naming.NearestName(verb, names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return usageErrorf("%s", msg).hint("Run `flowrun help` for the list of verbs.")
}

func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// report prints err once, as `flowrun VERB: message` with its hint, and
// returns the exit code it carries.
func (e *env) report(err error) int {
	if err == nil {
		return ExitOK
	}
	e.flushEvents() // the lines of what happened before the error
	var xe *exitError
	if !errors.As(err, &xe) {
		err = remoteError(err) // a server's refusal or fault, worded
	}
	if !errors.As(err, &xe) {
		xe = &exitError{code: codeOf(err), err: err}
	}
	if xe.silent() {
		return xe.code
	}
	if xe.hintText == "" && errors.Is(err, store.ErrBusy) {
		xe.hintText = busyHint
	}
	if xe.hintText == "" && errors.Is(err, store.ErrTimeout) {
		xe.hintText = timeoutHint
	}
	if xe.hintText == "" && errors.Is(err, store.ErrFull) {
		xe.hintText = fullHint
	}
	if xe.storeHint {
		xe.hintText = withServer(xe.hintText, e.serverFlag())
	}
	prefix := "flowrun"
	if e.verb != "" {
		prefix += " " + e.verb
	}
	// A message may quote stored text (a program's stderr in a step's
	// error), and a hint may name a value: both are escaped for the
	// terminal.
	fmt.Fprintf(e.stderr, "%s: %s\n", prefix, termtext.Line(xe.message()))
	for _, l := range xe.lines {
		fmt.Fprintf(e.stderr, "  %s\n", l)
	}
	if xe.hintText != "" {
		fmt.Fprintf(e.stderr, "hint: %s\n", termtext.Line(xe.hintText))
	}
	return xe.code
}

func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		if err := e.closers[i](); err != nil {
			fmt.Fprintf(e.stderr, "flowrun: closing: %s\n", termtext.Line(err.Error()))
		}
	}
	e.closers = nil
}

func (e *env) help(args []string) int {
	if len(args) == 0 {
		e.usage(e.stdout)
		return ExitOK
	}
	cmd := lookup(args[0])
	if cmd == nil {
		return e.report(unknownVerb(args[0]))
	}
	fs := flag.NewFlagSet("flowrun "+cmd.name, flag.ContinueOnError)
	if cmd.store {
		fs.String("db", "", dbUsage)
		fs.Duration("query-timeout", 0, queryTimeoutUsage)
	}
	cmd.setup(fs, e)
	e.commandUsage(e.stdout, cmd, fs)
	return ExitOK
}

func (e *env) usage(w io.Writer) {
	fmt.Fprintf(w, "flowrun runs durable workflows written in HCL with CEL expressions.\n\n")
	fmt.Fprintf(w, "Usage:\n\n\tflowrun VERB [ARGUMENTS] [FLAGS]\n\nVerbs:\n\n")
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "\t%-*s  %s\n", width, c.name, c.short)
	}
	fmt.Fprintf(w, "\nRun `flowrun help VERB` for a verb's arguments and flags.\n")
	fmt.Fprintf(w, "Exit codes: 0 completed, 1 failed or canceled, 2 bad input, 3 parked,\n")
	fmt.Fprintf(w, "4 version decision needed, 5 store error, 6 already decided by someone else.\n")
	fmt.Fprintf(w, "Environment: FLOWRUN_DB (the database), FLOWRUN_BUSY_TIMEOUT (how long to wait\n")
	fmt.Fprintf(w, "for another process's write to a SQLite file; default 5s), FLOWRUN_QUERY_TIMEOUT\n")
	fmt.Fprintf(w, "(how long a read of a PostgreSQL database may run; default 5s), NO_COLOR.\n")
}

func (e *env) commandUsage(w io.Writer, cmd *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: flowrun %s %s\n\n%s\n", cmd.name, cmd.args, cmd.long)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	fmt.Fprintf(w, "\nFlags:\n")
	for _, n := range names {
		f := fs.Lookup(n)
		arg := ""
		if !isBoolFlag(f) {
			arg = " VALUE"
		}
		fmt.Fprintf(w, "  %s%s\n    \t%s\n", flagSpelling(n), arg, f.Usage)
	}
}

const dbUsage = "the database: a SQLite file path or a postgres:// URL (default $FLOWRUN_DB, else .flowrun/flowrun.db)"

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
