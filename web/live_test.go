package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/lang"
)

const sayHCL = `workflow "talk" {
  version = "1.0.0"
  step "say" {
    exec { command = ["sh", "-c", "echo one; echo two >&2; echo three"] }
  }
  step "hold" {
    depends_on = [step.say]
    wait { signal = "go" }
  }
}
`

type liveAnswer struct {
	Seq   int64 `json:"seq"`
	Ended bool  `json:"ended"`
	Lines []struct {
		Stream, Text string
	} `json:"lines"`
}

// A step's live output says when the step has ended, with its last lines,
// so the page stops following it; while a step has nothing to say, a
// request waits (up to 20 seconds) instead of answering "nothing" at once,
// so no page asks twice a second for ever.
func TestLiveOutputEnds(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	mod, diags := lang.LoadSources([]lang.Source{{Name: "talk.hcl", Src: []byte(sayHCL)}}, lang.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := s.door.DeployModule(ctx, mod, func(*lang.Workflow) string { return "" }); err != nil {
		t.Fatal(err)
	}
	v, _, err := s.door.Start(ctx, api.StartRequest{Workflow: "talk"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.Drive(ctx, v.RunID); err != nil {
		t.Fatal(err)
	}
	// The real clock: the old answer came after about half a second.
	srv := httptest.NewServer(New(Options{Door: s.door, Tokens: s.st.TokenLookup, NoAuth: true}))
	defer srv.Close()
	ask := func(ctx context.Context, path string) (liveAnswer, error) {
		var a liveAnswer
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return a, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s answered %d: %s", path, resp.StatusCode, body)
		}
		return a, json.Unmarshal(body, &a)
	}
	// The run waits at hold; say has ended: its lines and "ended".
	a, err := ask(ctx, "/live/runs/"+v.RunID+"/output?step=say&after=0")
	if err != nil {
		t.Fatal(err)
	}
	if !a.Ended || len(a.Lines) == 0 || a.Seq == 0 {
		t.Fatalf("the ended step's output: %+v", a)
	}
	a, err = ask(ctx, "/live/runs/"+v.RunID+"/output?step=say&after="+strconv.FormatInt(a.Seq, 10))
	if err != nil || !a.Ended || len(a.Lines) != 0 {
		t.Fatalf("after its last line, the ended step's output: %+v, %v", a, err)
	}
	// hold is waiting and has no output: the request waits.
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	if a, err := ask(short, "/live/runs/"+v.RunID+"/output?step=hold&after=0"); err == nil {
		t.Fatalf("a waiting step's output answered at once: %+v", a)
	}
	// Once the run ends, so does the following of any of its steps.
	if _, err := s.door.Cancel(ctx, v.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.eng.Drive(ctx, v.RunID); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.st.RunGet(ctx, v.RunID); err != nil || !rec.Status.Terminal() {
		t.Fatalf("the run did not end: %v %v", rec.Status, err)
	}
	if a, err := ask(ctx, "/live/runs/"+v.RunID+"/output?step=hold&after=0"); err != nil || !a.Ended {
		t.Fatalf("the ended run's step output: %+v, %v", a, err)
	}
}
