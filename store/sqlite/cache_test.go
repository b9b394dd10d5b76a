package sqlite

import (
	"context"
	"testing"
)

// TestConnectionCaches: every read connection has the small page cache,
// and so has the writer (not SQLite's default of 2,000 KiB).
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
	if kib != writerCacheKiB || kib < -512 {
		t.Fatalf("the writer's cache_size = %d, want %d (at most 512 KiB)", kib, writerCacheKiB)
	}
}
