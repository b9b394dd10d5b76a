package flowrun_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/flowrun/flowrun"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/server"
	"github.com/flowrun/flowrun/store/backend"
)

// Start a run on a flowrun serve and wait for its end. A program Dials its
// server's URL with a token from `flowrun tokens create`; here the server
// runs in this process (serveGreet), so the example runs anywhere.
func ExampleDial() {
	ctx := context.Background()
	url, stop := serveGreet(ctx)
	defer stop()

	s, err := flowrun.Dial(url, "") // the server runs with --no-auth
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	run, err := s.Start(ctx, "greet", map[string]any{"who": "ann"})
	if err != nil {
		log.Fatal(err)
	}
	run, err = s.Wait(ctx, run.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, string(run.Outputs))
	// Output: completed {"text":"hello, ann"}
}

// serveGreet stands in for `flowrun serve --no-auth --worker 1` over a
// new database where greet is applied: it returns the server's URL and
// the function that stops it and removes the database.
func serveGreet(ctx context.Context) (string, func()) {
	dir, err := os.MkdirTemp("", "flowrun-example")
	if err != nil {
		log.Fatal(err)
	}
	db := filepath.Join(dir, "flowrun.db")
	f, err := flowrun.Open(ctx, db, flowrun.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	mod, err := f.LoadSource(ctx, "greet.hcl", []byte(greet))
	if err == nil {
		_, err = f.Apply(ctx, mod)
	}
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	o, err := backend.Open(ctx, db, backend.Options{})
	if err != nil {
		log.Fatal(err)
	}
	eng := interp.New(o.Store, interp.Options{})
	w := interp.NewWorker(eng, interp.WorkerOptions{Concurrency: 1})
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(server.New(server.Options{Engine: eng, NoAuth: true}))
	return hs.URL, func() {
		hs.Close()
		w.Stop(ctx)
		o.Store.Close()
		os.RemoveAll(dir)
	}
}
