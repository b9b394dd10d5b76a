package cli

import (
	"bytes"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// batcherRunning reports whether a tracer's batching goroutine is running.
func batcherRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "tracing.(*batcher).loop")
}

// TestTracerClosedOnUsageErrors: worker and serve refusing an address
// after the tracer was opened close it: no batching goroutine outlives
// the command.
func TestTracerClosedOnUsageErrors(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	db := filepath.Join(t.TempDir(), "flowrun.db")
	for _, args := range [][]string{
		{"worker", "--db", db, "--metrics", busy.Addr().String()},
		{"worker", "--db", db, "--metrics", "no-port"},
		{"serve", "--db", db, "--listen", busy.Addr().String()},
	} {
		var stderr bytes.Buffer
		if code := Main(args, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != ExitInvalid {
			t.Fatalf("%v: exit %d, want %d: %s", args, code, ExitInvalid, stderr.String())
		}
		deadline := time.Now().Add(2 * time.Second)
		for batcherRunning() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if batcherRunning() {
			t.Errorf("%v: the tracer's goroutine outlived the command (%s)", args, strings.TrimSpace(stderr.String()))
		}
	}
}
