package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// peekWorkflow is a step that tries to read the flowrun process that
// started it: its command line, environment, memory map, and the stack
// where the environment and arguments lie, through /proc/$PPID/mem.
const peekWorkflow = `workflow "peek" {
  version = "1.0.0"
  step "peek" {
    exec {
      command = ["/bin/sh", "-c", <<-SH
        p=$PPID
        echo "cmdline: $(tr '\0' ' ' < /proc/$p/cmdline)"
        echo "environ: $(tr '\0' ' ' < /proc/$p/environ)"
        r=$(grep -F '[stack]' /proc/$p/maps | cut -d' ' -f1)
        echo "stack: $r"
        if [ -n "$r" ]; then
          s=$${r%-*}; e=$${r#*-}
          echo "mem: $(dd if=/proc/$p/mem bs=4096 skip=$((0x$s/4096)) count=$(((0x$e-0x$s)/4096)) 2>/dev/null | tr -c '[:print:]' '\n' | grep -a -o 'TOPSECRET[-A-Za-z0-9]*\|s3cre[t]-pw' | sort -u | tr '\n' ' ')"
        fi
        head -c 1 /proc/$p/mem >/dev/null
        if [ -r .flowrun/flowrun.db ]; then echo "db: readable"; else echo "db: unreadable"; fi
        exit 0
      SH
      ]
    }
  }
  output "seen" { value = "{{ steps.peek.output.stdout }}{{ steps.peek.output.stderr }}" }
}
`

// envSecret is planted in the worker's environment, as a secret another
// workflow would read; pgPassword in its --db (and FLOWRUN_DB).
const (
	envSecret  = "TOPSECRET-env-4711"
	pgPassword = "s3cret-pw"
)

// TestStepCannotReadItsWorker runs, through the flowrun binary, an exec
// step that reads /proc/$PPID/cmdline, environ, maps and mem of the
// flowrun process that started it (spec/security.md §9): run as root,
// with flowrun and the step as one unprivileged user, and with flowrun as
// root and the step as another user (--exec-user), which also keeps it
// from the database file. Neither the secret
// in the worker's environment nor the Postgres password of its --db and
// FLOWRUN_DB reaches the step's output, what apply prints, or the store.
func TestStepCannotReadItsWorker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the confinement of exec steps is Linux's (prctl, capability bounding set)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: to run the step as root, and to create the unprivileged user (CI runs as root)")
	}
	if testing.Short() {
		t.Skip("copies the test binary and runs it as another user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(sharedTempDir(t), "flowrun")
	copyFile(t, exe, bin, 0o755)
	u := stepUser(t)
	pg := os.Getenv("FLOWRUN_TEST_PG")
	for _, c := range []struct {
		name     string
		cred     *syscall.Credential
		pg       bool
		execUser bool // --exec-user flowrunstep
	}{
		{"root", nil, false, false},
		{"unprivileged", u, false, false},
		{"root exec-user", nil, false, true},
		{"root postgres", nil, true, false},
		{"unprivileged postgres", u, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.pg && pg == "" {
				t.Skip(`FLOWRUN_TEST_PG is not set; run eval "$(scripts/pg start)"`)
			}
			dir := sharedTempDir(t)
			if err := os.WriteFile(filepath.Join(dir, "peek.hcl"), []byte(peekWorkflow), 0o644); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(dir, ".flowrun", "flowrun.db")
			args := []string{"apply", "peek.hcl"}
			if c.pg {
				db = pgSchemaDSN(t, pg)
				args = append(args, "--db", db)
			}
			if c.execUser {
				args = append(args, "--exec-user", "flowrunstep")
			}
			if c.cred != nil {
				chownTree(t, dir, int(c.cred.Uid), int(c.cred.Gid))
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "TZ=UTC", "NO_COLOR=1",
				"FLOWRUN_DB=" + db, "FLOWRUN_SECRET_X=" + envSecret}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("flowrun apply: %v\n%s", err, out)
			}
			// The step ran and read what anyone may: the command line.
			if !regexp.MustCompile(`cmdline: \S*flowrun apply peek\.hcl`).Match(out) {
				t.Fatalf("the step did not report its worker's command line:\n%s", out)
			}
			for _, secret := range []string{envSecret, pgPassword} {
				if bytes.Contains(out, []byte(secret)) {
					t.Errorf("the step read %q from its worker:\n%s", secret, out)
				}
				if !c.pg {
					if f := grepTree(t, filepath.Join(dir, ".flowrun"), secret); f != "" {
						t.Errorf("%s holds %q", f, secret)
					}
				}
			}
			// A step of the worker's own user reads the SQLite file (the
			// boundary security.md §9 states); one of another user does not.
			if want := map[bool]string{false: "db: readable", true: "db: unreadable"}[c.execUser]; !c.pg && !strings.Contains(string(out), want) {
				t.Errorf("the step does not report %q:\n%s", want, out)
			}
			if c.pg && !strings.Contains(string(out), "postgres:*********@") {
				t.Errorf("the worker's command line does not show its --db password masked:\n%s", out)
			}
		})
	}
}

// sharedTempDir is a temporary directory another user may enter.
func sharedTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "flowrun-confine-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stepUser is the unprivileged user flowrunstep, created when missing.
func stepUser(t *testing.T) *syscall.Credential {
	t.Helper()
	const name = "flowrunstep"
	if _, err := user.Lookup(name); err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 9) { // 9: it exists (a parallel run made it)
			t.Skipf("cannot create the user %s (useradd: %v: %s)", name, err, out)
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func chownTree(t *testing.T, dir string, uid, gid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// grepTree returns the first file under dir that holds s, or "".
func grepTree(t *testing.T, dir, s string) string {
	t.Helper()
	found := ""
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || found != "" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(s)) {
			found = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// pgSchemaDSN makes a schema of its own on the test server and returns
// a DSN for it that carries pgPassword (the server trusts any).
func pgSchemaDSN(t *testing.T, base string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "flowrun_confine_" + hex.EncodeToString(b)
	admin := func(sql string) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	admin("CREATE SCHEMA " + schema)
	t.Cleanup(func() { admin("DROP SCHEMA " + schema + " CASCADE") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pgPassword)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
