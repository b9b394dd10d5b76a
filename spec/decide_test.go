package spec

// The decide script command: a version decision for the followed run
// (versioning.md §5), as `flowrun resume RUN --choose CHOICE` makes it.

import (
	"fmt"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// decide checks the followed run against the stored versions (a run parked
// on a signal is blocked now if a new MAJOR is stored), decides it, follows
// the run that goes on (the new run for "new") and runs what is due.
func (d *driver) decide(choice string) error {
	c, err := interp.ParseChoice(choice)
	if err != nil {
		return err
	}
	run, err := d.eng.Rebind(d.ctx, d.root)
	if err != nil {
		return err
	}
	if run.Status != store.RunBlocked {
		return fmt.Errorf("run is %s, not blocked: %w", run.Status, store.ErrConflict)
	}
	dec, err := d.eng.Decide(d.ctx, interp.DecideParams{RunID: d.root, Choice: c, By: "conformance"})
	if err != nil {
		return err
	}
	d.root = dec.Run.ID
	return d.drain()
}
