package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// DeadLetterWorker works the dead letters (flowrun dlq).
type DeadLetterWorker interface {
	// DeadLetters lists the open dead letters, oldest first; all adds
	// the closed ones (with their status).
	DeadLetters(ctx context.Context, all bool) ([]interp.DeadLetterJSON, error)
	// RetryDeadLetter runs a letter's item again where the service runs
	// (on a server: in the server's process); an item that fails again
	// is not an error: Retried is false and Message says why.
	RetryDeadLetter(ctx context.Context, id int64) (*DeadLetterRetry, error)
	// DropDeadLetter closes a letter without running it.
	DropDeadLetter(ctx context.Context, id int64) (interp.DeadLetterJSON, error)
}

// DeadLetterRetry is what a retry of a dead letter did: the answer of
// POST /v1/dead-letters/{id}/retry.
type DeadLetterRetry struct {
	// Letter is the letter after the retry (its status, as dlq list
	// --all shows it).
	Letter interp.DeadLetterJSON `json:"letter"`
	// Retried says the item succeeded and the letter is closed; when it
	// failed again, Message says how (the letter stays open).
	Retried bool   `json:"retried"`
	Message string `json:"message"`
}

// deadLetterRefusal words an unknown or closed letter.
func deadLetterRefusal(err error) error {
	status := http.StatusConflict
	if errors.Is(err, store.ErrNotFound) {
		status = http.StatusNotFound
	}
	return &Refusal{Status: status, Message: trimSentinel(err), Hint: "List the open dead letters with: flowrun dlq list"}
}

// letterJSON is the JSON form of one letter, with its status.
func letterJSON(d store.DeadLetter) interp.DeadLetterJSON {
	return interp.DeadLetters([]store.DeadLetter{d}, true)[0]
}

// DeadLetters implements DeadLetterWorker.
func (l *Local) DeadLetters(ctx context.Context, all bool) ([]interp.DeadLetterJSON, error) {
	ds, err := l.eng.DeadLetterList(ctx, all)
	if err != nil {
		return nil, err
	}
	return interp.DeadLetters(ds, all), nil
}

// RetryDeadLetter implements DeadLetterWorker.
func (l *Local) RetryDeadLetter(ctx context.Context, id int64) (*DeadLetterRetry, error) {
	d, err := l.eng.DeadLetterRetry(ctx, id)
	switch {
	case errors.As(err, new(*store.LetterHeldError)):
		return nil, err // another process retries it: the caller words it
	case errors.Is(err, interp.ErrRetryFailed):
		cur, gerr := l.st.DeadLetterGet(ctx, id)
		if gerr != nil {
			return nil, gerr
		}
		return &DeadLetterRetry{Letter: letterJSON(cur), Message: trimSentinel(err)}, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict):
		return nil, deadLetterRefusal(err)
	case err != nil:
		return nil, err
	}
	return &DeadLetterRetry{Letter: letterJSON(d), Retried: true}, nil
}

// DropDeadLetter implements DeadLetterWorker.
func (l *Local) DropDeadLetter(ctx context.Context, id int64) (interp.DeadLetterJSON, error) {
	d, err := l.eng.DeadLetterDrop(ctx, id)
	switch {
	case errors.As(err, new(*store.LetterHeldError)):
		return interp.DeadLetterJSON{}, err
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict):
		return interp.DeadLetterJSON{}, deadLetterRefusal(err)
	case err != nil:
		return interp.DeadLetterJSON{}, err
	}
	return letterJSON(d), nil
}

// DeadLetters implements DeadLetterWorker.
func (c *Client) DeadLetters(ctx context.Context, all bool) ([]interp.DeadLetterJSON, error) {
	var out []interp.DeadLetterJSON
	q := url.Values{}
	if all {
		q.Set("all", "true")
	}
	if err := c.call(ctx, http.MethodGet, "/v1/dead-letters", q, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// RetryDeadLetter implements DeadLetterWorker.
func (c *Client) RetryDeadLetter(ctx context.Context, id int64) (*DeadLetterRetry, error) {
	out := &DeadLetterRetry{}
	if err := c.call(ctx, http.MethodPost, fmt.Sprintf("/v1/dead-letters/%d/retry", id), nil, struct{}{}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DropDeadLetter implements DeadLetterWorker.
func (c *Client) DropDeadLetter(ctx context.Context, id int64) (interp.DeadLetterJSON, error) {
	var out interp.DeadLetterJSON
	err := c.call(ctx, http.MethodPost, "/v1/dead-letters/"+strconv.FormatInt(id, 10)+"/drop", nil, struct{}{}, &out)
	return out, err
}
