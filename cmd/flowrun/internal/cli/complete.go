package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// The shell completion of flowrun (spec/cli.md §3): `flowrun completion
// SHELL` prints a script for the shell, and the script asks the hidden
// verb `flowrun __complete` for the candidates of the word under the
// cursor, so the verbs, the flags and the live values (run references,
// workflow names, step names, the signals a run waits for) come from this
// binary and the store it would use.

// completeVerb is the hidden verb the scripts call.
const completeVerb = "__complete"

// filesDirective, alone on the first line of __complete's output, asks the
// shell to complete file names.
const filesDirective = ":files"

// maxRunCandidates is how many runs a completion lists at most.
const maxRunCandidates = 50

var completionShells = []string{"bash", "zsh", "fish"}

func completionCommand() *command {
	return &command{
		name:  "completion",
		args:  "bash|zsh|fish",
		short: "print a shell completion script",
		long: `Completion prints a script that makes the shell complete flowrun's verbs,
flags and values: run references (ids, @last, WORKFLOW@last, WORKFLOW/KEY),
workflow names, step names, the signals a waiting run takes, and the choices
of flags such as --status. The values are read from the database the command
line names (--db, FLOWRUN_DB or the default), never created.

  bash:  source <(flowrun completion bash)      (in ~/.bashrc)
  zsh:   source <(flowrun completion zsh)       (in ~/.zshrc, after compinit)
  fish:  flowrun completion fish | source       (in ~/.config/fish/config.fish)`,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usageErrorf("completion takes the name of a shell (bash, zsh or fish), got %s", plural(len(args), "argument", "arguments")).
						hint("Run, for bash: source <(flowrun completion bash)")
				}
				script, ok := completionScripts[args[0]]
				if !ok {
					return usageErrorf("flowrun cannot complete for the shell %q; it completes bash, zsh and fish", args[0]).
						hint("Run one of: flowrun completion bash, flowrun completion zsh, flowrun completion fish")
				}
				_, err := io.WriteString(e.stdout, script)
				return err
			}
		},
	}
}

// complete runs the hidden verb:
//
//	flowrun __complete [--shell bash|zsh|fish] [--piece PIECE] -- WORD...
//
// WORD... are the words of the command line after `flowrun`, the last one
// the (maybe empty) word under the cursor. It prints one candidate per
// line, or filesDirective. For bash, PIECE is the part of the last word
// that bash replaces (bash splits words at @, : and =), and each candidate
// is printed from where that part begins; zsh gets `value:description`
// and fish `value<TAB>description`. It never fails: a problem (no
// database, a store error) gives no candidates, and it exits 0.
func (e *env) complete(ctx context.Context, args []string) int {
	shell, piece, hasPiece := "", "", false
	for len(args) > 0 && args[0] != "--" {
		switch {
		case args[0] == "--shell" && len(args) > 1:
			shell, args = args[1], args[2:]
		case args[0] == "--piece" && len(args) > 1:
			piece, hasPiece, args = args[1], true, args[2:]
		default:
			args = args[1:]
		}
	}
	if len(args) > 0 {
		args = args[1:]
	}
	if len(args) == 0 {
		args = []string{""}
	}
	cands, files := e.candidates(ctx, args[:len(args)-1], args[len(args)-1])
	if files {
		fmt.Fprintln(e.stdout, filesDirective)
		return ExitOK
	}
	cur := args[len(args)-1]
	for _, c := range cands {
		if !c.matched && !strings.HasPrefix(c.value, cur) {
			continue
		}
		switch shell {
		case "bash":
			v := c.value
			if hasPiece && strings.HasSuffix(cur, piece) && len(v) >= len(cur) {
				v = v[len(cur)-len(piece):]
			}
			fmt.Fprintln(e.stdout, v)
		case "zsh":
			v := strings.ReplaceAll(c.value, ":", `\:`)
			if c.desc != "" {
				v += ":" + descText(c.desc)
			}
			fmt.Fprintln(e.stdout, v)
		default:
			v := c.value
			if c.desc != "" {
				v += "\t" + descText(c.desc)
			}
			fmt.Fprintln(e.stdout, v)
		}
	}
	return ExitOK
}

// candidate is one completion with an optional description. A candidate
// that is matched already (a run id completing a lower-case prefix) is
// not filtered by the word's prefix.
type candidate struct {
	value, desc string
	matched     bool
}

