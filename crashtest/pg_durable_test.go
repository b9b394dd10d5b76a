package crashtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCheckDurable: the crash proofs accept the durable server of
// scripts/pg start --durable and refuse the fast one of scripts/pg start,
// naming each setting that makes it lose acknowledged commits.
func TestCheckDurable(t *testing.T) {
	for _, c := range []struct {
		env  string
		want []string // settings the error names; none for a durable server
	}{
		{durableEnv, nil},
		{"FLOWRUN_TEST_PG", []string{"fsync", "synchronous_commit", "full_page_writes"}},
	} {
		t.Run(c.env, func(t *testing.T) {
			dsn := os.Getenv(c.env)
			if dsn == "" {
				t.Skipf("needs %s (scripts/test starts both of scripts/pg's servers)", c.env)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			err = checkDurable(ctx, conn)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("checkDurable: %v, want nil for the durable server", err)
				}
				return
			}
			if err == nil {
				t.Fatal("checkDurable accepted scripts/pg's fast server")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("checkDurable: %v; want it to name %s", err, w)
				}
			}
		})
	}
}
