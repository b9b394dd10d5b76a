package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The floor scenarios time `flowrun apply` of a sequential chain of steps
// with real side effects, as a whole process, against the physical floor
// of the same work measured in this process beside it: every durable step
// costs at least its side effect plus one single-row commit at
// synchronous=FULL, since an action starts only after its running commit
// is durable. Rounds alternate floor and apply (best of 3 each), so that
// the machine's state weighs on both alike.

// floorRounds is how many alternating rounds a floor scenario runs.
const floorRounds = 3

// applyHTTPScenario: n http GET steps, each after the last, against a
// server on loopback in a process of its own (serverproc.go); the floor
// is n times one GET to that server with Go's client (keep-alive, the
// body read) and one single-row FULL commit. A second figure holds the
// same apply against the floor measured with the server in this process,
// where client and server share one Go scheduler: no process can reach a
// server that fast.
func applyHTTPScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	n := c.n(1000, 20)
	r.Sizes["steps"] = n
	srv, err := serveCounterProcess(ctx, c)
	if err != nil {
		return err
	}
	defer srv.close()
	local, err := serveCounter()
	if err != nil {
		return err
	}
	defer local.close()
	file := filepath.Join(dir, "http.hcl")
	if err := os.WriteFile(file, []byte(httpChain("http", srv.url, n)), 0o600); err != nil {
		return fmt.Errorf("writing the workflow: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	floorAt := func(url, name string) func(round int) (time.Duration, error) {
		return func(round int) (time.Duration, error) {
			return rawCommitEach(ctx, filepath.Join(dir, name+"-"+strconv.Itoa(round)+".db"), n, func(i int) error {
				resp, err := client.Get(url + "/i/" + strconv.Itoa(i))
				if err != nil {
					return err
				}
				_, err = io.Copy(io.Discard, resp.Body)
				if cerr := resp.Body.Close(); err == nil {
					err = cerr
				}
				return err
			})
		}
	}
	bestApply, err := floorRoundsFigure(ctx, c, dir, r, file, n, floorAt(srv.url, "floor-http"),
		"one loopback GET to a server in another process (Go's client, keep-alive) and one single-row FULL commit per step", "http")
	if err != nil {
		return err
	}
	var bestLocal time.Duration
	floorLocal := floorAt(local.url, "floor-http-local")
	for round := range floorRounds {
		f, err := floorLocal(round)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		if round == 0 || f < bestLocal {
			bestLocal = f
		}
	}
	r.figure(Figure{Name: fmt.Sprintf("the same apply, against a floor whose server runs in the bench process (not a target), best of %d", floorRounds),
		Value: ms(bestApply), Unit: "ms",
		Baseline: &Baseline{Name: "floor: one GET to a server sharing the client's process and one single-row FULL commit per step", Value: ms(bestLocal), Unit: "ms"}})
	return nil
}

// applyExecScenario: n exec steps running true, each after the last; the
// floor is n times one single-row FULL commit and one spawn of true.
func applyExecScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	n := c.n(1000, 20)
	r.Sizes["steps"] = n
	path, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("floor: the program true is not on PATH: %w", err)
	}
	file := filepath.Join(dir, "exec.hcl")
	if err := os.WriteFile(file, []byte(execChain("exec", n)), 0o600); err != nil {
		return fmt.Errorf("writing the workflow: %w", err)
	}
	floor := func(round int) (time.Duration, error) {
		return rawCommitEach(ctx, filepath.Join(dir, "floor-exec-"+strconv.Itoa(round)+".db"), n, func(int) error {
			return exec.CommandContext(ctx, path).Run()
		})
	}
	_, err = floorRoundsFigure(ctx, c, dir, r, file, n, floor,
		"one fork and exec of true and one single-row FULL commit per step", "exec")
	return err
}

