// Command chain is the peer of flowrun bench's apply-mem scenario: one
// go-workflows workflow of N sequential activities that do nothing, on
// go-workflows' SQLite backend (modernc.org/sqlite, as flowrun's), with its
// worker and client in this one process and its default options, as
// go-workflows' own samples run. It prints the workflow's result and exits.
//
//	chain N DB
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/cschleiden/go-workflows/backend/sqlite"
	"github.com/cschleiden/go-workflows/client"
	"github.com/cschleiden/go-workflows/worker"
	"github.com/cschleiden/go-workflows/workflow"
)

// steps is how many activities Chain runs, one after another.
var steps int

// Noop is the activity: it returns its argument.
func Noop(_ context.Context, i int) (int, error) { return i, nil }

// Chain runs Noop steps times in sequence and returns the last result.
func Chain(ctx workflow.Context) (int, error) {
	v := 0
	for i := range steps {
		r, err := workflow.ExecuteActivity[int](ctx, workflow.DefaultActivityOptions, Noop, i).Get(ctx)
		if err != nil {
			return 0, err
		}
		v = r
	}
	return v, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chain:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: chain STEPS DATABASE")
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 {
		return fmt.Errorf("STEPS must be a positive count, not %q", os.Args[1])
	}
	steps = n
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := sqlite.NewSqliteBackend(os.Args[2])
	w := worker.New(b, nil)
	if err := w.RegisterWorkflow(Chain); err != nil {
		return err
	}
	if err := w.RegisterActivity(Noop); err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	c := client.New(b)
	wf, err := c.CreateWorkflowInstance(ctx, client.WorkflowInstanceOptions{InstanceID: "chain-" + os.Args[1]}, Chain)
	if err != nil {
		return err
	}
	r, err := client.GetWorkflowResult[int](ctx, c, wf, time.Hour)
	if err != nil {
		return err
	}
	fmt.Println("result", r)
	cancel()
	return w.WaitForCompletion()
}
