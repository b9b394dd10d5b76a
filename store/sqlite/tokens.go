package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// TokenCreate stores an API token; store.ErrConflict when the name is
// taken (ON CONFLICT DO NOTHING: nothing is written then).
func (s *Store) TokenCreate(ctx context.Context, p store.TokenCreateParams) (store.Token, error) {
	var t store.Token
	err := s.write(ctx, fmt.Sprintf("creating token %q", p.Name), func(w *wtx) error {
		n, err := w.execN(`INSERT INTO api_tokens (`+sqlrow.TokenCols+`) VALUES (?1, ?2, ?3, ?4)
			ON CONFLICT DO NOTHING`, p.Name, string(p.Scope), p.Hash, p.Now.UnixMicro())
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("a token named %q exists: %w", p.Name, store.ErrConflict)
		}
		t, err = sqlrow.ScanToken(w.queryRow(`SELECT `+sqlrow.TokenCols+` FROM api_tokens WHERE name = ?1`, p.Name))
		return err
	})
	return t, err
}

// TokenList lists the API tokens by name.
func (s *Store) TokenList(ctx context.Context) ([]store.Token, error) {
	ts, err := readAll(ctx, s, sqlrow.ScanToken, `SELECT `+sqlrow.TokenCols+` FROM api_tokens ORDER BY name`)
	return ts, s.fail("listing tokens", err)
}

// TokenRevoke deletes the API token of that name.
func (s *Store) TokenRevoke(ctx context.Context, name string) (store.Token, error) {
	var t store.Token
	err := s.write(ctx, fmt.Sprintf("revoking token %q", name), func(w *wtx) error {
		var err error
		t, err = sqlrow.ScanToken(w.queryRow(`DELETE FROM api_tokens WHERE name = ?1 RETURNING `+sqlrow.TokenCols, name))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no token is named %q: %w", name, store.ErrNotFound)
		}
		return err
	})
	return t, err
}

// TokenLookup returns the API token with that hash.
func (s *Store) TokenLookup(ctx context.Context, hash string) (store.Token, error) {
	t, err := sqlrow.ScanToken(s.queryRow(ctx, `SELECT `+sqlrow.TokenCols+` FROM api_tokens WHERE hash = ?1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("no token has that hash: %w", store.ErrNotFound)
	}
	return t, s.fail("looking up a token", err)
}

// Ready reads the recorded schema version on a reader connection.
func (s *Store) Ready(ctx context.Context) error {
	var have int
	if err := s.queryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return s.fail("reading the schema version", err)
	}
	if err := checkVersion(s.path, have); err != nil {
		return err
	}
	if known := SchemaVersion(); have < known {
		return fmt.Errorf("%s has schema version %d, older than this flowrun's %d; open it with a command that writes to migrate it", s.path, have, known)
	}
	return nil
}
