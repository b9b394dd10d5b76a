package credentials

import (
	"errors"
	"os"
	"testing"
)

// TestSaveLoadRemove: tokens per server, the file 0600, a file others may
// read refused, a removed server gone.
func TestSaveLoadRemove(t *testing.T) {
	s := In(t.TempDir() + "/flowrun")
	if tok, err := s.Token("https://a"); err != nil || tok != "" {
		t.Fatalf("Token of a missing file = %q, %v", tok, err)
	}
	if err := s.Save("https://a", "t1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("https://b", "t2"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file's mode: %v, %v", fi.Mode(), err)
	}
	if tok, _ := s.Token("https://b"); tok != "t2" {
		t.Fatalf("Token(b) = %q", tok)
	}
	if ok, err := s.Remove("https://a"); !ok || err != nil {
		t.Fatalf("Remove(a) = %v, %v", ok, err)
	}
	if ss, _ := s.Servers(); len(ss) != 1 || ss[0] != "https://b" {
		t.Fatalf("Servers = %v", ss)
	}
	if err := os.Chmod(s.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Token("https://b"); !errors.Is(err, ErrOpenToOthers) {
		t.Fatalf("a 0644 file: %v, want ErrOpenToOthers", err)
	}
}