// floorRoundsFigure runs floorRounds alternating rounds of the floor and of
// `flowrun apply --quiet FILE` on a new database each (FULL, the store's default), and records the
// best of each as a figure against the floor (target: 1.5x). It returns
// the best apply.
func floorRoundsFigure(ctx context.Context, c Config, dir string, r *Result, file string, n int,
	floor func(round int) (time.Duration, error), floorName, kind string) (time.Duration, error) {
	var bestFloor, bestApply time.Duration
	for round := range floorRounds {
		f, err := floor(round)
		if err != nil {
			return 0, fmt.Errorf("floor: %w", err)
		}
		db := filepath.Join(dir, "apply-"+strconv.Itoa(round), "flowrun.db")
		d, _, err := runFlowrun(ctx, c, dir, "apply", "--quiet", "--db", db, file)
		if err != nil {
			return 0, err
		}
		if round == 0 || f < bestFloor {
			bestFloor = f
		}
		if round == 0 || d < bestApply {
			bestApply = d
		}
	}
	r.figure(Figure{Name: fmt.Sprintf("apply of %d sequential %s steps (the process), best of %d", n, kind, floorRounds),
		Value: ms(bestApply), Unit: "ms",
		Baseline: &Baseline{Name: "floor: " + floorName + ", best of " + strconv.Itoa(floorRounds), Value: ms(bestFloor), Unit: "ms"},
		Target:   &Target{Of: "ratio", Op: "<=", Limit: 1.5}})
	r.figure(Figure{Name: fmt.Sprintf("apply's time per %s step beyond the floor's", kind),
		Value: ms((bestApply - bestFloor) / time.Duration(n)), Unit: "ms",
		Baseline: &Baseline{Name: "the floor's time per step", Value: ms(bestFloor / time.Duration(n)), Unit: "ms"}})
	return bestApply, nil
}

// rawCommitEach runs effect(i) and one single-row commit at FULL n times,
// on a new database at path with the store's writer pragmas, and returns
// the whole time (the database's creation not counted).
func rawCommitEach(ctx context.Context, path string, n int, effect func(i int) error) (time.Duration, error) {
	db, err := openRaw(path, "FULL")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		return 0, err
	}
	ins, err := db.PrepareContext(ctx, `INSERT INTO t (v) VALUES (?1)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	start := now()
	for i := range n {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, "row "+strconv.Itoa(i)); err != nil {
			tx.Rollback()
			return 0, err
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
		if err := effect(i); err != nil {
			return 0, err
		}
	}
	return now().Sub(start), nil
}

// applyMemScenario reads the peak RSS of `flowrun apply` of short chains
// of set steps (100 and 1,000), each a process of its own, against
// `flowrun help`'s: what start-up and a short run hold. The processes run
// a copy of the binary read back from disk (coldBinary).
func applyMemScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	c, err := coldBinary(c, dir)
	if err != nil {
		return err
	}
	_, helpRSS, err := runFlowrun(ctx, c, dir, "help")
	if err != nil {
		return err
	}
	help := Baseline{Name: "flowrun help peak RSS", Value: float64(helpRSS) * 1024 / 1e6, Unit: "MB"}
	for _, size := range []struct{ full, floor int }{{100, 20}, {1000, 50}} {
		n := c.n(size.full, size.floor)
		r.Sizes["steps_"+strconv.Itoa(n)] = n
		file := filepath.Join(dir, "noop"+strconv.Itoa(n)+".hcl")
		if err := os.WriteFile(file, []byte(setChain("noop", n)), 0o600); err != nil {
			return fmt.Errorf("writing the workflow: %w", err)
		}
		var peak int64
		for round := range floorRounds {
			db := filepath.Join(dir, "mem"+strconv.Itoa(n)+"-"+strconv.Itoa(round), "flowrun.db")
			_, rss, err := runFlowrun(ctx, c, dir, "apply", "--quiet", "--db", db, file)
			if err != nil {
				return err
			}
			if round == 0 || rss < peak {
				peak = rss
			}
		}
		// The targets are the issue's, set for 100 and 1,000 steps.
		var target *Target
		switch n {
		case 100:
			target = &Target{Of: "value", Op: "<=", Limit: 22.8}
		case 1000:
			target = &Target{Of: "value", Op: "<=", Limit: 29.8}
		}
		r.figure(Figure{Name: fmt.Sprintf("apply of %d set steps: peak RSS, least of %d", n, floorRounds),
			Value: float64(peak) * 1024 / 1e6, Unit: "MB", Baseline: &help, Target: target})
	}
	return nil
}

// httpChain is a chain of n http GET steps, each after the last, against
// baseURL/i/N.
func httpChain(name, baseURL string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %q {\n  version = \"1.0.0\"\n  limits { attempts = %d }\n", name, n+10)
	fmt.Fprintf(&b, "  step \"s0\" {\n    http { url = \"%s/i/0\" }\n  }\n", baseURL)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  step \"s%d\" {\n    depends_on = [step.s%d]\n    http { url = \"%s/i/%d\" }\n  }\n", i, i-1, baseURL, i)
	}
	b.WriteString("}\n")
	return b.String()
}
