package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"modernc.org/sqlite"
)

// Snapshots: a Store can copy its database as it stands to a file
// (Snapshot), put such a copy back in its place (Restore), and write a
// digest of the state the engine decides from (Digest). flowrun test uses
// them to start crash replays from a checkpoint and to see when a replay
// has reached a state the uninterrupted run passed through. They are not
// part of store.Store: only this backend, whose whole database is one file,
// has them.

// digestSkipTables and digestSkipColumns are what Digest leaves out;
// everything else of every table is in it, so a table or column added by a
// migration counts unless it is named here. Each is left out because it
// names the process or records history that no decision of the engine
// reads:
//
//   - events: the run's history (an engine that restarted adds claimed and
//     interrupted events); the engine decides from runs, steps, attempts
//     and signals, never from events.
//   - sqlite_sequence: the AUTOINCREMENT counters, events' among them.
//   - the lease (runs.lease_owner, lease_epoch, lease_expires_at) and the
//     owner of attempts and alert deliveries: they name the engine
//     incarnation that holds them, and matter only to a takeover by
//     another one.
//
// A migration that adds a column of that kind (naming an owner, a lease or
// its expiry) adds it here too; TestDigestNamesEveryColumn fails on a name
// here that the schema no longer has.
var (
	digestSkipTables  = map[string]bool{"events": true, "sqlite_sequence": true}
	digestSkipColumns = map[string]bool{
		"runs.lease_owner": true, "runs.lease_epoch": true, "runs.lease_expires_at": true,
		"step_attempts.owner": true, "alert_outbox.owner": true, "alert_outbox.lease_until": true,
	}
)

// Snapshot writes the database as the store sees it now (every committed
// transaction, the WAL's included) to a new file at path, mode 0600: the
// store a process killed now would leave. Restore puts it back.
func (s *Store) Snapshot(ctx context.Context, path string) error {
	conn, err := s.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("snapshot the database %s: %w", s.path, err)
	}
	defer conn.Close()
	var b []byte
	err = conn.Raw(func(dc any) error {
		sz, ok := dc.(interface{ Serialize() ([]byte, error) })
		if !ok {
			return fmt.Errorf("the SQLite driver cannot serialize a database")
		}
		var err error
		b, err = sz.Serialize()
		return err
	})
	if err != nil {
		return fmt.Errorf("snapshot the database %s: %w", s.path, err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write a snapshot of the database %s: %w", s.path, err)
	}
	return nil
}

// Restore overwrites the store's database with the snapshot at path (made
// by Snapshot of a store of the same schema), through SQLite's backup API
// on the writer connection, so no write of the store interleaves. The read
// connections see the new content at their next transaction.
func (s *Store) Restore(ctx context.Context, path string) error {
	conn, err := s.w.Conn(ctx)
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

// Digest writes to w a canonical encoding of the store's state: every
// table by name, its rows encoded column by column and sorted (the order
// rows were written in does not count), less what digestSkipTables and
// digestSkipColumns name. Two stores whose digests are equal hold the same
// runs, steps, attempts, signals and so on, whichever engine wrote them. It
// reads in one transaction.
func (s *Store) Digest(ctx context.Context, w io.Writer) error {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("digest the database %s: %w", s.path, err)
	}
	defer tx.Rollback()
	tables, err := digestTables(ctx, tx)
	if err != nil {
		return fmt.Errorf("digest the database %s: %w", s.path, err)
	}
	for _, t := range tables {
		if err := digestTable(ctx, tx, t, w); err != nil {
			return fmt.Errorf("digest table %s of the database %s: %w", t, s.path, err)
		}
	}
	return nil
}

// digestTables lists the tables Digest reads, by name.
func digestTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if !digestSkipTables[name] {
			tables = append(tables, name)
		}
	}
	return tables, rows.Err()
}

func digestTable(ctx context.Context, tx *sql.Tx, table string, w io.Writer) error {
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
	fmt.Fprintf(w, "table %q %d\n", table, len(enc))
	for _, e := range enc {
		if _, err := w.Write(e); err != nil {
			return err
		}
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
