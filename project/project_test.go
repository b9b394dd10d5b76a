package project

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestFind: the nearest .flowrun of the directory or a parent, as git
// finds .git; none gives the default under the working directory.
func TestFind(t *testing.T) {
	root := t.TempDir()
	mkdir(t, filepath.Join(root, "app", Dir))
	deep := filepath.Join(root, "app", "src", "pkg")
	mkdir(t, deep)
	for _, cwd := range []string{filepath.Join(root, "app"), deep} {
		p, err := Find(cwd)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(root, "app", Dir)
		if p.Dir != want || p.Store != filepath.Join(want, DBFile) || !p.Found() {
			t.Errorf("Find(%s) = %+v, want the project in %s", cwd, p, want)
		}
	}
	other := filepath.Join(root, "other")
	mkdir(t, other)
	p, err := Find(other)
	if err != nil || p.Found() || p.Store != filepath.Join(other, Dir, DBFile) {
		t.Errorf("Find outside any project = %+v, %v; want the default under the directory", p, err)
	}
}

// TestFindRefuses: a .flowrun that is a file, a config with an unknown
// key, a store that is not a string, and a password others may read.
func TestFindRefuses(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, Dir), "", 0o600)
	if _, err := Find(root); !errors.Is(err, ErrNotADir) {
		t.Errorf("Find with a .flowrun file: %v, want ErrNotADir", err)
	}
	for name, c := range map[string]struct {
		text string
		mode os.FileMode
		want string
	}{
		"unknown key":     {"store = \"x.db\"\nservr = \"y\"\n", 0o600, `config.hcl:2:1: Unsupported argument`},
		"not a string":    {"store = 5\n", 0o600, `config.hcl:1:9: Invalid store`},
		"syntax":          {"store = \n", 0o600, `config.hcl:1:`},
		"readable secret": {"store = \"postgres://u:s3cret@db/f\"\n", 0o644, "others may read it (mode 0644); run: chmod 600"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), Dir)
			mkdir(t, dir)
			write(t, filepath.Join(dir, ConfigFile), c.text, c.mode)
			_, err := Find(filepath.Dir(dir))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Find: %v, want an error with %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
}

// TestConfigStore: config.hcl names the store: a URL as it is, a relative
// SQLite path relative to the project (so a sibling checkout can share a
// store), and a password in a file only its owner reads.
func TestConfigStore(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "b", Dir)
	mkdir(t, dir)
	write(t, filepath.Join(dir, ConfigFile), "store = \"../a/.flowrun/flowrun.db\"\n", 0o644)
	p, err := Find(filepath.Join(root, "b"))
	if err != nil || p.Store != filepath.Join(root, "a", Dir, DBFile) || p.Config == "" {
		t.Fatalf("Find = %+v, %v; want the sibling's store", p, err)
	}
	write(t, filepath.Join(dir, ConfigFile), "store = \"postgres://u:pw@db:5432/f\"\n", 0o600)
	if p, err = Find(filepath.Join(root, "b")); err != nil || p.Store != "postgres://u:pw@db:5432/f" {
		t.Fatalf("Find = %+v, %v; want the URL", p, err)
	}
}

// TestInit makes .flowrun once, 0700, and refuses a file in its place.
func TestInit(t *testing.T) {
	root := t.TempDir()
	p, created, err := Init(root)
	if err != nil || !created || p.Dir != filepath.Join(root, Dir) {
		t.Fatalf("Init = %+v, %v, %v", p, created, err)
	}
	fi, err := os.Stat(p.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the directory: %v, %v; want 0700", fi.Mode(), err)
	}
	if _, created, err = Init(root); err != nil || created {
		t.Fatalf("Init again = created %v, %v; want an existing project", created, err)
	}
	file := t.TempDir()
	write(t, filepath.Join(file, Dir), "", 0o600)
	if _, _, err := Init(file); !errors.Is(err, ErrNotADir) {
		t.Fatalf("Init over a file: %v", err)
	}
	// DIR a file: said in those words, not as stat's "DIR/.flowrun: not
	// a directory", which names a path nobody typed.
	plain := filepath.Join(t.TempDir(), "notes.txt")
	write(t, plain, "", 0o600)
	_, _, err = Init(plain)
	if want := plain + " is not a directory: name the directory to make the project in"; err == nil || err.Error() != want {
		t.Fatalf("Init of a file = %v, want %q", err, want)
	}
}
