package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flowrun/flowrun/api"
	"github.com/flowrun/flowrun/clock"
	"github.com/flowrun/flowrun/store"
)

// callerKey keys the caller's name in a request's context.
type callerKey struct{}

// tokenHashKey keys the hash of the caller's token in a request's
// context: a long answer (an event stream) checks it is still valid.
type tokenHashKey struct{}

// tokenRevoked reports whether the request came with a token that has
// been revoked since (false without a token, or when the store cannot
// say: the stream goes on).
func (s *Server) tokenRevoked(ctx context.Context) bool {
	h, ok := ctx.Value(tokenHashKey{}).(string)
	if !ok {
		return false
	}
	_, err := s.st.TokenLookup(ctx, h)
	return errors.Is(err, store.ErrNotFound)
}

// caller names who made the request: "token NAME", or "without auth".
func caller(ctx context.Context) string {
	if n, ok := ctx.Value(callerKey{}).(string); ok {
		return "token " + n
	}
	return "without auth"
}

// authorize checks the request's bearer token against need and the
// token's rate limit, and returns the request with the caller in its
// context.
func (s *Server) authorize(r *http.Request, need store.TokenScope) (*http.Request, error) {
	if s.opts.NoAuth {
		return r, nil
	}
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if h == "" {
		return nil, unauthorized("the request has no token; send Authorization: Bearer TOKEN (create one with: flowrun tokens create NAME)")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return nil, unauthorized("the Authorization header is not \"Bearer TOKEN\"")
	}
	t, err := s.st.TokenLookup(r.Context(), api.HashToken(strings.TrimSpace(token)))
	if errors.Is(err, store.ErrNotFound) {
		return nil, unauthorized("the token is not known or was revoked; list the tokens with: flowrun tokens list")
	}
	if err != nil {
		return nil, err
	}
	if !t.Scope.Allows(need) {
		return nil, Problemf(http.StatusForbidden, "token %q has scope %s; %s %s needs scope %s or more", t.Name, t.Scope, r.Method, r.URL.Path, need)
	}
	if wait := s.limits.take(t.Name); wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return nil, &Problem{Status: http.StatusTooManyRequests, RetryAfter: secs,
			Detail: fmt.Sprintf("token %q made more than %g requests a second; try again in %ds", t.Name, s.opts.Rate, secs)}
	}
	ctx := context.WithValue(r.Context(), callerKey{}, t.Name)
	return r.WithContext(context.WithValue(ctx, tokenHashKey{}, t.Hash)), nil
}

// unauthorized is a 401; writeProblem adds WWW-Authenticate.
func unauthorized(msg string) *Problem {
	return &Problem{Status: http.StatusUnauthorized, Detail: msg}
}

// limiter is a token bucket per API token, on the injected clock: rate
// requests a second, up to burst at once.
type limiter struct {
	clk   clock.Clock
	rate  float64
	burst float64

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(clk clock.Clock, rate float64, burst int) *limiter {
	return &limiter{clk: clk, rate: rate, burst: float64(burst), buckets: map[string]*bucket{}}
}

// take spends one request of name's bucket and returns 0, or returns how
// long until one is available (and spends nothing).
func (l *limiter) take(name string) time.Duration {
	now := l.clk.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[name]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[name] = b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(l.burst, b.tokens+d.Seconds()*l.rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}
