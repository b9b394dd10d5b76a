package main

import (
	"path/filepath"
	"regexp"
	"testing"
)

// hostileHCL's step writes to stderr what would erase its line on a
// terminal and return the cursor, so that "fake" reads "all good", then
// fails.
const hostileHCL = `
workflow "hostile" {
  version = "1.0.0"
  step "boom" {
    exec {
      command = ["sh", "-c", "printf 'fake\\033[2K\\rall good' >&2; exit 4"]
    }
  }
}
`

// TestTmuxEscapes: apply on a terminal (the live view, then the result)
// shows what the program wrote escaped, and the terminal never draws it:
// the failure reads as the program's bytes, not "all good".
func TestTmuxEscapes(t *testing.T) {
	p, flowrun := newTmux(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hostile.hcl"), hostileHCL)
	p.start(dir, flowrun, "apply", "hostile.hcl")
	s := p.waitFor(`^flowrun exited with 1$`)
	for _, want := range []string{
		`^✗ hostile 1\.0\.0 · run ` + runID + ` · failed`,
		`^error     step boom: exec: command "sh" exited with status 4: fake\\x1b\[2K\\rall good$`,
		`^boom +failed +1 +\S+ +exec: command "sh" exited with status 4: fake\\x1b\[2K\\rall good$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(s) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	if regexp.MustCompile(`(?m)^all good`).MatchString(s) {
		t.Errorf("the terminal drew the program's escape sequences:\n%s", s)
	}
}
