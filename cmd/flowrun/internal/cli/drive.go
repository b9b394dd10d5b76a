package cli

// Driving a run in the foreground (apply, resume, retry): the engine works
// on the run in this process while its progress shows on stderr, as the
// live view (tui/progress) on a terminal or as plain lines otherwise.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	liveview "github.com/flowrun/flowrun/tui/progress"
)

// display is how a foreground verb shows progress. The engine's plain
// progress lines pass through gate, which holds them back while the live
// view draws: the view shows the same events, and two writers on one
// terminal would garble it.
type display struct {
	// noTUI is --no-tui: plain lines even on a terminal.
	noTUI bool
	// live is set while the live view draws.
	live atomic.Bool
}

// noTUIFlag declares --no-tui on a foreground verb's flags.
func (e *env) noTUIFlag(fs *flag.FlagSet) {
	fs.BoolVar(&e.display.noTUI, "no-tui", false, "print plain progress lines even on a terminal, instead of the live view")
}

// gate wraps the engine's progress hook so that it is quiet while the live
// view draws.
func (d *display) gate(onEvent func(store.Event)) func(store.Event) {
	if onEvent == nil {
		return nil
	}
	return func(ev store.Event) {
		if !d.live.Load() {
			onEvent(ev)
		}
	}
}

// useLiveView reports whether progress is drawn as the live view: only when
// stderr (where progress goes; stdout carries the result) is a terminal
// that can draw it, and --no-tui was not given.
func (e *env) useLiveView() bool {
	return !e.display.noTUI && e.getenv("TERM") != "dumb" && isTerminal(e.stderr)
}

// drive runs a run (and its children) in this process until it ends or
// parks, then prints the result. Ctrl-C or SIGTERM stops it safely: the
// engine puts interrupted work back, and the command exits 3.
func (e *env) drive(ctx context.Context, eng *interp.Engine, runID string, asJSON bool) error {
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := e.driveShown(ctx, sctx, eng, runID)
	interrupted := sctx.Err() != nil && ctx.Err() == nil
	stop()
	if interrupted {
		fmt.Fprintf(e.stderr, "flowrun %s: interrupted; run %s is parked safely and loses nothing.\n", e.verb, runID)
		return (&exitError{code: ExitParked, msg: "run " + runID + " was interrupted"}).
			hint("Continue it with: flowrun resume " + runID)
	}
	if err != nil {
		return storeError(fmt.Sprintf("running run %s", runID), err)
	}
	return e.finish(ctx, eng, runID, asJSON)
}

// driveShown runs the engine's Drive under sctx (which Ctrl-C cancels) with
// the live view beside it when useLiveView allows. The view runs in its own
// goroutine, owned here: it is told to finish when Drive returns, draws the
// run's final state, and is waited for before anything else is printed.
// Its own end is ctx's (not sctx's), so an interrupted run's last frame
// shows the work put back.
func (e *env) driveShown(ctx, sctx context.Context, eng *interp.Engine, runID string) error {
	if !e.useLiveView() {
		_, err := eng.Drive(sctx, runID)
		return err
	}
	vctx, finish := context.WithCancel(ctx)
	defer finish()
	viewDone := make(chan error, 1)
	e.display.live.Store(true)
	go func() {
		viewDone <- liveview.Run(vctx, liveview.Options{
			Store:   eng.Store(),
			RunID:   runID,
			Out:     e.stderr,
			NoColor: e.getenv("NO_COLOR") != "",
			Clock:   e.clock,
			Width:   int(width(e.stderr)),
		})
	}()
	_, err := eng.Drive(sctx, runID)
	if sctx.Err() != nil {
		// The terminal echoed Ctrl-C as "^C" where the view left the
		// cursor, at the start of the line below it. The view moves up from
		// the cursor's column to draw its last frame, so put the cursor
		// back at the line's start. Writes to one file are serialized, and
		// a frame is one write, so this falls between two frames.
		_, _ = io.WriteString(e.stderr, "\r")
	}
	finish()
	verr := <-viewDone
	e.display.live.Store(false)
	if verr != nil {
		// The run is not affected: only its display stopped.
		fmt.Fprintf(e.stderr, "flowrun %s: the live progress view stopped (%v); the run went on without it. Pass --no-tui for plain progress lines.\n", e.verb, verr)
	}
	return err
}
