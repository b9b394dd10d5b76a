package sqlrow

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one schema change of a backend, from a file NNNN_name.sql.
type Migration struct {
	Version int
	Name    string // the file name without .sql
	SQL     string
}

// Migrations reads the files of dir in fsys (each backend embeds its own),
// in version order. The files must be named NNNN_name.sql and numbered 1,
// 2, 3, ... without a gap.
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading embedded migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("embedded migration %s is not named NNNN_name.sql", name)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("reading embedded migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(name, ".sql"), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("embedded migrations are not numbered 1, 2, 3, ...: %s", m.Name)
		}
	}
	return out, nil
}

// SchemaVersion is the newest version of the migrations in dir of fsys, 0
// when there are none or they cannot be read: the schema a binary knows.
func SchemaVersion(fsys fs.FS, dir string) int {
	ms, err := Migrations(fsys, dir)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}
