package interp

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	_ "modernc.org/sqlite" // the raw baseline's driver

	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
	_ "modernc.org/sqlite" // the raw baseline's driver
)

// The benchmarks report their time per operation as a ratio to one raw
// single-row SQLite commit (WAL, same synchronous mode) measured in the same
// benchmark run ("x-commit"): a 1k-step run at 3 x-commit costs as much as
// three single-row commits.

// baseline runs the raw-commit sub-benchmark of a synchronous mode and
// returns its ns per commit, so the ratio is taken within one benchmark run.
func baseline(b *testing.B, sync string) float64 {
	var ns float64
	b.Run(sync+"/raw-commit", func(b *testing.B) {
		rawCommits(b, b.TempDir(), sync)
		ns = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	return ns
}

func rawCommits(b *testing.B, dir, sync string) {
	path := filepath.Join(dir, fmt.Sprintf("raw-%s-%d.db", sync, b.N))
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous("+sync+")&_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO t (v) VALUES (?)`, "row"); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawCommit is the baseline itself.
func BenchmarkRawCommit(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run(sync, func(b *testing.B) { rawCommits(b, b.TempDir(), sync) })
	}
}

func benchEngine(b *testing.B, sync string, clk clock.Clock) (*Engine, *sqlite.Store) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "flowrun.db"), sqlite.Options{Synchronous: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return New(st, Options{Clock: clk, Owner: store.Owner{Host: "bench", PID: 1, Worker: "b"}, ParkWait: -1}), st
}

func chainHCL(name string, n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "workflow %q {\n  version = \"1.0.0\"\n  step \"s0\" {\n    set { v = 0 }\n  }\n", name)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&sb, "  step \"s%d\" {\n    set { v = \"{{ steps.s%d.output.v + 1 }}\" }\n  }\n", i, i-1)
	}
	fmt.Fprintf(&sb, "  output \"v\" { value = \"{{ steps.s%d.output.v }}\" }\n}\n", n-1)
	return sb.String()
}

// storeHCL compiles and stores the workflow, and loads its program into
// the engine's cache so that compiling CEL is not part of what is timed.
func storeHCL(b *testing.B, e *Engine, src string) *graph.Graph {
	m, diags := lang.LoadFile("bench.hcl", []byte(src))
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	g := m.Workflows[0].Graph
	v, err := e.StoreGraph(context.Background(), g)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.loadVersion(v); err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkSequentialSet1k runs a 1,000-step chain of set steps per op.
func BenchmarkSequentialSet1k(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		base := baseline(b, sync)
		b.Run(sync+"/run", func(b *testing.B) {
			e, _ := benchEngine(b, sync, clock.Real{})
			storeHCL(b, e, chainHCL("chain", 1000))
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run, _, err := e.StartRun(ctx, StartParams{Workflow: "chain", New: true})
				if err != nil {
					b.Fatal(err)
				}
				done, err := e.Drive(ctx, run.ID)
				if err != nil || done.Status != store.RunCompleted {
					b.Fatalf("run %s: %v %s", done.Status, err, done.Error)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-commit")
		})
	}
}

// BenchmarkWorker1000Runs runs 1,000 runs of 10 set steps per op on one
// worker with concurrency 16.
func BenchmarkWorker1000Runs(b *testing.B) {
	const runs = 1000
	for _, sync := range []string{"FULL", "NORMAL"} {
		base := baseline(b, sync)
		b.Run(sync+"/runs", func(b *testing.B) {
			e, st := benchEngine(b, sync, clock.Real{})
			storeHCL(b, e, chainHCL("ten", 10))
			ctx := context.Background()
			w := NewWorker(e, WorkerOptions{Concurrency: 16})
			if err := w.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer w.Stop(ctx)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ids := make([]string, runs)
				for j := range ids {
					run, _, err := e.StartRun(ctx, StartParams{Workflow: "ten", New: true})
					if err != nil {
						b.Fatal(err)
					}
					ids[j] = run.ID
				}
				for _, id := range ids {
					for {
						r, err := st.RunGet(ctx, id)
						if err != nil {
							b.Fatal(err)
						}
						if r.Status.Terminal() {
							if r.Status != store.RunCompleted {
								b.Fatalf("run %s %s", r.Status, r.Error)
							}
							break
						}
						waitABit(e)
					}
				}
			}
			perRun := float64(b.Elapsed().Nanoseconds()) / float64(b.N*runs)
			b.ReportMetric(perRun/base, "x-commit/run")
			b.ReportMetric(float64(b.N*runs)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

// waitABit sleeps one poll interval on the engine clock.
func waitABit(e *Engine) {
	t := e.clk.NewTimer(e.opts.Poll / 10)
	<-t.C()
}

// BenchmarkExecPathLookup finds the program of an exec step named without
// a slash ("true"), from the program cache ("cached": one access(2) check)
// or by a PATH search ("searched", the cache emptied each time, as every
// exec step did before the cache): the difference is what the cache saves
// each exec step. On this machine's 13-directory PATH: about 1.6 us against
// 22-24 us.
func BenchmarkExecPathLookup(b *testing.B) {
	for _, mode := range []string{"cached", "searched"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				if mode == "searched" {
					programs.mu.Lock()
					clear(programs.m)
					programs.mu.Unlock()
				}
				if _, ok := programs.resolve(clock.Real{}, "true"); !ok {
					b.Fatal("true is not on PATH")
				}
			}
		})
	}
}

// BenchmarkConcurrentStarts starts runs from four goroutines at once, each
// run with its own key ("keyed": the store reads the key's newest run in
// the inserting transaction, language.md §2) or with no key ("unkeyed"),
// on SQLite FULL. keyed/unkeyed is what one key, one run costs a start.
func BenchmarkConcurrentStarts(b *testing.B) {
	const keyed = `workflow "keyed" {
  version = "1.0.0"
  input "id" { type = string }
  key = "input.id"
  step "s" {
    set { id = "{{ input.id }}" }
  }
}`
	unkeyed := strings.Replace(strings.Replace(keyed, `  key = "input.id"`+"\n", "", 1), `"keyed"`, `"unkeyed"`, 1)
	per := map[string]float64{}
	for _, wf := range []string{"unkeyed", "keyed"} {
		b.Run(wf, func(b *testing.B) {
			e, _ := benchEngine(b, "FULL", clock.Real{})
			storeHCL(b, e, map[string]string{"keyed": keyed, "unkeyed": unkeyed}[wf])
			ctx := context.Background()
			var n atomic.Int64
			b.SetParallelism(2) // four goroutines on two cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprintf("id-%d", n.Add(1))
					if _, created, err := e.StartRun(ctx, StartParams{Workflow: wf, Inputs: map[string]any{"id": id}}); err != nil || !created {
						b.Errorf("start %s: created %v, %v", id, created, err)
						return
					}
				}
			})
			per[wf] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "starts/s")
			if wf == "keyed" && per["unkeyed"] > 0 {
				b.ReportMetric(per["keyed"]/per["unkeyed"], "x-unkeyed")
			}
		})
	}
}

// BenchmarkSequentialHTTP runs a chain of 200 http steps against a
// loopback server per op, reported against one raw FULL commit: the
// floor of a step is one commit and one round trip.
func BenchmarkSequentialHTTP(b *testing.B) {
	const n = 200
	base := baseline(b, "FULL")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	b.Cleanup(srv.Close)
	var sb strings.Builder
	fmt.Fprintf(&sb, "workflow \"hchain\" {\n  version = \"1.0.0\"\n")
	for i := 0; i < n; i++ {
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf("    depends_on = [step.s%d]\n", i-1)
		}
		fmt.Fprintf(&sb, "  step \"s%d\" {\n%s    http { url = \"%s/x/%d\" }\n  }\n", i, dep, srv.URL, i)
	}
	sb.WriteString("}\n")
	b.Run("FULL/run", func(b *testing.B) {
		e, _ := benchEngine(b, "FULL", clock.Real{})
		storeHCL(b, e, sb.String())
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			run, _, err := e.StartRun(ctx, StartParams{Workflow: "hchain", New: true})
			if err != nil {
				b.Fatal(err)
			}
			done, err := e.Drive(ctx, run.ID)
			if err != nil || done.Status != store.RunCompleted {
				b.Fatalf("run %s: %v %s", done.Status, err, done.Error)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n/base, "x-commit/step")
	})
}
