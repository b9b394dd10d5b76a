package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flowrun/flowrun/store"
	"github.com/flowrun/flowrun/store/internal/sqlrow"
)

// VersionPut stores a workflow version; the same hash again is a no-op, a
// different hash is store.ErrVersionConflict, or with p.Replace the next
// revision of the version (replace).
func (s *Store) VersionPut(ctx context.Context, p store.VersionPutParams) (store.Version, error) {
	var v store.Version
	op := fmt.Sprintf("storing workflow %s version %s", p.Workflow, p.Version)
	err := s.write(ctx, op, func(w *wtx) error {
		// The work directory goes in with the row: an UPDATE of a row
		// rewrites all of it, the graph included, and reads the graph's
		// overflow pages to do so.
		res, err := w.exec(`INSERT INTO workflow_versions (`+sqlrow.VersionInsertCols+`, steps, signal_types, work_dir)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
			ON CONFLICT (workflow, version) DO NOTHING`,
			p.Workflow, p.Version, p.Major, p.Minor, p.Patch, p.Hash, p.Graph, p.Now.UnixMicro(), sqlrow.StepCountArg(p.Steps),
			sqlrow.SignalTypesArg(p.SignalTypes), sqlrow.TextArg(p.WorkDir))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 1 {
			// The row just inserted is p, in its first revision: reading
			// it back would read the graph's overflow pages.
			v = store.Version{Workflow: p.Workflow, Version: p.Version, Major: p.Major, Minor: p.Minor, Patch: p.Patch,
				Hash: p.Hash, Graph: p.Graph, CreatedAt: time.UnixMicro(p.Now.UnixMicro()).UTC(), Revision: 1}
			return putSource(w, p)
		}
		// A version stored before step counts (or signal types) were
		// recorded gets them (once: the update rewrites the row, graph
		// included).
		if _, err := w.exec(`UPDATE workflow_versions
			SET steps = COALESCE(steps, ?3), signal_types = COALESCE(signal_types, ?5)
			WHERE workflow = ?1 AND version = ?2 AND hash = ?4
			AND (steps IS NULL OR (signal_types IS NULL AND ?5 IS NOT NULL))`,
			p.Workflow, p.Version, p.Steps, p.Hash, sqlrow.SignalTypesArg(p.SignalTypes)); err != nil {
			return err
		}
		v, err = scanVersion(w.queryRow(`SELECT `+sqlrow.VersionCols+` FROM workflow_versions WHERE workflow = ?1 AND version = ?2`,
			p.Workflow, p.Version))
		if err != nil {
			return err
		}
		if v.Hash != p.Hash && p.Replace {
			if v, err = replace(w, p, v); err != nil {
				return err
			}
		}
		if v.Hash != p.Hash {
			return fmt.Errorf("stored with graph hash %.12s, this graph is %.12s; bump the version: %w", v.Hash, p.Hash, store.ErrVersionConflict)
		}
		if p.WorkDir != "" {
			if _, err := w.exec(`UPDATE workflow_versions SET work_dir = ?3
				WHERE workflow = ?1 AND version = ?2 AND work_dir IS NOT ?3`, p.Workflow, p.Version, p.WorkDir); err != nil {
				return err
			}
		}
		return putSource(w, p)
	})
	if err != nil {
		return store.Version{}, err
	}
	return v, nil
}

// replace makes p the next revision of cur, the stored version, keeping
// cur's graph in version_revisions; refused with a
// *store.VersionInUseError while an unfinished run is bound to it.
func replace(w *wtx, p store.VersionPutParams, cur store.Version) (store.Version, error) {
	var n int
	if err := w.queryRow(`SELECT COUNT(*) FROM runs WHERE workflow = ?1 AND version = ?2
		AND status NOT IN ('completed', 'failed', 'canceled')`, p.Workflow, p.Version).Scan(&n); err != nil {
		return cur, err
	}
	if n > 0 {
		e := &store.VersionInUseError{Workflow: p.Workflow, Version: p.Version, Runs: n}
		if err := w.queryRow(`SELECT id, status FROM runs WHERE workflow = ?1 AND version = ?2
			AND status NOT IN ('completed', 'failed', 'canceled') ORDER BY id LIMIT 1`, p.Workflow, p.Version).Scan(&e.Run, &e.Status); err != nil {
			return cur, err
		}
		return cur, e
	}
	if _, err := w.exec(`INSERT INTO version_revisions (workflow, version, revision, major, minor, patch, hash, graph, created_at, steps, signal_types)
		SELECT workflow, version, revision, major, minor, patch, hash, graph, created_at, steps, signal_types FROM workflow_versions
		WHERE workflow = ?1 AND version = ?2`, p.Workflow, p.Version); err != nil {
		return cur, err
	}
	if _, err := w.exec(`UPDATE workflow_versions SET hash = ?3, graph = ?4, created_at = ?5, steps = ?6, signal_types = ?7, revision = revision + 1
		WHERE workflow = ?1 AND version = ?2`, p.Workflow, p.Version, p.Hash, p.Graph, p.Now.UnixMicro(), sqlrow.StepCountArg(p.Steps),
		sqlrow.SignalTypesArg(p.SignalTypes)); err != nil {
		return cur, err
	}
	return scanVersion(w.queryRow(`SELECT `+sqlrow.VersionCols+` FROM workflow_versions WHERE workflow = ?1 AND version = ?2`,
		p.Workflow, p.Version))
}

// VersionGet returns one stored version, or store.ErrNotFound.
func (s *Store) VersionGet(ctx context.Context, workflow, version string) (store.Version, error) {
	v, err := scanVersion(s.queryRow(ctx, `SELECT `+sqlrow.VersionCols+` FROM workflow_versions WHERE workflow = ?1 AND version = ?2`,
		workflow, version))
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("workflow %s version %s: %w", workflow, version, store.ErrNotFound)
	}
	return v, s.fail("reading a workflow version", err)
}

