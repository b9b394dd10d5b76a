package bench

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/flowrun/flowrun/clock"
)

// resumeWorkerScenario resumes runs of N completed steps the way a
// deployment does, through the binaries: `flowrun apply --detach` enqueues
// two runs, a `flowrun worker` process runs both until they park on their
// wait step, and `flowrun signal` from another process wakes one. It times
// the signal command's start to the next step's start (that step's
// started_at, written by the worker), once in the worker that ran the run
// (its graph in memory) and once in a worker started after the run parked
// (it reads and decodes the graph first, as after a reboot), against the
// wall time of `flowrun help`. The resume scenario's target (50 ms) is
// held against the in-process figure; these add the signal command's own
// process and, for the new worker, its first load of the graph.
func resumeWorkerScenario(ctx context.Context, c Config, dir string, r *Result) error {
	if len(c.Flowrun) == 0 {
		return errNoFlowrun
	}
	n := c.n(10000, 50)
	r.Sizes["completed_steps"] = n
	file := filepath.Join(dir, "long.hcl")
	if err := os.WriteFile(file, []byte(resumable("long", n)), 0o600); err != nil {
		return fmt.Errorf("writing the workflow: %w", err)
	}
	var help []time.Duration
	for range 5 {
		d, _, err := runFlowrun(ctx, c, dir, "help")
		if err != nil {
			return err
		}
		help = append(help, d)
	}
	db := filepath.Join(dir, "flowrun.db")
	for range 2 {
		if _, _, err := runFlowrun(ctx, c, dir, "apply", "--detach", "--new", "--db", db, file); err != nil {
			return err
		}
	}
	raw, err := openRaw(db, "FULL")
	if err != nil {
		return err
	}
	defer raw.Close()

	w, err := startWorker(ctx, c, dir, db)
	if err != nil {
		return err
	}
	defer w.stop()
	ids, err := waitParked(ctx, raw, 2)
	if err != nil {
		return err
	}
	warm, warmSig, err := signalAndTime(ctx, c, dir, db, raw, ids[0])
	if err != nil {
		return err
	}
	// A worker started after the run parked: it loads the graph first.
	if err := w.stop(); err != nil {
		return err
	}
	if w, err = startWorker(ctx, c, dir, db); err != nil {
		return err
	}
	defer w.stop()
	cold, coldSig, err := signalAndTime(ctx, c, dir, db, raw, ids[1])
	if err != nil {
		return err
	}
	helpB := Baseline{Name: "flowrun help (process start and exit), median", Value: ms(median(help)), Unit: "ms"}
	r.figure(Figure{Name: "signal to next step started, same worker", Value: ms(warm), Unit: "ms", Baseline: &helpB})
	r.figure(Figure{Name: "of which the signal command", Value: ms(warmSig), Unit: "ms", Baseline: &helpB})
	r.figure(Figure{Name: "signal to next step started, new worker", Value: ms(cold), Unit: "ms", Baseline: &helpB})
	r.figure(Figure{Name: "of which the signal command (new worker)", Value: ms(coldSig), Unit: "ms", Baseline: &helpB})
	return nil
}

// workerProc is a `flowrun worker` process of the scenario.
type workerProc struct {
	cmd  *exec.Cmd
	done chan error // the result of Wait
}

// startWorker starts `flowrun worker` on db and returns once it says that
// it works, and a little after, so that its first claim has found nothing
// new and it waits idle.
func startWorker(ctx context.Context, c Config, dir, db string) (*workerProc, error) {
	return startWorkerWith(ctx, c, dir, nil, "--db", db)
}

// startWorkerWith is startWorker with the worker's arguments (after the
// verb) and environment variables added to this process's.
func startWorkerWith(ctx context.Context, c Config, dir string, env []string, args ...string) (*workerProc, error) {
	cmd := exec.CommandContext(ctx, c.Flowrun[0], append(append(slices.Clone(c.Flowrun[1:]), "worker"), args...)...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting flowrun worker: %w", err)
	}
	w := &workerProc{cmd: cmd, done: make(chan error, 1)}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), `msg="working on `) { // its first log line (log/slog, text)
				said = true
				ready <- nil
			}
		}
		if !said {
			ready <- errors.New("flowrun worker ended before it said it works")
		}
		io.Copy(io.Discard, stderr)
		w.done <- cmd.Wait()
	}()
	select {
	case err := <-ready:
		if err != nil {
			w.stop()
			return nil, err
		}
	case <-wallTimer(30 * time.Second):
		w.stop()
		return nil, errors.New("flowrun worker did not say it works within 30 s")
	}
	pause(200 * time.Millisecond)
	return w, nil
}

// stop drains the worker with SIGTERM and waits for it (once).
func (w *workerProc) stop() error {
	if w.cmd == nil {
		return nil
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	err := <-w.done
	w.cmd = nil
	if err != nil {
		return fmt.Errorf("flowrun worker: %w", err)
	}
	return nil
}

// waitParked waits until n runs are parked on a signal and returns their
// ids, oldest first.
func waitParked(ctx context.Context, raw *sql.DB, n int) ([]string, error) {
	deadline := now().Add(5 * time.Minute)
	for {
		var ids []string
		rows, err := raw.QueryContext(ctx, `SELECT id FROM runs WHERE status = 'waiting' AND wait_reason = 'signal:go' ORDER BY created_at, id`)
		if err != nil {
			return nil, fmt.Errorf("reading the runs: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) >= n {
			return ids[:n], nil
		}
		if now().After(deadline) {
			return nil, fmt.Errorf("%d of %d runs parked on their signal after 5 minutes", len(ids), n)
		}
		pause(10 * time.Millisecond)
	}
}

// signalAndTime runs `flowrun signal RUN go` and returns the time from its
// start to the start of the run's step "next" (its started_at) and the
// signal command's own wall time.
func signalAndTime(ctx context.Context, c Config, dir, db string, raw *sql.DB, id string) (time.Duration, time.Duration, error) {
	start := now()
	took, _, err := runFlowrun(ctx, c, dir, "signal", "--db", db, id, "go")
	if err != nil {
		return 0, 0, err
	}
	deadline := now().Add(time.Minute)
	for {
		var at sql.NullInt64
		err := raw.QueryRowContext(ctx, `SELECT started_at FROM steps WHERE run_id = ?1 AND key = 'next'`, id).Scan(&at)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, 0, fmt.Errorf("reading the step: %w", err)
		}
		if at.Valid {
			return time.UnixMicro(at.Int64).Sub(start), took, nil
		}
		if now().After(deadline) {
			return 0, 0, fmt.Errorf("run %s: its next step did not start within a minute of the signal", id)
		}
		pause(time.Millisecond)
	}
}

// wallTimer fires after d on the wall clock (the bench measures real time).
func wallTimer(d time.Duration) <-chan time.Time { return clock.Real{}.NewTimer(d).C() }

// pause waits d on the wall clock.
func pause(d time.Duration) { <-wallTimer(d) }
