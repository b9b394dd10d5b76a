package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
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

// waitNewer waits for an event after after and returns the newest id and
// whether any event after after touched run (any run when run is "").
func (h *Handler) waitNewer(r *http.Request, after int64, run string) (int64, bool, error) {
	ctx := r.Context()
	if err := h.opts.Door.WaitEvents(ctx, after, liveWait); err != nil {
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

// liveOutput answers the output chunks of a step key (its items' and
// iterations' too) after a chunk sequence number; with none yet it waits
// a little, so a page following a running step asks about twice a second.
func (h *Handler) liveOutput(w http.ResponseWriter, r *http.Request, s *session) error {
	after, ok := cursorAfter(r)
	if !ok {
		http.Error(w, `{"error":"after must be a sequence number"}`, http.StatusBadRequest)
		return nil
	}
	key := r.URL.Query().Get("step")
	ctx := r.Context()
	id := r.PathValue("id")
	for wait := 0; ; wait++ {
		cs, err := h.opts.Door.StepOutputChunks(ctx, id, after, 256)
		if err != nil {
			return err
		}
		var lines []outputLine
		seq := after
		for _, c := range cs {
			seq = c.Seq
			if key != "" && c.StepKey != key && !strings.HasPrefix(c.StepKey, key+"[") && !strings.HasPrefix(c.StepKey, key+"#") {
				continue
			}
			lines = append(lines, outputLine{Stream: c.Stream, Text: termtext.Lines(string(c.Data))})
		}
		if len(cs) > 0 || wait == 3 {
			return writeLive(w, map[string]any{"seq": seq, "lines": lines})
		}
		t := h.clk.NewTimer(150 * time.Millisecond)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}
