package interp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// TestDeadLetterRetryPolicy: dlq retry runs a dead-lettered item under its
// step's retry policy, with a fresh budget: it tries again while attempts
// are left and retry.when holds, waiting the backoff on the engine clock,
// and records how many tries it took; an error that retry.when rejects is
// tried once.
func TestDeadLetterRetryPolicy(t *testing.T) {
	b := setup(t)
	dir := t.TempDir()
	// Each call appends to calls-ITEM. Without ok-ITEM it fails with exit 3
	// (not retried); with it, it fails with exit 7 (retried) until its
	// count of calls since ok-ITEM reaches the item's threshold.
	run := b.run(fmt.Sprintf(`
workflow "dl" {
  version = "1.0.0"
  input "need" { type = map(number) }
  step "process" {
    foreach {
      items       = "['a', 'b', 'c']"
      concurrency = 1
      on_failure  = "dead_letter"
    }
    exec {
      command = "cd %s; echo x >> calls-{{ item }}; test -e ok-{{ item }} || exit 3; echo x >> okcalls-{{ item }}; test $(wc -l < okcalls-{{ item }}) -ge {{ input.need[item] }} || exit 7; echo fine"
      shell   = true
    }
    retry {
      attempts   = 4
      backoff    = "2s"
      multiplier = 2
      when       = "error.exit_code == 7"
    }
  }
}`, dir), map[string]any{"need": map[string]any{"a": 3, "b": 100, "c": 1}})
	wantStatus(t, run, store.RunCompleted)
	letters, err := b.e.DeadLetterList(b.ctx, false)
	if err != nil || len(letters) != 3 {
		t.Fatalf("dead letters = %+v, %v; want 3", letters, err)
	}
	calls := func(item string) int {
		raw, _ := os.ReadFile(filepath.Join(dir, "calls-"+item))
		return strings.Count(string(raw), "x")
	}
	for _, item := range []string{"a", "b", "c"} {
		if n := calls(item); n != 1 {
			t.Fatalf("item %s was called %d times in the run, want 1 (exit 3 is not retried)", item, n)
		}
	}
	for _, item := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, "ok-"+item), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// retry drives DeadLetterRetry while advancing the engine clock
	// whenever it waits on it, and returns how far the clock moved.
	retry := func(id int64) (store.DeadLetter, time.Duration, error) {
		type result struct {
			d   store.DeadLetter
			err error
		}
		done := make(chan result, 1)
		from := b.clk.Now()
		go func() {
			d, err := b.e.DeadLetterRetry(b.ctx, id)
			done <- result{d, err}
		}()
		deadline := time.Now().Add(30 * time.Second) // safety net only
		for {
			select {
			case res := <-done:
				return res.d, b.clk.Now().Sub(from), res.err
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("dlq retry did not return")
			}
			if b.clk.Pending() > 0 {
				b.clk.Advance(500 * time.Millisecond)
			}
			time.Sleep(time.Millisecond)
		}
	}
	byItem := map[string]int64{}
	for _, d := range letters {
		byItem[strings.Trim(string(d.Item), `"`)] = d.ID
	}

	// a: exit 7, 7, then success: three tries, after 2s and 4s of backoff.
	d, moved, err := retry(byItem["a"])
	if err != nil || d.Status != store.DeadLetterRetried {
		t.Fatalf("retry of a = %s, %v; want retried", d.Status, err)
	}
	if n := calls("a"); n != 1+3 {
		t.Errorf("item a was called %d times by the retry, want 3", n-1)
	}
	if moved < 6*time.Second {
		t.Errorf("the retry of a took %s of engine time, want at least the 2s+4s backoff", moved)
	}
	ev := b.events(run.ID)
	if last := ev[len(ev)-1]; last.Kind != "dead_letter_retried" || !strings.Contains(string(last.Data), `"attempts":3`) {
		t.Errorf("last event = %s %s, want dead_letter_retried after 3 attempts", last.Kind, last.Data)
	}

	// b: exit 7 every time: the four attempts of the policy, then open.
	d, _, err = retry(byItem["b"])
	if !errors.Is(err, ErrRetryFailed) || d.Status != store.DeadLetterOpen {
		t.Fatalf("retry of b = %s, %v; want open and ErrRetryFailed", d.Status, err)
	}
	if n := calls("b"); n != 1+4 {
		t.Errorf("item b was called %d times by the retry, want the policy's 4 attempts", n-1)
	}
	ev = b.events(run.ID)
	if last := ev[len(ev)-1]; last.Kind != "dead_letter_retry_failed" || !strings.Contains(string(last.Data), `"attempts":4`) {
		t.Errorf("last event = %s %s, want dead_letter_retry_failed after 4 attempts", last.Kind, last.Data)
	}

	// c: exit 3, which retry.when rejects: one try.
	d, _, err = retry(byItem["c"])
	if !errors.Is(err, ErrRetryFailed) || d.Status != store.DeadLetterOpen {
		t.Fatalf("retry of c = %s, %v; want open and ErrRetryFailed", d.Status, err)
	}
	if n := calls("c"); n != 2 {
		t.Errorf("item c was called %d times by the retry, want 1 (retry.when is false for exit 3)", n-1)
	}
}
