package sqlite

import "github.com/flowrun/flowrun/store"

// The capabilities this backend has beyond store.Store (see package store).
var (
	_ store.Store             = (*Store)(nil)
	_ store.TransitionClaimer = (*Store)(nil)
	_ store.CancelPoller      = (*Store)(nil)
	_ store.WorkWaiter        = (*Store)(nil)
)