func descText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// candidates returns the completions of cur after the words before it,
// or files true when the shell should complete file names.
func (e *env) candidates(ctx context.Context, before []string, cur string) (cands []candidate, files bool) {
	// Flags before the verb: --db VALUE.
	i, dbFlag := 0, ""
	for i < len(before) && strings.HasPrefix(before[i], "-") {
		name, value, has := strings.Cut(strings.TrimLeft(before[i], "-"), "=")
		switch {
		case name == "db" && has:
			dbFlag = value
		case name == "db" && i+1 < len(before):
			dbFlag = before[i+1]
			i++
		}
		i++
	}
	if i == len(before) {
		if i > 0 && before[i-1] == "--db" {
			return nil, true
		}
		if strings.HasPrefix(cur, "-") {
			return []candidate{{value: "--db", desc: "the database"}, {value: "--help", desc: "the verbs"}, {value: "--version", desc: "the version"}}, false
		}
		return verbCandidates(), false
	}
	verb, rest := before[i], before[i+1:]
	switch verb {
	case "help":
		if len(rest) == 0 {
			return verbCandidates(), false
		}
		return nil, false
	case "completion":
		if len(rest) == 0 {
			for _, s := range completionShells {
				cands = append(cands, candidate{value: s})
			}
		}
		return cands, false
	}
	cmd := lookup(verb)
	if cmd == nil {
		return nil, false
	}
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd.store {
		fs.String("db", "", dbUsage)
	}
	cmd.setup(fs, e)

	// The positional words so far, and the flag whose value is cur.
	var positional []string
	valueOf := ""
	for j := 0; j < len(rest); j++ {
		w := rest[j]
		if w == "--" {
			positional = append(positional, rest[j+1:]...)
			break
		}
		if len(w) < 2 || w[0] != '-' {
			positional = append(positional, w)
			continue
		}
		name, value, has := strings.Cut(strings.TrimLeft(w, "-"), "=")
		f := fs.Lookup(name)
		if has || f == nil || isBoolFlag(f) {
			if name == "db" && has {
				dbFlag = value
			}
			continue
		}
		if j+1 == len(rest) {
			valueOf = name
			break
		}
		if name == "db" {
			dbFlag = rest[j+1]
		}
		j++
	}
	e.dsn = firstNonEmpty(dbFlag, e.getenv("FLOWRUN_DB"))
	if e.dsn == "" {
		// The project's store, as the verb would use it; none on a
		// broken project (completion offers no run ids then).
		if e.findProject() != nil {
			e.dsn = ""
		}
	}
	if checkDSN(e.dsn, "--db") != nil {
		e.dsn = ""
	}
	c := &completer{e: e, ctx: ctx}

	if valueOf == "" && strings.HasPrefix(cur, "-") {
		if name, _, has := strings.Cut(strings.TrimLeft(cur, "-"), "="); has {
			prefix := cur[:strings.Index(cur, "=")+1]
			vals, files := c.flagValues(fs, verb, name, positional)
			if files {
				return nil, true
			}
			for _, v := range vals {
				cands = append(cands, candidate{value: prefix + v.value, desc: v.desc})
			}
			return cands, false
		}
		fs.VisitAll(func(f *flag.Flag) {
			cands = append(cands, candidate{value: flagSpelling(f.Name), desc: firstSentence(f.Usage)})
		})
		return cands, false
	}
	if valueOf != "" {
		return c.flagValues(fs, verb, valueOf, positional)
	}
	return c.positional(verb, positional, cur)
}

func verbCandidates() []candidate {
	var cands []candidate
	for _, c := range commands() {
		cands = append(cands, candidate{value: c.name, desc: c.short})
	}
	return append(cands, candidate{value: "help", desc: "a verb's arguments and flags"})
}

