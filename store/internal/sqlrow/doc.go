// Package sqlrow holds what the two SQL backends, store/sqlite and
// store/postgres, share to the letter: how values are encoded in columns
// and statement parameters, the row scanners, the parameters of a
// transition's fence, and the reading of embedded migration files.
//
// Column encodings: times are integers of unix microseconds, UTC, NULL for
// the zero time; JSON is text, NULL when empty; optional text is NULL when
// empty. The scanners are database/sql Scanners, which pgx also calls with
// the column's plain Go value (int64, string, []byte).
//
// sqlrow must not hold SQL whose dialect differs (each backend keeps its
// statements beside the code that runs them), must not open connections,
// and is internal to package store's backends.
package sqlrow
