package api

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
)

// LastEventID finds the newest event's id (0: none) without reading the
// history: an exponential then binary search on "is there an event after
// id?", each probe one indexed row.
func LastEventID(ctx context.Context, r Records) (int64, error) {
	after := func(id int64) (bool, error) {
		evs, err := r.EventList(ctx, store.EventListParams{AfterID: id, Limit: 1})
		if err != nil {
			return false, fmt.Errorf("reading events: %w", err)
		}
		return len(evs) > 0, nil
	}
	// f(x) = "an event with id > x exists" is true below the newest id and
	// false from it on; the newest id is the smallest x where f is false.
	more, err := after(0)
	if err != nil || !more {
		return 0, err
	}
	lo, hi := int64(0), int64(1024) // invariant: f(lo) true, f(hi) unknown then false
	for {
		if more, err = after(hi); err != nil {
			return 0, err
		}
		if !more {
			break
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if more, err = after(mid); err != nil {
			return 0, err
		}
		if more {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}
