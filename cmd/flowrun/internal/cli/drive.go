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
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
	liveview "github.com/flowrun/flowrun/tui/progress"
)

// display is how a foreground verb shows progress. The engine's plain
// progress lines pass through gate, which holds them back while the live
// view draws: the view shows the same events, and two writers on one
// terminal would garble it.
type display struct {
	// noTUI is --no-tui: plain lines even on a terminal.
	noTUI bool
	// quiet is --quiet: no progress, the outcome on one line.
	quiet bool
	// items is how show and the result of apply show a foreach's items.
	items itemsView
	// live is set while the live view draws.
	live atomic.Bool
}

// noTUIFlag declares --no-tui on a foreground verb's flags.
func (e *env) noTUIFlag(fs *flag.FlagSet) {
	fs.BoolVar(&e.display.noTUI, "no-tui", false, "print plain progress lines even on a terminal, instead of the live view")
	fs.BoolVar(&e.display.quiet, "quiet", false, "print no progress, only the run's outcome: its id and status on one line")
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
	return !e.display.noTUI && !e.display.quiet && e.getenv("TERM") != "dumb" && isTerminal(e.stderr)
}

// driveGrace is how long a Ctrl-C (or SIGTERM) of a foreground verb lets
// the actions in flight finish before it stops them: a worker's default
// --grace.
const driveGrace = 30 * time.Second

// drive runs a run (and its children) in this process until it ends or
// parks, then prints the result. Ctrl-C or SIGTERM stops it gracefully
// (durability.md, Shutdown): no new action starts, the actions in flight
// finish for up to driveGrace and their results are kept, the run is
// parked and the command exits 3. A second signal, or the end of the grace
// period, stops the actions still running; the engine records them
// interrupted and puts the work back.
func (e *env) drive(ctx context.Context, eng *interp.Engine, runID string, asJSON bool) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	drain := make(chan struct{})
	notices := make(chan string, 2)
	var interrupted atomic.Bool
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	go func() { // the signal watcher: ends when drive is done with it
		defer close(watchDone)
		var grace <-chan time.Time
		for {
			select {
			case <-sigs:
				if interrupted.Swap(true) {
					cancel()
					return
				}
				close(drain)
				t := e.clock.NewTimer(driveGrace)
				defer t.Stop()
				grace = t.C()
				msg := fmt.Sprintf("stopping: no new step starts; the actions in flight may finish for up to %s (Ctrl-C again stops them now)", driveGrace)
				if e.display.live.Load() {
					// The terminal echoed "^C" where the view left the
					// cursor; put it back at the line's start (see
					// driveShown) before the view draws again.
					_, _ = io.WriteString(e.stderr, "\r")
					notices <- msg
				} else {
					e.flushEvents()
					fmt.Fprintf(e.stderr, "flowrun %s: %s.\n", e.verb, msg)
				}
			case <-grace:
				cancel()
				return
			case <-stopWatch:
				return
			}
		}
	}()
	if e.cmdEngine.prog != nil {
		e.cmdEngine.prog.follow(runID)
	}
	err := e.driveShown(ctx, sctx, eng, runID, drain, notices)
	close(stopWatch)
	<-watchDone
	e.flushEvents()
	if interrupted.Load() && !e.ended(ctx, eng, runID) {
		fmt.Fprintf(e.stderr, "flowrun %s: interrupted; run %s is parked safely and loses nothing.\n", e.verb, runID)
		return (&exitError{code: ExitParked, msg: "run " + runID + " was interrupted"}).
			hint("Continue it with: flowrun resume " + runID)
	}
	if err != nil {
		return storeError(fmt.Sprintf("running run %s", runID), err)
	}
	return e.finish(ctx, eng, runID, asJSON)
}

// ended reports whether the run is terminal: a run that ended while its
// drive was stopping (the last actions finished) is reported as it ended.
func (e *env) ended(ctx context.Context, eng *interp.Engine, runID string) bool {
	run, err := eng.Store().RunGet(ctx, runID)
	return err == nil && run.Status.Terminal()
}

// driveShown runs the engine's Drive under sctx (which a second Ctrl-C
// cancels) and drain (which the first closes) with
// the live view beside it when useLiveView allows. The view runs in its own
// goroutine, owned here: it is told to finish when Drive returns, draws the
// run's final state, and is waited for before anything else is printed.
// Its own end is ctx's (not sctx's), so an interrupted run's last frame
// shows the work put back.
func (e *env) driveShown(ctx, sctx context.Context, eng *interp.Engine, runID string, drain <-chan struct{}, notices <-chan string) error {
	if !e.useLiveView() {
		_, err := eng.DriveDrain(sctx, runID, drain)
		return err
	}
	vctx, finish := context.WithCancel(ctx)
	defer finish()
	viewDone := make(chan error, 1)
	e.display.live.Store(true)
	go func() {
		viewDone <- liveview.Run(vctx, liveview.Options{
			Engine:  eng,
			RunID:   runID,
			Out:     e.stderr,
			NoColor: e.getenv("NO_COLOR") != "",
			Clock:   e.clock,
			Width:   int(width(e.stderr)),
			Notices: notices,
		})
	}()
	_, err := eng.DriveDrain(sctx, runID, drain)
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
		fmt.Fprintf(e.stderr, "flowrun %s: the live progress view stopped (%s); the run went on without it. Pass --no-tui for plain progress lines.\n", e.verb, termtext.Line(verr.Error()))
	}
	return err
}
