package flowrun_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/flowrun/flowrun"
)

const greet = `
workflow "greet" {
  version = "1.0.0"
  input "who" {
    type = string
  }
  step "hello" {
    set { text = "hello, {{ input.who }}" }
  }
  output "text" {
    value = "{{ steps.hello.output.text }}"
  }
}
`

// open opens a new SQLite database in a temporary directory; done removes
// it.
func open(ctx context.Context) (f *flowrun.Flow, done func()) {
	dir, err := os.MkdirTemp("", "flowrun-example")
	if err != nil {
		log.Fatal(err)
	}
	f, err = flowrun.Open(ctx, filepath.Join(dir, "flowrun.db"), flowrun.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	return f, func() { f.Close(); os.RemoveAll(dir) }
}

// Open a database, load and apply a workflow, start a run and wait for its
// end.
func Example() {
	ctx := context.Background()
	f, done := open(ctx)
	defer done()

	mod, err := f.LoadSource(ctx, "greet.hcl", []byte(greet))
	if err != nil {
		log.Fatal(err)
	}
	applied, err := f.Apply(ctx, mod)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("applied", applied[0].Name, applied[0].Version)

	run, err := f.Start(ctx, "greet", map[string]any{"who": "ann"})
	if err != nil {
		log.Fatal(err)
	}
	run, err = f.Wait(ctx, run.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, string(run.Outputs))

	// The same key (the inputs) again: the completed run stands for it.
	again, err := f.Start(ctx, "greet", map[string]any{"who": "ann"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same run:", again.ID == run.ID)
	// Output:
	// applied greet 1.0.0
	// completed {"text":"hello, ann"}
	// same run: true
}

// A run waits for a signal; Signal delivers it and Wait takes the run to
// its end.
func ExampleFlow_Signal() {
	ctx := context.Background()
	f, done := open(ctx)
	defer done()
	mod, err := f.LoadSource(ctx, "approve.hcl", []byte(`
workflow "approve" {
  version = "1.0.0"
  step "ask" {
    wait { signal = "approved" }
  }
  output "by" {
    value = "{{ steps.ask.output.by }}"
  }
}
`))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := f.Apply(ctx, mod); err != nil {
		log.Fatal(err)
	}
	run, err := f.Start(ctx, "approve", nil)
	if err != nil {
		log.Fatal(err)
	}
	run, err = f.Drive(ctx, run.ID) // runs until it waits for the outside
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, run.WaitReason)

	if err := f.Signal(ctx, run.ID, "approved", map[string]any{"by": "ann"}); err != nil {
		log.Fatal(err)
	}
	run, err = f.Wait(ctx, run.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, string(run.Outputs))
	// Output:
	// waiting signal:approved
	// completed {"by":"ann"}
}

// Events hands over a run's history in order, following it until the run
// ends.
func ExampleFlow_Events() {
	ctx := context.Background()
	f, done := open(ctx)
	defer done()
	mod, err := f.LoadSource(ctx, "greet.hcl", []byte(greet))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := f.Apply(ctx, mod); err != nil {
		log.Fatal(err)
	}
	run, err := f.Start(ctx, "greet", map[string]any{"who": "bo"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := f.Wait(ctx, run.ID); err != nil {
		log.Fatal(err)
	}
	err = f.Events(ctx, run.ID, func(ev flowrun.Event) error {
		if ev.Step != "" {
			fmt.Println(ev.Kind, ev.Step)
		} else {
			fmt.Println(ev.Kind)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// run_created
	// claimed
	// step_completed hello
	// run_completed
}

// A development version (MAJOR 0) is replaced in place by an edit; a
// released one must be given a new version.
func ExampleFlow_Apply() {
	ctx := context.Background()
	f, done := open(ctx)
	defer done()
	src := func(version, text string) []byte {
		return []byte(fmt.Sprintf(`
workflow "draft" {
  version = %q
  step "a" {
    set { text = %q }
  }
}
`, version, text))
	}
	apply := func(version, text string) {
		mod, err := f.LoadSource(ctx, "draft.hcl", src(version, text))
		if err != nil {
			log.Fatal(err)
		}
		applied, err := f.Apply(ctx, mod)
		var ve *flowrun.VersionError
		switch {
		case errors.As(err, &ve):
			fmt.Println("refused", ve.Workflow, ve.Version)
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println("stored", applied[0].Version, "revision", applied[0].Revision)
		}
	}
	apply("0.1.0", "first")
	apply("0.1.0", "second") // an edit: revision 2
	apply("1.0.0", "released")
	apply("1.0.0", "edited") // refused: set a new version
	// Output:
	// stored 0.1.0 revision 1
	// stored 0.1.0 revision 2
	// stored 1.0.0 revision 1
	// refused draft 1.0.0
}
