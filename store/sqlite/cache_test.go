package sqlite

import (
	"context"
	"testing"
)

// TestConnectionCaches: every read connection has the small page cache,
// the writer SQLite's default.
func TestConnectionCaches(t *testing.T) {
	ctx := context.Background()
	s := scratch(t)
	// Hold several read connections at once so that each is asked.
	for range 3 {
		conn, err := s.r.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var kib int
		if err := conn.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&kib); err != nil {
			t.Fatal(err)
		}
		if kib != readerCacheKiB {
			t.Fatalf("a read connection's cache_size = %d, want %d", kib, readerCacheKiB)
		}
	}
	var kib int
	if err := s.w.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&kib); err != nil {
		t.Fatal(err)
	}
	if kib != -2000 {
		t.Fatalf("the writer's cache_size = %d, want SQLite's default -2000", kib)
	}
}
