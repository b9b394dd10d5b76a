package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// The http floor scenario's server runs in a process of its own, as any
// server an http step calls does: a request from one process to another
// wakes the server's process and the client's again, where a client and a
// server in one process hand the request over inside one Go scheduler,
// several times faster than any loopback round trip `flowrun apply` can
// make. (`flowrun bench --serve-counter` is that process.)

// ServeCounter serves the counter handler on a loopback port, prints its
// URL as one line on out, and serves until in reaches its end (the
// parent closed it, or exited).
func ServeCounter(in io.Reader, out io.Writer) error {
	srv, err := serveCounter()
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(out, srv.url); err != nil {
		return errors.Join(fmt.Errorf("printing the server's URL: %w", err), srv.close())
	}
	_, _ = io.Copy(io.Discard, in)
	return srv.close()
}

// counterProc is a `flowrun bench --serve-counter` child process.
type counterProc struct {
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// serveCounterProcess starts the counter server in a child process and
// returns once it serves.
func serveCounterProcess(ctx context.Context, c Config) (*counterProc, error) {
	cmd := exec.CommandContext(ctx, c.Flowrun[0], append(slices.Clone(c.Flowrun[1:]), "bench", "--serve-counter")...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the benchmark's http server process: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the benchmark's http server process: %w", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the benchmark's http server process: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		stdin.Close()
		werr := cmd.Wait()
		return nil, fmt.Errorf("the benchmark's http server process did not start (%v, %v): %s", err, werr, stderr.String())
	}
	return &counterProc{url: strings.TrimSpace(line), cmd: cmd, stdin: stdin}, nil
}

// close ends the server process and waits for it.
func (p *counterProc) close() error {
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("the benchmark's http server process: %w", err)
	}
	return nil
}
