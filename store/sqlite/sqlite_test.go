package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/sqlite"
	"github.com/flowrun/flowrun/store/storetest"
)

// openTemp opens a store on a new file in a temporary directory.
func openTemp(t testing.TB, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "flowrun.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, sqlite.Options{}) })
}

// TestConformanceShared runs the cases of two handles on one file.
func TestConformanceShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (store.Store, store.Store) {
		path := filepath.Join(t.TempDir(), "flowrun.db")
		open := func() store.Store {
			s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		return open(), open()
	})
}
