package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flowrun/flowrun/store"
)

// findRun opens the store without creating it and resolves a run id or a
// unique prefix of one. An unknown or ambiguous id is bad input (exit 2).
func (e *env) findRun(ctx context.Context, idOrPrefix string) (store.Store, store.Run, error) {
	if idOrPrefix == "" {
		return nil, store.Run{}, usageErrorf("the run id is empty").
			hint("Name a run by its id or a unique prefix of it; list runs with: flowrun runs")
	}
	st, err := e.openStore(ctx, false)
	if errors.Is(err, errNoDatabase) {
		return nil, store.Run{}, e.noDatabase(fmt.Sprintf("no run has an id starting with %q", idOrPrefix))
	}
	if err != nil {
		return nil, store.Run{}, err
	}
	run, err := st.RunFind(ctx, idOrPrefix)
	if canon := canonicalRunID(idOrPrefix); errors.Is(err, store.ErrNotFound) && canon != idOrPrefix {
		// Run ids are ULIDs, whose Crockford base32 reads the same in
		// either case and takes I and L for 1, O for 0.
		run, err = st.RunFind(ctx, canon)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, store.Run{}, usageErrorf("no run has an id starting with %q", idOrPrefix).
			hint("List the runs with: flowrun runs")
	case errors.Is(err, store.ErrAmbiguous):
		return nil, store.Run{}, usageErrorf("%q is the start of more than one run id", idOrPrefix).
			hint("Give more characters of the id; list the runs with: flowrun runs")
	case err != nil:
		return nil, store.Run{}, storeError(fmt.Sprintf("finding run %q", idOrPrefix), err)
	}
	return st, run, nil
}

// canonicalRunID is a run id (or a prefix) as a ULID writes it: Crockford
// base32 in upper case, with the letters people mistake for digits (I and
// L for 1, O for 0) read as those digits. A string that is not base32 is
// returned as it is.
func canonicalRunID(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		switch c {
		case 'I', 'L':
			b[i] = '1'
		case 'O':
			b[i] = '0'
		default:
			if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') || c == 'U' {
				return s
			}
		}
	}
	return string(b)
}

// oneRunArg checks that a verb got exactly the RUN argument (and extra
// positional arguments when want > 1).
func oneRunArg(verb string, args []string, want int, usage string) error {
	if len(args) != want {
		return usageErrorf("%s takes %s, got %s", verb, usage, plural(len(args), "argument", "arguments")).
			hint(fmt.Sprintf("Run `flowrun %s -h` for its usage.", verb))
	}
	return nil
}
