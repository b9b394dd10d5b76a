package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/termtext"
)

// logPrinter prints a run's log (api.LogReader: events and the lines its
// exec steps wrote, merged in time) as text for people or as JSON lines.
type logPrinter struct {
	w      io.Writer
	asJSON bool
}

// print prints one entry of the log.
func (l *logPrinter) print(e api.LogEntry) error {
	if l.asJSON {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
		// Exact, with the controls encoding/json leaves raw escaped
		// (termtext.JSON).
		_, err = l.w.Write(append(termtext.JSON(b), '\n'))
		return err
	}
	if ev := e.Event; ev != nil {
		sev := ev.StoreEvent()
		_, err := fmt.Fprintf(l.w, "%s  %s\n", logTime(sev.At), describeEvent(sev))
		return err
	}
	ln := e.Line
	who := ln.Step
	if ln.Attempt > 1 {
		who += " (attempt " + strconv.Itoa(ln.Attempt) + ")"
	}
	_, err := fmt.Fprintf(l.w, "%s  %s %s | %s\n", logTime(ln.Time()), termtext.Line(who), ln.Stream, termtext.Line(ln.Text))
	return err
}

// logTime is the time of a text line, in the local zone.
func logTime(t time.Time) string { return t.Local().Format("2006-01-02T15:04:05.000Z07:00") }
