package store

import (
	"context"
	"time"
)

// This file holds the API's bearer tokens (flowrun serve, flowrun tokens).
// The store keeps a token's name, scope and the SHA-256 of the token, never
// the token itself: the token is 32 random bytes, so a fast hash is enough
// (there is nothing to guess from a dictionary), and a lookup is one
// indexed equality on the hash.

// TokenScope is what a token may do: read < write < deploy < admin.
type TokenScope string

// Token scopes.
const (
	ScopeRead  TokenScope = "read"
	ScopeWrite TokenScope = "write"
	// ScopeDeploy also stores workflow versions (apply --server): the
	// code a worker runs, which approvers with write need not be able to
	// change.
	ScopeDeploy TokenScope = "deploy"
	ScopeAdmin  TokenScope = "admin"
)

// Scopes are the token scopes, lowest first.
var Scopes = []TokenScope{ScopeRead, ScopeWrite, ScopeDeploy, ScopeAdmin}

// Allows reports whether a token of scope s may do what needs scope need.
func (s TokenScope) Allows(need TokenScope) bool { return s.rank() >= need.rank() && need.rank() > 0 }

func (s TokenScope) rank() int {
	switch s {
	case ScopeRead:
		return 1
	case ScopeWrite:
		return 2
	case ScopeDeploy:
		return 3
	case ScopeAdmin:
		return 4
	}
	return 0
}

// Valid reports whether s is one of the scopes.
func (s TokenScope) Valid() bool { return s.rank() > 0 }

// Token is a stored API token, without the token.
type Token struct {
	Name  string
	Scope TokenScope
	// Hash is the hex SHA-256 of the token.
	Hash      string
	CreatedAt time.Time
}

// TokenCreateParams create a token.
type TokenCreateParams struct {
	Name  string
	Scope TokenScope
	Hash  string // hex SHA-256 of the token
	Now   time.Time
}

// Tokens are the API's bearer tokens.
type Tokens interface {
	// TokenCreate stores a token; ErrConflict when a token of that name
	// exists. Nothing is written then.
	TokenCreate(ctx context.Context, p TokenCreateParams) (Token, error)
	// TokenList lists the tokens by name.
	TokenList(ctx context.Context) ([]Token, error)
	// TokenRevoke deletes the token of that name and returns it;
	// ErrNotFound when there is none.
	TokenRevoke(ctx context.Context, name string) (Token, error)
	// TokenLookup returns the token whose hash is hash; ErrNotFound when
	// none has it (unknown or revoked).
	TokenLookup(ctx context.Context, hash string) (Token, error)
	// Ready reads the store's recorded schema version: nil when it is the
	// one this binary writes, an error wrapping ErrSchemaTooNew when a
	// newer flowrun migrated it since it was opened, another error when the
	// database cannot be reached.
	Ready(ctx context.Context) error
}
