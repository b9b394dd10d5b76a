package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/store"
)

// How a run is followed: its feed (feed.go, one for all the run's
// streams) reads the store again at each commit the store tells of
// (Server.watchCommits), at most every streamGap, and every streamEvery
// anyway; a stream writes a comment line every streamKeepAlive
// of silence so proxies keep the connection.
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
	f := s.joinFeed(run.ID)
	defer s.leaveFeed(f)
	quiet := s.clk.Now()
	for {
		evs, held, read, status, changed, ferr := f.next(after)
		switch {
		case !read:
			// the feed's first read is not done
		case ferr != nil:
			return s.endStream(w, rc, "error", map[string]string{"message": s.streamFault(r, ferr)})
		case !held:
			// the feed no longer holds the events after this stream's
			// place: read them from the store, a page at a time
			page, err := s.st.EventList(ctx, store.EventListParams{RunID: run.ID, AfterID: after, Limit: streamPage})
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return s.endStream(w, rc, "error", map[string]string{"message": s.streamFault(r, err)})
			}
			if len(page) == 0 {
				break
			}
			frames := make([]frame, 0, len(page))
			for _, ev := range page {
				fr, err := frameOf(ev)
				if err != nil {
					return s.endStream(w, rc, "error", map[string]string{"message": s.streamFault(r, err)})
				}
				frames = append(frames, fr)
			}
			if !writeFrames(w, rc, frames, &after) {
				return nil
			}
			continue
		default:
			if len(evs) > 0 {
				if !writeFrames(w, rc, evs, &after) {
					return nil
				}
				quiet = s.clk.Now()
			}
			if status.Terminal() {
				return s.endStream(w, rc, "end", map[string]string{"run_id": run.ID, "status": string(status)})
			}
		}
		keepAlive := s.clk.NewTimer(max(0, streamKeepAlive-s.clk.Now().Sub(quiet)))
		// The token is checked again every tokenRecheck: revoking it ends
		// its open streams within that.
		recheck := s.clk.NewTimer(tokenRecheck)
		select {
		case <-changed:
		case <-ctx.Done():
			keepAlive.Stop()
			recheck.Stop()
			return nil
		case <-keepAlive.C():
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				recheck.Stop()
				return nil
			}
			quiet = s.clk.Now()
		case <-recheck.C():
			if s.tokenRevoked(ctx) {
				keepAlive.Stop()
				return s.endStream(w, rc, "error", map[string]string{"message": "the token of this stream was revoked"})
			}
		}
		keepAlive.Stop()
		recheck.Stop()
	}
}

// tokenRecheck is how often an event stream checks that its token was
// not revoked.
const tokenRecheck = time.Second

// writeFrames writes events to a stream and flushes it, moving *after
// to the last; false when the client is gone.
func writeFrames(w http.ResponseWriter, rc *http.ResponseController, frames []frame, after *int64) bool {
	for _, fr := range frames {
		if _, err := w.Write(fr.text); err != nil {
			return false // the client is gone
		}
		*after = fr.id
	}
	return rc.Flush() == nil
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
