package cli

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"time"

	"github.com/flowrun/flowrun/interp"
)

// retentionFlags are worker's and serve's flags for retention: the store's
// default age (a workflow's own `retention` wins) and how often a pass
// runs.
type retentionFlags struct {
	age   *string
	every *time.Duration
}

func addRetentionFlags(fs *flag.FlagSet) retentionFlags {
	return retentionFlags{
		age:   fs.String("retention", "", "delete finished runs older than this (30d, 2w, 12h) unless their workflow sets its own retention (default: keep them)"),
		every: fs.Duration("retention-every", time.Minute, "how often retention looks for runs to delete"),
	}
}

// options checks the flags and returns the retention to apply.
func (f retentionFlags) options() (interp.RetainOptions, error) {
	o := interp.RetainOptions{Every: *f.every}
	if *f.age != "" {
		d, err := parseAge(*f.age)
		if err != nil {
			return o, usageErrorf("--retention %q: %v", *f.age, err).hint("Pass an age such as --retention 30d (days), 2w (weeks) or 12h.")
		}
		o.Default = d
	}
	if *f.every <= 0 {
		return o, usageErrorf("--retention-every must be more than 0, got %s", *f.every).hint("Pass a duration such as --retention-every 1m.")
	}
	return o, nil
}

// startRetention runs eng's retention in a goroutine it owns; the function
// it returns stops it and waits for it to end.
func startRetention(ctx context.Context, eng *interp.Engine, o interp.RetainOptions) (stop func()) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		eng.Retain(rctx, o)
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// describeRetention is the log's word on the retention in force.
func describeRetention(o interp.RetainOptions) string {
	if o.Default <= 0 {
		return fmt.Sprintf("retention: deleting the finished runs of workflows that set a retention, every %s; others are kept", o.Every)
	}
	return fmt.Sprintf("retention: deleting finished runs older than %s (or their workflow's retention), every %s", o.Default, o.Every)
}
