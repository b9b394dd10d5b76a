package sqlite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowrun/flowrun/store"
)

// writeStmts returns the statements prepared on the writer.
func writeStmts(s *Store) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for k, st := range s.stmts {
		if k.write {
			out[k.query] = st
		}
	}
	return out
}

// TestOnlyRunHotStatementsArePrepared: opening a store prepares no write
// statement; a hot statement a transaction ran is prepared on the writer
// before the next write transaction and reused from then on; hot
// statements nobody ran (the claims, the other multi-row variants) are
// never prepared.
func TestOnlyRunHotStatementsArePrepared(t *testing.T) {
	ctx := context.Background()
	s := scratch(t)
	if got := writeStmts(s); len(got) != 0 {
		t.Fatalf("Open prepared %d write statements, want none", len(got))
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	insert := func(id string, events int) {
		t.Helper()
		p := store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h", Key: id, Now: now}
		for range events {
			p.Events = append(p.Events, store.EventWrite{Kind: "run_created"})
		}
		if _, err := s.RunInsert(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	insert("run-a", 1)
	if got := writeStmts(s); len(got) != 0 {
		t.Fatalf("a transaction's statements were prepared on the writer while it ran or right after: %d", len(got))
	}
	insert("run-b", 3)
	first := writeStmts(s)
	for _, q := range []string{insertRunSQL, insertEventSQL, selectRunSQL} {
		if first[q] == nil {
			t.Errorf("%s was run by the first write but not prepared on the writer before the second", firstLine(q))
		}
	}
	insert("run-c", 3)
	second := writeStmts(s)
	if second[insertEventsSQL.get(3)] == nil {
		t.Errorf("the 3-event insert was run but is not prepared on the writer")
	}
	for q, st := range first {
		if second[q] != st {
			t.Errorf("%s was prepared again", firstLine(q))
		}
	}
	for q := range second {
		if !isHot(q) {
			t.Errorf("%s is not hot but stays prepared on the writer", firstLine(q))
		}
	}
	for _, q := range []string{claimAnySQL, fenceSQL, heartbeatSQL, insertEventsSQL.get(2), upsertStepsSQL.get(2)} {
		if second[q] != nil {
			t.Errorf("%s was never run but is prepared", firstLine(q))
		}
	}
}

// TestRowsSQLBuildsOnDemand: a multi-row family builds only the row
// counts asked for, and each is the one-row statement repeated.
func TestRowsSQLBuildsOnDemand(t *testing.T) {
	f := multiRowSQL(upsertAttemptSQL, 9, maxAttemptRows)
	q := f.get(3)
	for n := 2; n <= maxAttemptRows; n++ {
		if f.built(n) != (n == 3) {
			t.Errorf("built(%d) = %v after get(3)", n, f.built(n))
		}
	}
	if !strings.Contains(q, "(?1, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)") || strings.Contains(q, "?29") {
		t.Errorf("the 3-row statement has the wrong parameters:\n%s", q)
	}
	if f.contains(f.get(2)) != true || f.contains(upsertAttemptSQL) {
		t.Errorf("contains does not tell the family's statements from others")
	}
	if got := insertEventsSQL.get(2); got != `INSERT INTO events (run_id, at, kind, step_key, data) VALUES (?1, ?2, ?3, ?4, ?5), (?1, ?2, ?6, ?7, ?8)` {
		t.Errorf("insertEventsSQL.get(2) = %s", got)
	}
}

// TestPromotionUnderConcurrentWrites: many goroutines writing through the
// one writer connection while hot statements are promoted between their
// transactions neither deadlock nor fail.
func TestPromotionUnderConcurrentWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := scratch(t)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, 8*10)
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				id := fmt.Sprintf("run-%d-%d", g, i)
				p := store.RunInsertParams{ID: id, Workflow: "wf", Version: "1.0.0", GraphHash: "h", Key: id, Now: now}
				for range 1 + (g+i)%5 {
					p.Events = append(p.Events, store.EventWrite{Kind: "run_created"})
				}
				if _, err := s.RunInsert(ctx, p); err != nil {
					errs <- err
				}
				if _, err := s.RunGet(ctx, id); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if writeStmts(s)[insertRunSQL] == nil {
		t.Errorf("the run insert was never promoted")
	}
}
