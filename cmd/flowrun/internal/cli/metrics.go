package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/telemetry/metrics"
)

// newMetrics returns the Prometheus metrics of a process working on st:
// the engine reports into them (Options.Observer), and each scrape reads
// the due runs, the breakers, the open dead letters and the live workers
// from st.
func (e *env) newMetrics(st store.Store) *metrics.Metrics {
	return metrics.New(metrics.Options{
		Now: e.clock.Now,
		Read: func(ctx context.Context) (metrics.Snapshot, error) {
			var s metrics.Snapshot
			q, err := st.RunQueue(ctx, e.clock.Now())
			if err != nil {
				return s, err
			}
			s.Due, s.OldestDue = q.Due, q.Oldest
			bs, err := st.BreakerList(ctx)
			if err != nil {
				return s, err
			}
			s.Breakers = make(map[string]string, len(bs))
			for _, b := range bs {
				s.Breakers[b.Name] = string(b.State)
			}
			if s.OpenDeadLetters, err = st.DeadLetterOpenCount(ctx); err != nil {
				return s, err
			}
			ws, err := st.WorkerList(ctx, e.clock.Now())
			if err != nil {
				return s, err
			}
			for _, w := range ws {
				if w.Live {
					s.LiveWorkers++
				}
			}
			return s, nil
		},
	})
}

// checkListenAddr refuses a --metrics address that is not HOST:PORT.
func checkListenAddr(flagName, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usageErrorf("%s %q is not an address to listen on: %v", flagName, addr, err).
			hint(fmt.Sprintf("Pass %s HOST:PORT, such as %s 127.0.0.1:9464.", flagName, flagName))
	}
	return nil
}

// metricsServer serves /metrics on a listener until it is closed.
type metricsServer struct {
	srv  *http.Server
	ln   net.Listener
	wg   sync.WaitGroup
	addr string
}

// listenMetrics listens on addr (before the store is opened, so a busy
// port writes nothing) and returns the server, not yet serving.
func listenMetrics(flagName, addr string) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErrorf("%s: cannot listen on %s: %v", flagName, addr, err).
			hint("Pass a free port, or stop what listens on it.")
	}
	return &metricsServer{ln: ln, addr: ln.Addr().String()}, nil
}

// serve serves h at /metrics in the background; close stops it.
func (s *metricsServer) serve(h http.Handler) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	s.srv = &http.Server{Handler: mux}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return // the listener failed: nothing serves metrics now
		}
	}()
}

// close stops serving and waits for the server's goroutine.
func (s *metricsServer) close() {
	if s.srv != nil {
		_ = s.srv.Close()
	} else {
		_ = s.ln.Close()
	}
	s.wg.Wait()
}
