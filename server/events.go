package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// How a stream follows its run: it reads the store again at each commit
// the store tells of (store.WorkWaiter), at most every streamGap, and
// every streamEvery when it tells of none; it writes a comment line every
// streamKeepAlive of silence so proxies keep the connection.
const (
	streamGap       = 5 * time.Millisecond
	streamEvery     = 200 * time.Millisecond
	streamKeepAlive = 15 * time.Second
	streamPage      = 500
)

// runEvents answers GET /v1/runs/{id}/events as Server-Sent Events: every
// event of the run after Last-Event-ID (or the query's after; from the
// first without either), each with its store sequence as the SSE id, its
// kind as the SSE event and interp.EventJSON as the data; live until the
// run ends, then an "end" event with the run's status. A stream the
// server ends (a graceful stop) just closes: the client reconnects with
// Last-Event-ID and misses nothing.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "after")
	if err != nil {
		return err
	}
	after, err := lastEventID(r, q.Get("after"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	run, err := s.findRun(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()

	// A graceful stop (CloseStreams) ends the stream.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(s.streams, stop)()
	quiet := s.clk.Now()
	for {
		// The status is read before the events: when it is final, every
		// event of the run is already stored and the page below reads it.
		head, err := s.st.RunGetHead(ctx, run.ID)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return s.endStream(w, rc, "error", map[string]string{"message": err.Error()})
		}
		for {
			evs, err := s.st.EventList(ctx, store.EventListParams{RunID: run.ID, AfterID: after, Limit: streamPage})
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return s.endStream(w, rc, "error", map[string]string{"message": err.Error()})
			}
			for _, ev := range evs {
				b, err := json.Marshal(interp.EventOf(ev))
				if err != nil {
					return s.endStream(w, rc, "error", map[string]string{"message": err.Error()})
				}
				if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Kind, b); err != nil {
					return nil // the client is gone
				}
				after = ev.ID
			}
			if len(evs) > 0 {
				quiet = s.clk.Now()
				if rc.Flush() != nil {
					return nil
				}
			}
			if len(evs) < streamPage {
				break
			}
		}
		if head.Status.Terminal() {
			return s.endStream(w, rc, "end", map[string]string{"run_id": run.ID, "status": string(head.Status)})
		}
		if s.clk.Now().Sub(quiet) >= streamKeepAlive {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return nil
			}
			quiet = s.clk.Now()
		}
		if interp.WaitForChange(ctx, s.clk, s.st, streamGap, streamEvery) != nil {
			return nil
		}
	}
}

// endStream writes the last event of a stream (no id: a client that
// reconnects resumes after the last run event).
func (s *Server) endStream(w http.ResponseWriter, rc *http.ResponseController, kind string, data any) error {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b)
	_ = rc.Flush()
	return nil
}

// lastEventID reads where a stream resumes: the Last-Event-ID header a
// reconnecting EventSource sends, else the query's after; 0 for the
// start.
func lastEventID(r *http.Request, after string) (int64, error) {
	field, v := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if v == "" {
		field, v = "after", after
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, &Problem{Status: http.StatusBadRequest, Field: field, Detail: fmt.Sprintf("%s %q is not an event id (a whole number of 0 or more)", field, v)}
	}
	return n, nil
}
