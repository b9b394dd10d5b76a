package interp

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flowrun/flowrun/lang"
	"github.com/flowrun/flowrun/lang/graph"
)

// versionSrc is a workflow "v" at version with one set step whose value is
// value.
func versionSrc(version, value string) string {
	return fmt.Sprintf(`
workflow "v" {
  version = %q
  step "a" {
    set { x = %q }
  }
}`, version, value)
}

func compileOne(t *testing.T, src string) *graph.Graph {
	t.Helper()
	m, diags := lang.LoadFile("v.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("compile: %s", diags.Error())
	}
	return m.Workflows[0].Graph
}

// TestCheckVersion: the version promise of an apply, checked by the engine
// against the stored versions: against the same version when it is stored,
// else the highest; a lower version, the same version with another graph
// and a bump that does not cover the changes are refused with a
// *graph.BumpError naming the rule; CheckVersion writes nothing.
func TestCheckVersion(t *testing.T) {
	b := setup(t)
	check := func(version, value string) VersionCheck {
		t.Helper()
		c, err := b.e.CheckVersion(b.ctx, CheckVersionParams{Graph: compileOne(t, versionSrc(version, value))})
		if err != nil {
			t.Fatalf("CheckVersion %s: %v", version, err)
		}
		return c
	}
	if c := check("1.0.0", "a"); c.Refused != nil || c.Newest.Version != "" || c.Against.Version != "" {
		t.Fatalf("first version: %+v", c)
	}
	if vs, _ := b.e.Versions(b.ctx, "v"); len(vs) != 0 {
		t.Fatalf("CheckVersion stored %d versions", len(vs))
	}
	b.compile(versionSrc("1.0.0", "a"))
	b.compile(versionSrc("1.1.0", "b"))
	reason := func(c VersionCheck) graph.BumpReason {
		var be *graph.BumpError
		if !errors.As(c.Refused, &be) {
			t.Fatalf("refused %v, want a *graph.BumpError", c.Refused)
		}
		return be.Reason
	}
	for _, tt := range []struct {
		version, value string
		against        string
		want           graph.BumpReason // 0: accepted
	}{
		{"1.0.0", "a", "1.0.0", 0}, // unchanged: applies again
		{"1.0.0", "changed", "1.0.0", graph.BumpSameVersion},
		{"0.9.0", "a", "1.1.0", graph.BumpLower},
		{"1.1.1", "c", "1.1.0", graph.BumpTooSmall}, // a changed value needs MINOR
		{"1.2.0", "c", "1.1.0", 0},
	} {
		c := check(tt.version, tt.value)
		if c.Against.Version != tt.against || c.Newest.Version != "1.1.0" {
			t.Errorf("%s: against %q newest %q, want %q and 1.1.0", tt.version, c.Against.Version, c.Newest.Version, tt.against)
		}
		if tt.want == 0 && c.Refused != nil {
			t.Errorf("%s %q: refused: %v", tt.version, tt.value, c.Refused)
		}
		if tt.want != 0 {
			if got := reason(c); got != tt.want {
				t.Errorf("%s %q: reason %v, want %v", tt.version, tt.value, got, tt.want)
			}
		}
	}
}

// TestCheckVersionNewMajor: CheckVersion says whether the graph's version
// is a higher MAJOR than the newest stored, the only case in which storing
// it can block runs (the CLI then lists them before it stores).
func TestCheckVersionNewMajor(t *testing.T) {
	b := setup(t)
	newMajor := func(version string) bool {
		t.Helper()
		c, err := b.e.CheckVersion(b.ctx, CheckVersionParams{Graph: compileOne(t, versionSrc(version, "x"+version))})
		if err != nil {
			t.Fatalf("CheckVersion %s: %v", version, err)
		}
		return c.NewMajor
	}
	if newMajor("1.0.0") {
		t.Error("the first version of a workflow is a new MAJOR")
	}
	b.compile(versionSrc("1.0.0", "x1.0.0"))
	b.compile(versionSrc("1.4.0", "x1.4.0"))
	for v, want := range map[string]bool{"1.5.0": false, "1.4.1": false, "2.0.0": true, "3.1.0": true, "0.9.0": false} {
		if got := newMajor(v); got != want {
			t.Errorf("version %s against newest 1.4.0: NewMajor %v, want %v", v, got, want)
		}
	}
}
