package postgres

import (
	"context"
	"fmt"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// TokenCreate stores an API token; store.ErrConflict when the name is
// taken (ON CONFLICT DO NOTHING: nothing is written then).
func (s *Store) TokenCreate(ctx context.Context, p store.TokenCreateParams) (store.Token, error) {
	t, err := one(ctx, s.pool, sqlrow.ScanToken, `INSERT INTO api_tokens (`+sqlrow.TokenCols+`) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING RETURNING `+sqlrow.TokenCols, p.Name, string(p.Scope), p.Hash, p.Now.UnixMicro())
	if noRows(err) {
		return t, fmt.Errorf("creating token %q: a token named %q exists: %w", p.Name, p.Name, store.ErrConflict)
	}
	return t, s.fail(fmt.Sprintf("creating token %q", p.Name), err)
}

// TokenList lists the API tokens by name.
func (s *Store) TokenList(ctx context.Context) ([]store.Token, error) {
	ts, err := all(ctx, s.pool, sqlrow.ScanToken, `SELECT `+sqlrow.TokenCols+` FROM api_tokens ORDER BY name`)
	return ts, s.fail("listing tokens", err)
}

// TokenRevoke deletes the API token of that name.
func (s *Store) TokenRevoke(ctx context.Context, name string) (store.Token, error) {
	t, err := one(ctx, s.pool, sqlrow.ScanToken, `DELETE FROM api_tokens WHERE name = $1 RETURNING `+sqlrow.TokenCols, name)
	if noRows(err) {
		return t, fmt.Errorf("revoking token %q: no token is named %q: %w", name, name, store.ErrNotFound)
	}
	return t, s.fail(fmt.Sprintf("revoking token %q", name), err)
}

// TokenLookup returns the API token with that hash.
func (s *Store) TokenLookup(ctx context.Context, hash string) (store.Token, error) {
	t, err := one(ctx, s.pool, sqlrow.ScanToken, `SELECT `+sqlrow.TokenCols+` FROM api_tokens WHERE hash = $1`, hash)
	if noRows(err) {
		return t, fmt.Errorf("no token has that hash: %w", store.ErrNotFound)
	}
	return t, s.fail("looking up a token", err)
}

// Ready reads the recorded schema version.
func (s *Store) Ready(ctx context.Context) error {
	st, err := readSchema(ctx, s.pool)
	if err != nil {
		return s.fail("reading the schema version", s.schemaErr(st, err))
	}
	if err := s.checkVersion(st); err != nil {
		return err
	}
	if known := SchemaVersion(); st.version < known {
		return fmt.Errorf("schema %s of %s has schema version %d, older than this flowrun's %d; open it with a command that writes to migrate it", st.schema, s.addr, st.version, known)
	}
	return nil
}
