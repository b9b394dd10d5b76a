package main

import (
	"context"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/tui/feed"
)

// deadLetters works dead letters for the TUI through the engine (the same
// calls as flowrun dlq).
type deadLetters struct{ eng *interp.Engine }

// DeadLetterList lists the open dead letters, oldest first.
func (d deadLetters) DeadLetterList(ctx context.Context) ([]feed.DeadLetter, error) {
	ds, err := d.eng.DeadLetterList(ctx, false)
	if err != nil {
		return nil, err
	}
	out := make([]feed.DeadLetter, 0, len(ds))
	for _, x := range ds {
		out = append(out, feed.DeadLetter{ID: x.ID, RunID: x.RunID, Step: x.Step, Index: x.Index,
			Item: x.Item, Error: x.Error, CreatedAt: x.CreatedAt})
	}
	return out, nil
}

// DeadLetterRetry runs a dead letter's item once more; a failure leaves
// it open and is returned.
func (d deadLetters) DeadLetterRetry(ctx context.Context, id int64) error {
	_, err := d.eng.DeadLetterRetry(ctx, id)
	return err
}

// DeadLetterDrop closes a dead letter without running it.
func (d deadLetters) DeadLetterDrop(ctx context.Context, id int64) error {
	_, err := d.eng.DeadLetterDrop(ctx, id)
	return err
}

// breakers lists the shared breaker states for the TUI.
type breakers struct{ eng *interp.Engine }

// BreakerList returns every breaker the store knows, by name.
func (b breakers) BreakerList(ctx context.Context) ([]feed.Breaker, error) {
	bs, err := b.eng.BreakerList(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]feed.Breaker, 0, len(bs))
	for _, x := range bs {
		fb := feed.Breaker{Name: x.Name, State: string(x.State), Failures: x.Failures, OpenedAt: x.OpenedAt}
		if x.State != "closed" {
			fb.CooldownUntil = x.OpenUntil
		}
		out = append(out, fb)
	}
	return out, nil
}
