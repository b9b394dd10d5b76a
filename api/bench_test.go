package api_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/server"
	"github.com/flowrun/flowrun/store/backend"
)

const benchHCL = `
workflow "w" {
  version = "1.0.0"
  input "n" { type = string }
  key = "input.n"
  step "a" {
    set { v = 1 }
  }
  step "ask" {
    depends_on = [step.a]
    wait { signal = "go" }
  }
}
`

// benchDoors opens a store with 200 parked runs and returns the one door
// over it both ways: in the process, and through a flowrun server on
// loopback (the server's time plus one round trip).
func benchDoors(b *testing.B) (local *api.Local, remote *api.Client, eng *interp.Engine) {
	ctx := context.Background()
	o, err := backend.Open(ctx, filepath.Join(b.TempDir(), "flowrun.db"), backend.Options{CreateFile: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Store.Close() })
	eng = interp.New(o.Store, interp.Options{})
	mod, diags := lang.LoadSources([]lang.Source{{Name: "w.hcl", Src: []byte(benchHCL)}}, lang.LoadOptions{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	local = api.NewLocal(eng, api.LocalOptions{})
	if _, err := local.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		v, _, err := local.Start(ctx, api.StartRequest{Workflow: "w", Inputs: map[string]any{"n": string(rune('a'+i%26)) + time.Duration(i).String()}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := eng.Drive(ctx, v.RunID); err != nil {
			b.Fatal(err)
		}
	}
	srv := httptest.NewServer(server.New(server.Options{Engine: eng, NoAuth: true}))
	b.Cleanup(srv.Close)
	remote, err = api.Dial(srv.URL, "", api.ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { remote.Close() })
	return local, remote, eng
}

// BenchmarkDoor: runs (a page of 50) and show (@last) in the process and
// through the server, side by side: the target is the server's
// within 2x of the local one.
func BenchmarkDoor(b *testing.B) {
	local, remote, _ := benchDoors(b)
	ctx := context.Background()
	for _, d := range []struct {
		name string
		door api.Service
	}{{"local", local}, {"remote", remote}} {
		b.Run("runs/"+d.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := d.door.Runs(ctx, api.RunsQuery{Limit: 50}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("show/"+d.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := d.door.Run(ctx, "@last"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLogFollowDelivery: how long after a signal's commit its event
// reaches a client following the run's log through the server (logs -f
// --server); the target is under 50 ms.
func BenchmarkLogFollowDelivery(b *testing.B) {
	local, remote, _ := benchDoors(b)
	ctx := context.Background()
	runs, err := local.Runs(ctx, api.RunsQuery{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	id := runs[0].RunID
	got := make(chan struct{}, 1)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	follow := make(chan error, 1)
	go func() { // ends when fctx does
		follow <- remote.Log(fctx, id, api.LogQuery{Follow: true}, func(e api.LogEntry) error {
			if e.Event != nil && e.Event.Kind == "signal_received" {
				got <- struct{}{}
			}
			return nil
		})
	}()
	time.Sleep(100 * time.Millisecond) // the stream's first read is done
	b.ResetTimer()
	for b.Loop() {
		if _, err := local.Signal(ctx, id, "go", nil); err != nil {
			b.Fatal(err)
		}
		<-got
	}
	b.StopTimer()
	stop()
	<-follow
}
