package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/termtext"
)

// The live pages ask these JSON endpoints what changed since the event id
// they last saw. Each waits on the server for the store's next event
// (api.Records.WaitEvents: at the commit that appends it) for at most
// liveWait, so a page hears of a change as it is committed, with one
// request per change.

// liveWait is the longest one wait lasts; a page then asks again.
const liveWait = 20 * time.Second

// cursorAfter reads the "after" query parameter.
func cursorAfter(r *http.Request) (int64, bool) {
	n, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	return n, err == nil && n >= 0
}

// waitNewer waits (liveWait at most) for an event after after and returns
// the newest id and whether any event after after touched run (any run
// when run is "").
func (h *Handler) waitNewer(r *http.Request, after int64, run string) (int64, bool, error) {
	return h.waitEvents(r.Context(), after, run, liveWait)
}

// waitEvents is waitNewer's wait, of at most max.
func (h *Handler) waitEvents(ctx context.Context, after int64, run string, max time.Duration) (int64, bool, error) {
	if err := h.opts.Door.WaitEvents(ctx, after, max); err != nil {
		return after, false, err
	}
	cursor, touched := after, false
	for {
		evs, err := h.opts.Door.EventList(ctx, store.EventListParams{AfterID: cursor, Limit: api.MaxRecordEvents})
		if err != nil {
			return after, false, err
		}
		for _, e := range evs {
			touched = touched || run == "" || e.RunID == run
		}
		if len(evs) > 0 {
			cursor = evs[len(evs)-1].ID
		}
		if len(evs) < api.MaxRecordEvents {
			return cursor, touched, nil
		}
	}
}

func writeLive(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}

// liveRuns answers whether any run changed after the cursor; the page
// then reads its rows again.
func (h *Handler) liveRuns(w http.ResponseWriter, r *http.Request, s *session) error {
	after, ok := cursorAfter(r)
	if !ok {
		http.Error(w, `{"error":"after must be an event id"}`, http.StatusBadRequest)
		return nil
	}
	cursor, touched, err := h.waitNewer(r, after, "")
	if err != nil {
		return err
	}
	return writeLive(w, map[string]any{"cursor": cursor, "changed": touched})
}

// liveStep is a step's state as a run's page shows it.
type liveStep struct {
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	Detail   string `json:"detail"`
}

// liveRun answers a run's status and its steps' after the cursor.
func (h *Handler) liveRun(w http.ResponseWriter, r *http.Request, s *session) error {
	after, ok := cursorAfter(r)
	if !ok {
		http.Error(w, `{"error":"after must be an event id"}`, http.StatusBadRequest)
		return nil
	}
	id := r.PathValue("id")
	cursor, touched, err := h.waitNewer(r, after, id)
	if err != nil {
		return err
	}
	out := map[string]any{"cursor": cursor, "changed": touched}
	if touched {
		v, err := h.readRun(r.Context(), id)
		if err != nil {
			return err
		}
		steps := map[string]liveStep{}
		for name, st := range v.Steps {
			steps[name] = liveStep{Status: string(st.Status), Attempts: st.Attempts, Detail: st.Detail}
		}
		out["status"], out["ended"], out["steps"] = v.Status, v.Status.Terminal(), steps
	}
	return writeLive(w, out)
}

// outputLine is a piece of a step's live output.
type outputLine struct {
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

// outputPage is how many chunks one answer of liveOutput reads at most.
const outputPage = 256

// outputPoll is how often liveOutput reads a running step's output while
// it waits: chunks are committed as a program writes, without an event,
// so only the step's end (an event) wakes the wait at its commit.
const outputPoll = 250 * time.Millisecond

// liveOutput answers the output chunks of a step key (its items' and
// iterations' too) after a chunk sequence number. It answers when there
// are lines, when the step or its run has ended ("ended": nothing more
// will come once these lines are read; the page stops following), or
// after liveWait, so a page following a step asks once per piece of
// output and at most every 20 seconds when there is none.
func (h *Handler) liveOutput(w http.ResponseWriter, r *http.Request, s *session) error {
	after, ok := cursorAfter(r)
	if !ok {
		http.Error(w, `{"error":"after must be a sequence number"}`, http.StatusBadRequest)
		return nil
	}
	key := r.URL.Query().Get("step")
	ctx := r.Context()
	id := r.PathValue("id")
	// The event cursor is read before whether the step ended, and that
	// before the chunks: the last chunks of an attempt are committed with
	// the event that ends it, so an answer that says ended holds them.
	events, err := api.LastEventID(ctx, h.opts.Door)
	if err != nil {
		return err
	}
	ended, err := h.outputEnded(ctx, id, key)
	if err != nil {
		return err
	}
	deadline := h.clk.Now().Add(liveWait)
	for {
		cs, err := h.opts.Door.StepOutputChunks(ctx, id, after, outputPage)
		if err != nil {
			return err
		}
		var lines []outputLine
		for _, c := range cs {
			after = c.Seq
			if key != "" && !api.OfStep(c.StepKey, key) {
				continue
			}
			lines = append(lines, outputLine{Stream: c.Stream, Text: termtext.Lines(string(c.Data))})
		}
		full := len(cs) == outputPage // more may be stored: not the end yet
		left := deadline.Sub(h.clk.Now())
		if len(lines) > 0 || (ended && !full) || left <= 0 {
			return writeLive(w, map[string]any{"seq": after, "lines": lines, "ended": ended && !full})
		}
		if full {
			continue // a page of other steps' output: read on
		}
		var touched bool
		if events, touched, err = h.waitEvents(ctx, events, id, min(left, outputPoll)); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if touched {
			if ended, err = h.outputEnded(ctx, id, key); err != nil {
				return err
			}
		}
	}
}

// outputEnded reports whether no more output can come for a step key: its
// run has ended, or its step has (a foreach item or until iteration
// follows its step).
func (h *Handler) outputEnded(ctx context.Context, id, key string) (bool, error) {
	run, err := h.opts.Door.RunGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil // deleted: nothing more comes
	}
	if err != nil || run.Status.Terminal() || key == "" {
		return err == nil && run.Status.Terminal(), err
	}
	name, _, _, _ := store.ParseStepKey(key)
	tops, err := h.opts.Door.StepTops(ctx, id)
	if err != nil {
		return false, err
	}
	for _, st := range tops {
		if st.Key == name {
			return st.Status.Terminal(), nil
		}
	}
	return false, nil
}
