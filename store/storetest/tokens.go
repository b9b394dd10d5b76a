package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

func testTokens(t *testing.T, newStore func(t *testing.T) store.Store) {
	parallel(t, "create list lookup revoke", newStore, func(t *testing.T, f *fixture) {
		if ts, err := f.s.TokenList(f.ctx); err != nil || len(ts) != 0 {
			t.Fatalf("TokenList of a new store = %v, %v; want none", ts, err)
		}
		ci, err := f.s.TokenCreate(f.ctx, store.TokenCreateParams{Name: "ci", Scope: store.ScopeWrite, Hash: "aa11", Now: at(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		want := store.Token{Name: "ci", Scope: store.ScopeWrite, Hash: "aa11", CreatedAt: at(time.Second)}
		if ci != want {
			t.Fatalf("TokenCreate = %+v, want %+v", ci, want)
		}
		if _, err := f.s.TokenCreate(f.ctx, store.TokenCreateParams{Name: "admin", Scope: store.ScopeAdmin, Hash: "bb22", Now: at(2 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		// The same name again is a conflict and changes nothing.
		_, err = f.s.TokenCreate(f.ctx, store.TokenCreateParams{Name: "ci", Scope: store.ScopeRead, Hash: "cc33", Now: at(3 * time.Second)})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("TokenCreate of a taken name: %v, want ErrConflict", err)
		}
		ts, err := f.s.TokenList(f.ctx)
		if err != nil || len(ts) != 2 || ts[0].Name != "admin" || ts[1] != want {
			t.Fatalf("TokenList = %+v, %v; want admin, then ci unchanged", ts, err)
		}
		got, err := f.s.TokenLookup(f.ctx, "aa11")
		if err != nil || got != want {
			t.Fatalf("TokenLookup(aa11) = %+v, %v; want %+v", got, err, want)
		}
		if _, err := f.s.TokenLookup(f.ctx, "cc33"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("TokenLookup of the refused token's hash: %v, want ErrNotFound", err)
		}
		rev, err := f.s.TokenRevoke(f.ctx, "ci")
		if err != nil || rev != want {
			t.Fatalf("TokenRevoke(ci) = %+v, %v; want %+v", rev, err, want)
		}
		if _, err := f.s.TokenLookup(f.ctx, "aa11"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("TokenLookup of a revoked token: %v, want ErrNotFound", err)
		}
		if _, err := f.s.TokenRevoke(f.ctx, "ci"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("TokenRevoke twice: %v, want ErrNotFound", err)
		}
		// Every scope is stored, deploy included.
		for i, sc := range store.Scopes {
			name, hash := "scope-"+string(sc), fmt.Sprintf("ee%02d", i)
			if _, err := f.s.TokenCreate(f.ctx, store.TokenCreateParams{Name: name, Scope: sc, Hash: hash, Now: at(5 * time.Second)}); err != nil {
				t.Fatalf("TokenCreate with scope %s: %v", sc, err)
			}
			if got, err := f.s.TokenLookup(f.ctx, hash); err != nil || got.Scope != sc {
				t.Fatalf("TokenLookup of a %s token = %+v, %v", sc, got, err)
			}
		}
		// A revoked name may be used again.
		if _, err := f.s.TokenCreate(f.ctx, store.TokenCreateParams{Name: "ci", Scope: store.ScopeRead, Hash: "dd44", Now: at(4 * time.Second)}); err != nil {
			t.Fatalf("TokenCreate of a revoked name: %v", err)
		}
	})
	parallel(t, "ready", newStore, func(t *testing.T, f *fixture) {
		if err := f.s.Ready(f.ctx); err != nil {
			t.Fatalf("Ready of a migrated store: %v", err)
		}
	})
}
