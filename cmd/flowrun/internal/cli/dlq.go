package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

func dlqCommand() *command {
	return &command{
		name:  "dlq",
		args:  "list [--all] [--json] | retry ID | drop ID",
		short: "list, retry or drop dead letters",
		long: `Dlq works the dead letters: foreach items that failed after their retries in a
step with on_failure = "dead_letter". list prints the open ones, oldest first
(--all adds the closed ones); --json prints an array of objects with the fields
id, run_id, step, index, item, error and created_at. retry ID runs the item's
action again on its run's graph, with the recorded item, the run's inputs and
upstream outputs and the same idempotency key, under the step's retry policy
with a fresh budget (up to its attempts while its when holds, waiting its
backoff between them): on success the letter is closed and the output recorded
in its run's events (the run's status and outputs do not change); if every
attempt fails the letter stays open with the last error and the command exits
1. The step's circuit breaker applies to each try, and the result is applied to
it: an open breaker refuses the try (on_open = "fail": it fails with kind
breaker_open; else it is not run and retry exits 1 saying until when). drop ID
closes a letter without running it. An unknown or closed ID is refused (exit
2). One letter is retried by one process at a time: while another process
retries it, retry and drop are refused (exit 6) and run nothing.`,
		store:  true,
		remote: true,
		setup: func(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
			asJSON := fs.Bool("json", false, "list: print a JSON array of dead letters")
			all := fs.Bool("all", false, "list: include the retried and dropped letters")
			return func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return usageErrorf("dlq needs a subcommand: list, retry or drop").
						hint("Run: flowrun dlq list")
				}
				switch sub := args[0]; sub {
				case "list":
					if len(args) != 1 {
						return usageErrorf("dlq list takes no arguments, got %q", args[1]).hint("Run: flowrun dlq list [--all] [--json]")
					}
					return e.dlqList(ctx, *all, *asJSON)
				case "retry", "drop":
					if len(args) != 2 {
						return usageErrorf("dlq %s takes one dead letter ID, got %s", sub, plural(len(args)-1, "argument", "arguments")).
							hint("List the dead letters and their ids with: flowrun dlq list")
					}
					id, err := strconv.ParseInt(args[1], 10, 64)
					if err != nil || id <= 0 {
						return usageErrorf("%q is not a dead letter id; ids are whole numbers such as 3", args[1]).
							hint("List the dead letters and their ids with: flowrun dlq list")
					}
					return e.dlqWork(ctx, sub, id)
				default:
					return usageErrorf("unknown dlq subcommand %q; use list, retry or drop", sub).
						hint("Run `flowrun help dlq` for the usage.")
				}
			}
		},
	}
}

// jsonTime renders a time as the JSON interface does: RFC 3339, UTC,
// milliseconds.
func jsonTime(t time.Time) string { return interp.JSONTime(t) }

func (e *env) dlqList(ctx context.Context, all, asJSON bool) error {
	d, err := e.door(ctx)
	switch {
	case errors.Is(err, errNoDatabase):
		return e.noDatabase("")
	case err != nil:
		return err
	}
	ds, err := d.DeadLetters(ctx, all)
	if err != nil {
		return storeError("", err)
	}
	if asJSON {
		return e.writeJSON(ds)
	}
	if len(ds) == 0 {
		fmt.Fprintln(e.stderr, "flowrun dlq: no dead letters")
		return nil
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "ID\tRUN\tSTEP\tINDEX\tSTATUS\tITEM\tERROR\tCREATED")
	for _, l := range ds {
		var se struct{ Message string }
		_ = json.Unmarshal(l.Error, &se)
		status := l.Status
		if status == "" {
			status = string(store.DeadLetterOpen) // listed without --all: open
		}
		row(tw, strconv.FormatInt(l.ID, 10), l.RunID, l.Step, strconv.Itoa(l.Index), status,
			clip(string(l.Item), 40), clip(se.Message, 60), formatStamp(l.CreatedAt))
	}
	return tw.Flush()
}

func (e *env) dlqWork(ctx context.Context, sub string, id int64) error {
	d, err := e.door(ctx)
	if errors.Is(err, errNoDatabase) {
		return e.noDatabase(fmt.Sprintf("no dead letter has id %d", id))
	}
	if err != nil {
		return err
	}
	if sub == "drop" {
		if _, err := d.DropDeadLetter(ctx, id); err != nil {
			return e.letterError(err, "it was not dropped")
		}
		fmt.Fprintf(e.stdout, "dead letter %d dropped\n", id)
		return nil
	}
	// Ctrl-C or SIGTERM stops the item's attempt (its process group gets
	// SIGTERM, as on a timeout), which is recorded as a failed try; the
	// letter stays open and its claim is given back. Without this the
	// signal ended flowrun alone, and the item's process, in a process
	// group of its own, ran on unwatched.
	rctx, stop := interruptible(ctx)
	res, err := d.RetryDeadLetter(rctx, id)
	if sig := stop(); sig != nil {
		code := 130
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		return &exitError{code: code, msg: fmt.Sprintf("interrupted by %s; the retry of dead letter %d was stopped, and the letter stays open", signalName(sig), id)}
	}
	if err != nil {
		return e.letterError(err, "nothing was run here")
	}
	if !res.Retried {
		fmt.Fprintf(e.stderr, "flowrun dlq: %s\n", termtext.Line(res.Message))
		return exitCode(ExitFailed)
	}
	fmt.Fprintf(e.stdout, "dead letter %d retried: %s of run %s succeeded; the letter is closed\n", id,
		termtext.Line(fmt.Sprintf("%s[%d]", res.Letter.Step, res.Letter.Index)), res.Letter.RunID)
	return nil
}

// letterError words a refused dlq retry or drop: a letter another process
// is retrying is exit 6, as a decision someone else took first (spec
// semantics.md §16 "dlq list --json"); what happened to it is for that
// process to say, and dlq list --all shows it once it is done.
func (e *env) letterError(err error, what string) error {
	var held *store.LetterHeldError
	if !errors.As(err, &held) {
		return controlError(err)
	}
	list := "flowrun dlq list --all"
	if e.remote.url != "" {
		list += " --server " + e.remote.url
	}
	return (&exitError{code: ExitConflict, msg: termtext.Line(fmt.Sprintf(
		"dead letter %d is being retried by %s (its claim is renewed while that retry runs, and lapses at %s if the process died); %s",
		held.ID, held.Owner, formatTime(held.Until), what))}).
		hint("See how that retry ended, once it has, with: " + list)
}

// clip shortens s to n runes for a table cell.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
