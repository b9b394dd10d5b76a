package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/flowrun/flowrun/interp"
	"github.com/flowrun/flowrun/store"
)

// TokenKeeper manages the API's bearer tokens (flowrun tokens; scope
// admin through a server).
type TokenKeeper interface {
	// Tokens lists the tokens by name: never a token itself.
	Tokens(ctx context.Context) ([]TokenJSON, error)
	// CreateToken makes a token; its value is in the answer only.
	CreateToken(ctx context.Context, name string, scope store.TokenScope) (*CreatedToken, error)
	// RevokeToken deletes a token by name.
	RevokeToken(ctx context.Context, name string) (TokenJSON, error)
}

// tokenPrefix starts every token, so a leaked one is recognizable (secret
// scanners, logs).
const tokenPrefix = "flowrun_"

// NewToken returns a new bearer token: tokenPrefix and 32 random bytes
// from crypto/rand, base64url. Only its hash (HashToken) is stored.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("drawing a token: %w", err)
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// HashToken is what the store keeps of a token: its SHA-256, hex. A token
// is 256 random bits, so a fast hash is as safe as a slow one: there is
// no dictionary to try.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// TokenJSON is one token as `flowrun tokens list --json` prints it and
// GET /v1/tokens lists it: never the token itself.
type TokenJSON struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	CreatedAt string `json:"created_at"`
}

// CreatedToken is the answer of POST /v1/tokens: the token, shown once.
type CreatedToken struct {
	TokenJSON
	Token string `json:"token"`
}

// TokensJSON returns the JSON forms of tokens.
func TokensJSON(ts []store.Token) []TokenJSON {
	out := make([]TokenJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, TokenJSON{Name: t.Name, Scope: string(t.Scope), CreatedAt: interp.JSONTime(t.CreatedAt)})
	}
	return out
}

// TokenNameProblem says what is wrong with a token name, or "": 1 to 64
// letters, digits, '.', '_' or '-', starting with a letter or digit (it
// is shown in lists, logs and messages).
func TokenNameProblem(name string) string {
	if validTokenName(name) {
		return ""
	}
	return fmt.Sprintf("token name %q is not 1 to 64 letters, digits, '.', '_' or '-' (starting with a letter or digit)", name)
}

// validTokenName reports whether name is 1 to 64 ASCII letters, digits,
// '.', '_' or '-', the first a letter or digit. (A regular expression
// compiled at package init cost every flowrun process, serve or not.)
func validTokenName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}

// Tokens implements TokenKeeper.
func (l *Local) Tokens(ctx context.Context) ([]TokenJSON, error) {
	ts, err := l.st.TokenList(ctx)
	if err != nil {
		return nil, err
	}
	return TokensJSON(ts), nil
}

// CreateToken implements TokenKeeper.
func (l *Local) CreateToken(ctx context.Context, name string, scope store.TokenScope) (*CreatedToken, error) {
	if p := TokenNameProblem(name); p != "" {
		return nil, &Refusal{Status: http.StatusBadRequest, Field: "name", Message: p,
			Hint: "Name it with letters, digits, '.', '_' or '-', such as: flowrun tokens create ci-deploy"}
	}
	if !scope.Valid() {
		return nil, &Refusal{Status: http.StatusBadRequest, Field: "scope", Message: fmt.Sprintf("scope %q is not read, write, deploy or admin", scope),
			Hint: "Pass --scope read, write, deploy or admin."}
	}
	token, err := NewToken()
	if err != nil {
		return nil, err
	}
	t, err := l.st.TokenCreate(ctx, store.TokenCreateParams{Name: name, Scope: scope, Hash: HashToken(token), Now: l.clk.Now()})
	if errors.Is(err, store.ErrConflict) {
		return nil, &Refusal{Status: http.StatusConflict, Field: "name", Message: fmt.Sprintf("a token named %q exists", name),
			Hint: fmt.Sprintf("Pick another name, or revoke it first with: flowrun tokens revoke %s", name)}
	}
	if err != nil {
		return nil, err
	}
	return &CreatedToken{TokenJSON: TokensJSON([]store.Token{t})[0], Token: token}, nil
}

// RevokeToken implements TokenKeeper.
func (l *Local) RevokeToken(ctx context.Context, name string) (TokenJSON, error) {
	t, err := l.st.TokenRevoke(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return TokenJSON{}, &Refusal{Status: http.StatusNotFound, Message: fmt.Sprintf("no token is named %q", name),
			Hint: "List the tokens with: flowrun tokens list"}
	}
	if err != nil {
		return TokenJSON{}, err
	}
	return TokensJSON([]store.Token{t})[0], nil
}

// Tokens implements TokenKeeper.
func (c *Client) Tokens(ctx context.Context) ([]TokenJSON, error) {
	var out []TokenJSON
	return out, c.call(ctx, http.MethodGet, "/v1/tokens", nil, nil, &out)
}

// CreateToken implements TokenKeeper.
func (c *Client) CreateToken(ctx context.Context, name string, scope store.TokenScope) (*CreatedToken, error) {
	out := &CreatedToken{}
	return out, c.call(ctx, http.MethodPost, "/v1/tokens", nil, struct {
		Name  string `json:"name"`
		Scope string `json:"scope"`
	}{name, string(scope)}, out)
}

// RevokeToken implements TokenKeeper.
func (c *Client) RevokeToken(ctx context.Context, name string) (TokenJSON, error) {
	var out TokenJSON
	return out, c.call(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(name), nil, nil, &out)
}
