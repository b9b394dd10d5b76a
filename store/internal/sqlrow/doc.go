// Package sqlrow holds what the two SQL backends, store/sqlite and
// store/postgres, share to the letter: how values are encoded in columns
// and statement parameters (a version's step count, a breaker event's
// data, a canceled run's error among them), the row scanners and their
// column lists, the parameters of a transition's fence, the reading of
// embedded migration files (and the newest version among them), and the
// loop of a schedule fire batch (FireBatch), which reaches the backend's
// transaction through the FireTx interface.
//
// Column encodings: times are integers of unix microseconds, UTC, NULL for
// the zero time; JSON is text, NULL when empty; optional text is NULL when
// empty. The scanners are database/sql Scanners, which pgx also calls with
// the column's plain Go value (int64, string, []byte).
//
// sqlrow must not hold SQL whose dialect differs (each backend keeps its
// statements beside the code that runs them; the column lists are the same
// in both), must not open connections or begin transactions (FireBatch
// runs inside the backend's), and is internal to package store's backends.
package sqlrow
