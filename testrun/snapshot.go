package testrun

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"modernc.org/sqlite" // the driver of the scratch stores (store/sqlite registers the same)
)

// A crash replay starts from a checkpoint of the uninterrupted execution
// (crash.go): the scratch store copied as it was when the engine was about
// to make its next commit, with what the test's side of the execution held
// at that instant (the mocks' calls, the driver loop, the virtual clock,
// the random source). This file takes those copies and computes the
// digests that say two executions are in the same state.

// pcgSource is the engine's random source (ids, retry jitter), locked so
// that its state can be read while the engine draws from it. A replay's
// engine continues the stream where the dropped engine left it: it draws
// other ids than the dropped one did, and the same ones the uninterrupted
// execution drew from that instant on.
type pcgSource struct {
	mu sync.Mutex
	p  *rand.PCG
}

func newPCG(seed1, seed2 uint64) *pcgSource { return &pcgSource{p: rand.NewPCG(seed1, seed2)} }

func (s *pcgSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.Uint64()
}

// state is the source's position in its stream.
func (s *pcgSource) state() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.p.MarshalBinary()
	if err != nil {
		panic(fmt.Sprintf("marshal a PCG: %v", err)) // a PCG always marshals
	}
	return b
}

func restorePCG(state []byte) (*pcgSource, error) {
	p := &rand.PCG{}
	if err := p.UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("restore the random source: %w", err)
	}
	return &pcgSource{p: p}, nil
}

// openReader opens a second connection pool on a scratch store's file,
// for snapshots and digests (the store's own pools are its business).
func openReader(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, fmt.Errorf("open a reader of the scratch store: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// snapshot writes the database as db sees it now (committed pages, the
// WAL's included) to a new file at path: a store in the state a process
// killed now would leave.
func snapshot(ctx context.Context, db *sql.DB, path string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("snapshot the scratch store: %w", err)
	}
	defer conn.Close()
	var b []byte
	err = conn.Raw(func(dc any) error {
		s, ok := dc.(interface{ Serialize() ([]byte, error) })
		if !ok {
			return fmt.Errorf("the SQLite driver cannot serialize a database")
		}
		var err error
		b, err = s.Serialize()
		return err
	})
	if err != nil {
		return fmt.Errorf("snapshot the scratch store: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write a snapshot of the scratch store: %w", err)
	}
	return nil
}

// restore overwrites the database db is open on with the snapshot at
// path, through SQLite's backup API: the other connections to it (the
// store's) see the new content at their next transaction.
func restore(ctx context.Context, db *sql.DB, path string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("restore a snapshot: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		r, ok := dc.(interface {
			NewRestore(string) (*sqlite.Backup, error)
		})
		if !ok {
			return fmt.Errorf("the SQLite driver cannot restore a database")
		}
		b, err := r.NewRestore("file:" + path)
		if err != nil {
			return err
		}
		if _, err := b.Step(-1); err != nil {
			b.Finish()
			return err
		}
		return b.Finish()
	})
	if err != nil {
		return fmt.Errorf("restore the snapshot %s: %w", filepath.Base(path), err)
	}
	return nil
}

// digestSkipTables and digestSkipColumns are what a store digest leaves
// out; everything else of every table is in it, so a table or column added
// later counts unless it is named here. Each is left out because it names
// the process or records history that no decision of the engine reads:
//
//   - events: the run's history (a replay has its restarted engine's
//     claimed and interrupted events); the engine decides from runs, steps,
//     attempts and signals, never from events.
//   - sqlite_sequence: the AUTOINCREMENT counters, events' among them.
//   - the lease (runs.lease_owner, lease_epoch, lease_expires_at) and the
//     owner of attempts and alert deliveries: they name the engine
//     incarnation that holds them, and matter only to a takeover by
//     another one, which a replay past the point of comparison no longer
//     has.
var (
	digestSkipTables  = map[string]bool{"events": true, "sqlite_sequence": true}
	digestSkipColumns = map[string]bool{
		"runs.lease_owner": true, "runs.lease_epoch": true, "runs.lease_expires_at": true,
		"step_attempts.owner": true, "alert_outbox.owner": true, "alert_outbox.lease_until": true,
	}
)

// digestStore writes a canonical encoding of the store's state to h: every
// table by name, its rows encoded column by column and sorted (so the
// order rows were written in does not count), less what digestSkip*
// names. It reads in one transaction.
func digestStore(ctx context.Context, db *sql.DB, h hash.Hash) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("digest the scratch store: %w", err)
	}
	defer tx.Rollback()
	var tables []string
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return fmt.Errorf("digest the scratch store: %w", err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("digest the scratch store: %w", err)
		}
		if !digestSkipTables[name] {
			tables = append(tables, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("digest the scratch store: %w", err)
	}
	for _, t := range tables {
		if err := digestTable(ctx, tx, t, h); err != nil {
			return fmt.Errorf("digest table %s of the scratch store: %w", t, err)
		}
	}
	return nil
}

func digestTable(ctx context.Context, tx *sql.Tx, table string, h hash.Hash) error {
	rows, err := tx.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var enc [][]byte
	var buf bytes.Buffer
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		buf.Reset()
		for i, v := range vals {
			if digestSkipColumns[table+"."+cols[i]] {
				continue
			}
			encodeValue(&buf, v)
		}
		enc = append(enc, bytes.Clone(buf.Bytes()))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	sort.Slice(enc, func(i, j int) bool { return bytes.Compare(enc[i], enc[j]) < 0 })
	fmt.Fprintf(h, "table %q %d\n", table, len(enc))
	for _, e := range enc {
		h.Write(e)
	}
	return nil
}

// encodeValue writes a column value with its type and length, so that no
// two different rows encode alike.
func encodeValue(w *bytes.Buffer, v any) {
	var n [8]byte
	switch x := v.(type) {
	case nil:
		w.WriteByte('n')
	case int64:
		w.WriteByte('i')
		binary.BigEndian.PutUint64(n[:], uint64(x))
		w.Write(n[:])
	case float64:
		w.WriteByte('f')
		binary.BigEndian.PutUint64(n[:], math.Float64bits(x))
		w.Write(n[:])
	case bool:
		w.WriteByte('b')
		if x {
			w.WriteByte(1)
		} else {
			w.WriteByte(0)
		}
	case string:
		w.WriteByte('s')
		binary.BigEndian.PutUint64(n[:], uint64(len(x)))
		w.Write(n[:])
		w.WriteString(x)
	case []byte:
		w.WriteByte('x')
		binary.BigEndian.PutUint64(n[:], uint64(len(x)))
		w.Write(n[:])
		w.Write(x)
	default:
		s := fmt.Sprintf("%T:%v", v, v)
		w.WriteByte('?')
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		w.Write(n[:])
		w.WriteString(s)
	}
}

// attemptCounts reads how many attempts the store recorded per run id +
// "/" + step key.
func attemptCounts(ctx context.Context, db *sql.DB) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT run_id, step_key, COUNT(*) FROM step_attempts GROUP BY run_id, step_key`)
	if err != nil {
		return nil, fmt.Errorf("count the attempts: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var run, key string
		var n int
		if err := rows.Scan(&run, &key, &n); err != nil {
			return nil, fmt.Errorf("count the attempts: %w", err)
		}
		out[run+"/"+key] = n
	}
	return out, rows.Err()
}