func firstSentence(s string) string {
	if i := strings.IndexAny(s, ";("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// completer reads the live values of a completion from the store, which
// it opens without creating it; every problem means no values.
type completer struct {
	e   *env
	ctx context.Context
	st  store.Store
	eng *interp.Engine
	bad bool
}

func (c *completer) store() (store.Store, *interp.Engine) {
	if c.st == nil && !c.bad {
		if c.e.dsn == "" {
			c.bad = true
			return nil, nil
		}
		st, err := c.e.openStore(c.ctx, false)
		if err != nil {
			c.bad = true
			return nil, nil
		}
		c.st, c.eng = st, c.e.engine(st, nil)
	}
	return c.st, c.eng
}

// flagValues completes the value of --name.
func (c *completer) flagValues(fs *flag.FlagSet, verb, name string, positional []string) ([]candidate, bool) {
	f := fs.Lookup(name)
	if f == nil {
		return nil, false
	}
	var choices []string
	switch ch := f.Value.(type) {
	case *choiceFlag:
		choices = ch.choices
	case *choicesFlag:
		choices = ch.choices
	}
	if choices != nil {
		var cands []candidate
		for _, v := range choices {
			cands = append(cands, candidate{value: v})
		}
		return cands, false
	}
	switch name {
	case "db", "inputs":
		return nil, true
	case "workflow":
		return c.workflows(), false
	case "step", "from":
		if len(positional) > 0 {
			return c.steps(positional[0]), false
		}
	}
	return nil, false
}

// positional completes the next positional argument of a verb.
func (c *completer) positional(verb string, positional []string, cur string) ([]candidate, bool) {
	n := len(positional)
	switch verb {
	case "show", "logs", "resume", "retry", "cancel":
		if n == 0 {
			return c.runs(cur), false
		}
	case "signal":
		switch n {
		case 0:
			return c.runs(cur), false
		case 1:
			return c.signals(positional[0]), false
		}
	case "versions":
		if n == 0 {
			return c.workflows(), false
		}
	case "dlq":
		if n == 0 {
			return []candidate{{value: "list", desc: "open dead letters"}, {value: "retry", desc: "re-execute one"}, {value: "drop", desc: "close one unexecuted"}}, false
		}
	case "schedules":
		switch {
		case n == 0:
			return []candidate{{value: "pause"}, {value: "unpause"}, {value: "trigger"}}, false
		case n == 1:
			return c.schedules(), false
		}
	case "apply", "validate", "plan", "fmt", "graph", "diff", "test":
		return nil, true
	}
	return nil, false
}

// runs completes a run reference: ids (newest first, those starting with
// cur when it is an id prefix), @last, WORKFLOW@last and WORKFLOW/KEY.
func (c *completer) runs(cur string) []candidate {
	st, _ := c.store()
	if st == nil {
		return nil
	}
	if wf, _, ok := strings.Cut(cur, "/"); ok {
		return c.keys(wf)
	}
	var cands []candidate
	// Ids are read as ResolveRun reads them: in any case, O for 0, I and
	// L for 1; a lower-case prefix completes to the id as written.
	rs, err := st.RunList(c.ctx, store.RunListParams{IDPrefix: interp.CanonicalRunID(cur), Limit: maxRunCandidates})
	if err == nil {
		for _, r := range rs {
			cands = append(cands, candidate{value: r.ID, desc: runDesc(r), matched: true})
		}
	}
	cands = append(cands, candidate{value: "@last", desc: "the newest run"})
	for _, w := range c.workflows() {
		cands = append(cands, candidate{value: w.value + "@last", desc: "the newest run of " + w.value})
		if cur != "" && strings.HasPrefix(w.value, cur) && !strings.Contains(cur, "@") {
			cands = append(cands, c.keys(w.value)...)
		}
	}
	return cands
}

func runDesc(r store.RunSummary) string {
	d := r.Workflow + " " + r.Version
	if r.Key != "" {
		d += " key " + r.Key
	}
	return d + " " + string(r.Status)
}

// keys completes WORKFLOW/KEY with the keys of the workflow's newest runs.
func (c *completer) keys(workflow string) []candidate {
	st, _ := c.store()
	if st == nil {
		return nil
	}
	rs, err := st.RunList(c.ctx, store.RunListParams{Workflow: workflow, Limit: maxRunCandidates})
	if err != nil {
		return nil
	}
	var cands []candidate
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Key == "" || seen[r.Key] {
			continue
		}
		seen[r.Key] = true
		cands = append(cands, candidate{value: workflow + "/" + r.Key, desc: r.ID + " " + string(r.Status)})
	}
	return cands
}

// workflows lists the stored workflow names.
func (c *completer) workflows() []candidate {
	st, _ := c.store()
	if st == nil {
		return nil
	}
	vs, err := st.VersionHeads(c.ctx, "")
	if err != nil {
		return nil
	}
	newest := map[string]string{}
	for _, v := range vs {
		newest[v.Workflow] = v.Version // oldest first: the last is the newest
	}
	names := make([]string, 0, len(newest))
	for n := range newest {
		names = append(names, n)
	}
	sort.Strings(names)
	cands := make([]candidate, len(names))
	for i, n := range names {
		cands[i] = candidate{value: n, desc: "version " + newest[n]}
	}
	return cands
}

// steps lists the step names of the run the reference names.
func (c *completer) steps(ref string) []candidate {
	_, eng := c.store()
	if eng == nil {
		return nil
	}
	run, err := eng.ResolveRun(c.ctx, ref)
	if err != nil {
		return nil
	}
	g, err := eng.Graph(c.ctx, run.Workflow, run.GraphHash)
	if err != nil {
		return nil
	}
	var cands []candidate
	for _, s := range g.Steps {
		cands = append(cands, candidate{value: s.Name, desc: string(s.Action.Kind)})
	}
	return cands
}

// signals lists the signals the run would take now.
func (c *completer) signals(ref string) []candidate {
	_, eng := c.store()
	if eng == nil {
		return nil
	}
	names, err := eng.WaitingSignals(c.ctx, ref)
	if err != nil {
		return nil
	}
	var cands []candidate
	for _, n := range names {
		cands = append(cands, candidate{value: n, desc: "a wait step takes it"})
	}
	return cands
}

// schedules lists WORKFLOW/NAME of the active schedules.
func (c *completer) schedules() []candidate {
	st, _ := c.store()
	if st == nil {
		return nil
	}
	ss, err := st.ScheduleList(c.ctx, store.ScheduleListParams{})
	if err != nil {
		return nil
	}
	var cands []candidate
	for _, s := range ss {
		cands = append(cands, candidate{value: s.Workflow + "/" + s.Name})
	}
	return cands
}
