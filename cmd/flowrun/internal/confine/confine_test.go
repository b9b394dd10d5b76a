package confine

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestPassword(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"postgres://u:pw@h:5432/db?sslmode=disable", "pw"},
		{"postgresql://u:p%40ss@h/db", "p%40ss"},
		{"POSTGRES://u:x@y@h/db", "x@y"},
		{"postgres://u@h/db", ""},
		{"postgres://u:@h/db", ""},
		{"postgres://h/db?sslmode=disable&password=q&x=1", "q"},
		{"postgres://u:@h/db?password=q#f", "q"},
		{"host=h user=u password=secret dbname=d", "secret"},
		{"host=h password='a b\\' c' dbname=d", "'a b\\' c'"},
		{"mypassword=x", ""},
		{"/var/lib/flowrun/flowrun.db", ""},
	} {
		s, e, ok := Password(c.dsn)
		got := ""
		if ok {
			got = c.dsn[s:e]
		}
		if got != c.want {
			t.Errorf("Password(%q) = %q, want %q", c.dsn, got, c.want)
		}
	}
}

// TestMain runs Process in a child of the test when asked, and prints
// what /proc shows of the child and what the child itself still reads.
func TestMain(m *testing.M) {
	if os.Getenv("CONFINE_CHILD") == "1" {
		Process()
		cmdline, _ := os.ReadFile("/proc/self/cmdline")
		environ, _ := os.ReadFile("/proc/self/environ")
		fmt.Printf("cmdline=%s\nenviron=%s\nargs=%s\ngetenv=%s\n",
			bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), bytes.ReplaceAll(environ, []byte{0}, []byte{' '}),
			strings.Join(os.Args[1:], " "), os.Getenv("FLOWRUN_DB"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProcessMasksPasswords: after Process, /proc/PID/cmdline and environ
// show the Postgres passwords of --db and FLOWRUN_DB as stars, while the
// process itself still reads them whole.
func TestProcessMasksPasswords(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("masking is Linux's")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "apply", "--db", "postgres://u:argpw1@h/db", "--db=postgres://u:argpw2@h/db", "x.hcl")
	cmd.Env = []string{"CONFINE_CHILD=1", "FLOWRUN_DB=host=h password=envpw3 dbname=d", "OTHER=keep"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			lines[k] = v
		}
	}
	if got, want := lines["cmdline"], " apply --db postgres://u:******@h/db --db=postgres://u:******@h/db x.hcl "; !strings.HasSuffix(got, want) {
		t.Errorf("cmdline = %q, want it to end in %q", got, want)
	}
	if got := lines["environ"]; !strings.Contains(got, "FLOWRUN_DB=host=h password=****** dbname=d ") || !strings.Contains(got, "OTHER=keep") {
		t.Errorf("environ = %q", got)
	}
	if got, want := lines["args"], "apply --db postgres://u:argpw1@h/db --db=postgres://u:argpw2@h/db x.hcl"; got != want {
		t.Errorf("os.Args = %q, want %q", got, want)
	}
	if got, want := lines["getenv"], "host=h password=envpw3 dbname=d"; got != want {
		t.Errorf("FLOWRUN_DB = %q, want %q", got, want)
	}
}
