// Package credentials keeps the tokens `flowrun login` saved, one per
// server, in the user's config directory (credentials.json under
// os.UserConfigDir()/flowrun, mode 0600 in a 0700 directory).
//
// It reads and writes that file only: it must not print, talk to a
// server, read the environment (the caller passes the directory), or
// accept a file that others may read (a token in it would be theirs).
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// FileName is the file in the directory.
const FileName = "credentials.json"

// maxFile bounds what Load reads.
const maxFile = 1 << 20

// file is the file's JSON form.
type file struct {
	Servers map[string]entry `json:"servers"`
}

type entry struct {
	Token string `json:"token"`
}

// Store is the credentials file of one directory.
type Store struct {
	// Path is the file's path.
	Path string
}

// In returns the store of dir (os.UserConfigDir()/flowrun, usually).
func In(dir string) Store { return Store{Path: filepath.Join(dir, FileName)} }

// Dir is the directory of the user's credentials given the values of
// XDG_CONFIG_HOME and HOME: $XDG_CONFIG_HOME/flowrun when that is an
// absolute path, else $HOME/.config/flowrun; ok is false when neither
// names a directory.
func Dir(xdgConfigHome, home string) (dir string, ok bool) {
	switch {
	case xdgConfigHome != "" && filepath.IsAbs(xdgConfigHome):
		return filepath.Join(xdgConfigHome, "flowrun"), true
	case home != "":
		return filepath.Join(home, ".config", "flowrun"), true
	}
	return "", false
}

// ErrOpenToOthers is a credentials file its group or others may read or
// write: refused, since its tokens would be theirs too.
var ErrOpenToOthers = errors.New("may be read or written by others")

// load reads the file; a missing one is empty.
func (s Store) load() (file, error) {
	f := file{Servers: map[string]entry{}}
	fi, err := os.Stat(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return f, fmt.Errorf("%s (mode %04o) %w; run: chmod 600 %s", s.Path, fi.Mode().Perm(), ErrOpenToOthers, s.Path)
	}
	if fi.Size() > maxFile {
		return f, fmt.Errorf("%s is larger than %d bytes; it is not flowrun's", s.Path, maxFile)
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%s is not a credentials file of flowrun: %w; remove it and log in again", s.Path, err)
	}
	if f.Servers == nil {
		f.Servers = map[string]entry{}
	}
	return f, nil
}

// Token returns the token saved for server ("" when none).
func (s Store) Token(server string) (string, error) {
	f, err := s.load()
	if err != nil {
		return "", err
	}
	return f.Servers[server].Token, nil
}

// Servers lists the servers with a saved token, sorted.
func (s Store) Servers() ([]string, error) {
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(f.Servers))
	for k := range f.Servers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// Save saves token for server, replacing any saved before.
func (s Store) Save(server, token string) error {
	f, err := s.load()
	if err != nil {
		return err
	}
	f.Servers[server] = entry{Token: token}
	return s.write(f)
}

// Remove forgets server's token; it reports whether there was one.
func (s Store) Remove(server string) (bool, error) {
	f, err := s.load()
	if err != nil {
		return false, err
	}
	if _, ok := f.Servers[server]; !ok {
		return false, nil
	}
	delete(f.Servers, server)
	return true, s.write(f)
}

// write replaces the file whole: a temporary file (0600) renamed over it,
// so a crash leaves the old file or the new one.
func (s Store) write(f file) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, FileName+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.Path)
}