// VersionWorkDir returns the directory recorded when the version was
// applied ("" when none was).
func (s *Store) VersionWorkDir(ctx context.Context, workflow, version string) (string, error) {
	var dir sql.NullString
	err := s.queryRow(ctx, `SELECT work_dir FROM workflow_versions WHERE workflow = ?1 AND version = ?2`, workflow, version).Scan(&dir)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("workflow %s version %s: %w", workflow, version, store.ErrNotFound)
	}
	return dir.String, s.fail("reading a workflow version's directory", err)
}

// VersionGetByHash returns the version of a workflow with that graph hash;
// when several versions share the graph, the oldest by semantic version.
// A graph no version has now is looked up among the replaced revisions.
func (s *Store) VersionGetByHash(ctx context.Context, workflow, hash string) (store.Version, error) {
	v, err := scanVersion(s.queryRow(ctx, `SELECT `+sqlrow.VersionCols+` FROM workflow_versions
		WHERE workflow = ?1 AND hash = ?2 ORDER BY major, minor, patch LIMIT 1`, workflow, hash))
	if errors.Is(err, sql.ErrNoRows) {
		v, err = scanVersion(s.queryRow(ctx, `SELECT `+sqlrow.VersionCols+` FROM version_revisions
			WHERE workflow = ?1 AND hash = ?2 ORDER BY major, minor, patch, revision DESC LIMIT 1`, workflow, hash))
	}
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("workflow %s with graph hash %.12s: %w", workflow, hash, store.ErrNotFound)
	}
	return v, s.fail("reading a workflow version", err)
}

// VersionSignalTypes returns the signal types stored with the version of
// a workflow with that graph hash (nil when unknown). Versions sharing a
// graph share its types, so a row that has them is preferred to one that
// does not. Both reads are answered from the (workflow, hash,
// signal_types) indexes (migration 0015), never from the row, whose graph
// comes before the column.
func (s *Store) VersionSignalTypes(ctx context.Context, workflow, hash string) (json.RawMessage, error) {
	var raw *string
	err := s.queryRow(ctx, `SELECT signal_types FROM workflow_versions INDEXED BY workflow_versions_hash
		WHERE workflow = ?1 AND hash = ?2 ORDER BY signal_types IS NULL LIMIT 1`, workflow, hash).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.queryRow(ctx, `SELECT signal_types FROM version_revisions INDEXED BY version_revisions_hash
			WHERE workflow = ?1 AND hash = ?2 ORDER BY signal_types IS NULL LIMIT 1`, workflow, hash).Scan(&raw)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("workflow %s with graph hash %.12s: %w", workflow, hash, store.ErrNotFound)
	}
	if err != nil {
		return nil, s.fail("reading a workflow version's signal types", err)
	}
	return sqlrow.SignalTypes(raw), nil
}

// VersionList returns the versions of a workflow (all workflows when
// empty), by workflow then semantic version.
func (s *Store) VersionList(ctx context.Context, workflow string) ([]store.Version, error) {
	var vs []store.Version
	var err error
	if workflow == "" {
		vs, err = readAll(ctx, s, scanVersion, `SELECT `+sqlrow.VersionCols+` FROM workflow_versions ORDER BY workflow, major, minor, patch`)
	} else {
		vs, err = readAll(ctx, s, scanVersion, `SELECT `+sqlrow.VersionCols+` FROM workflow_versions
			WHERE workflow = ?1 ORDER BY major, minor, patch`, workflow)
	}
	return vs, s.fail("listing workflow versions", err)
}

// VersionHeads is VersionList without the graphs.
func (s *Store) VersionHeads(ctx context.Context, workflow string) ([]store.Version, error) {
	var vs []store.Version
	var err error
	if workflow == "" {
		vs, err = readAll(ctx, s, scanVersion, `SELECT `+sqlrow.VersionHeadCols+` FROM workflow_versions ORDER BY workflow, major, minor, patch`)
	} else {
		vs, err = readAll(ctx, s, scanVersion, `SELECT `+sqlrow.VersionHeadCols+` FROM workflow_versions
			WHERE workflow = ?1 ORDER BY major, minor, patch`, workflow)
	}
	return vs, s.fail("listing workflow versions", err)
}

// putSource records the source a graph was stored from, when given.
func putSource(w *wtx, p store.VersionPutParams) error {
	if p.Source == nil {
		return nil
	}
	_, err := w.exec(`INSERT INTO version_sources (workflow, hash, name, source, stored_at) VALUES (?1, ?2, ?3, ?4, ?5)
		ON CONFLICT (workflow, hash) DO UPDATE SET name = excluded.name, source = excluded.source, stored_at = excluded.stored_at`,
		p.Workflow, p.Hash, p.SourceName, p.Source, p.Now.UnixMicro())
	if err != nil {
		return fmt.Errorf("recording the source of workflow %s version %s: %w", p.Workflow, p.Version, err)
	}
	return nil
}

// VersionSource implements store.Store.
func (s *Store) VersionSource(ctx context.Context, workflow, hash string) (string, []byte, error) {
	var name string
	var src []byte
	err := s.queryRow(ctx, `SELECT name, source FROM version_sources WHERE workflow = ?1 AND hash = ?2`, workflow, hash).Scan(&name, &src)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, fmt.Errorf("the source of workflow %s graph %.12s: %w", workflow, hash, store.ErrNotFound)
	}
	return name, src, s.fail("reading the source of workflow "+workflow, err)
}
