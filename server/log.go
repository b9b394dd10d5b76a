package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/flowrun/flowrun/api"
)

// runLog answers GET /v1/runs/{id}/log: the run's log as flowrun logs
// --json prints it, one JSON object per line (application/x-ndjson), then
// {"type":"end"}; with follow=true, live until the run ends. step and
// output=true filter as logs --step and --output do. A failure after the
// answer began ends it with {"type":"error","message":...} (the message
// names a request id in the server's log).
func (s *Server) runLog(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "step", "output", "follow")
	if err != nil {
		return err
	}
	lq := api.LogQuery{Step: q.Get("step")}
	for name, dst := range map[string]*bool{"output": &lq.OutputOnly, "follow": &lq.Follow} {
		if v := q.Get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return &Problem{Status: http.StatusBadRequest, Field: name, Detail: fmt.Sprintf("%s %q is not true or false", name, v)}
			}
			*dst = b
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// A graceful stop (CloseStreams) ends it, and so does revoking its
	// token: it is checked again every tokenRecheck.
	defer context.AfterFunc(s.streams, cancel)()
	var revoked atomic.Bool
	if lq.Follow {
		done := make(chan struct{})
		defer close(done)
		go func() { // owned by runLog, which closes done as it returns
			for {
				t := s.clk.NewTimer(tokenRecheck)
				select {
				case <-done:
					t.Stop()
					return
				case <-t.C():
					if s.tokenRevoked(ctx) {
						revoked.Store(true)
						cancel()
						return
					}
				}
			}
		}()
	}
	rc := http.NewResponseController(w)
	started := false
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	start := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Cache-Control", "no-cache")
			w.Header().Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
	}
	err = s.door.Log(ctx, r.PathValue("id"), lq, func(e api.LogEntry) error {
		start()
		if err := enc.Encode(e); err != nil {
			return err // the client is gone
		}
		if lq.Follow {
			return rc.Flush()
		}
		return nil
	})
	switch {
	case err != nil && !started:
		return err // answered as a problem
	case revoked.Load():
		start()
		_ = enc.Encode(api.LogErrorLine(http.StatusUnauthorized, "the token of this stream was revoked"))
		return nil
	case r.Context().Err() != nil:
		return nil // the client is gone
	case ctx.Err() != nil:
		start()
		_ = enc.Encode(api.LogErrorLine(http.StatusServiceUnavailable, "the server is stopping; follow the run again"))
		return nil
	case err != nil:
		_ = enc.Encode(api.LogErrorLine(http.StatusInternalServerError, s.streamFault(r, err)))
		return nil
	}
	start()
	_ = enc.Encode(api.LogEndLine())
	_ = rc.Flush()
	return nil
}
