package deploy_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var (
	buildOnce sync.Once
	builtDir  string
	buildErr  error
)

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return fmt.Sprintf("%v\n%s", e.err, e.out) }

// TestMain removes the binary deploy/build-static made.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// imageUID is the user the image runs as (Containerfile's USER).
const imageUID = 65532

// buildStatic runs deploy/build-static as the Containerfile does and
// returns the binary it made. It is built once per test binary.
func buildStatic(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "flowrun-deploy-")
		if err != nil {
			buildErr = err
			return
		}
		// The image's user runs the binary from here.
		if err := os.Chmod(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("deploy/build-static", dir)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{err: err, out: out}
			return
		}
		builtDir = dir
	})
	if buildErr != nil {
		t.Fatalf("deploy/build-static: %v", buildErr)
	}
	return filepath.Join(builtDir, "flowrun")
}

// TestStaticBuild: the image's binary is statically linked (the image has
// no C library and no dynamic loader) and works with nothing around it: as
// the image's unprivileged user, with no environment but FLOWRUN_DB, no
// shell and no home, it applies a workflow on SQLite.
func TestStaticBuild(t *testing.T) {
	bin := buildStatic(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary names a dynamic loader (PT_INTERP): it would not start in a FROM scratch image")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary needs shared libraries %v", libs)
	}

	// Not t.TempDir: its parent is private to root, and the image's user
	// must reach this one.
	work, err := os.MkdirTemp("", "flowrun-image-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o777); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(work, "set.hcl")
	if err := os.WriteFile(wf, []byte(setWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = []string{"FLOWRUN_DB=" + filepath.Join(work, "flowrun.db")}
		if os.Getuid() == 0 {
			// The image's user, which no passwd file knows.
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("flowrun %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("version"); !strings.Contains(out, "flowrun") {
		t.Errorf("flowrun version printed %q", out)
	}
	out := run("apply", "--json", "set.hcl")
	if !strings.Contains(out, `"completed"`) || !strings.Contains(out, "hello, image") {
		t.Errorf("apply in the image's conditions printed:\n%s", out)
	}
}

const setWorkflow = `workflow "image" {
  version = "1.0.0"
  step "greet" {
    set {
      text = "hello, {{ run.workflow }}"
    }
  }
  output "text" {
    value = "{{ steps.greet.output.text }}"
  }
}
`

// TestContainerfile: the build stage makes the binary with
// deploy/build-static, and the image is FROM scratch (no shell: nothing
// RUNs in it), runs as a non-root user and starts flowrun itself.
func TestContainerfile(t *testing.T) {
	stages := containerStages(t, "Containerfile")
	if len(stages) != 2 {
		t.Fatalf("Containerfile has %d stages, want a build stage and the image", len(stages))
	}
	build, image := stages[0], stages[1]
	if !build.has("RUN", "deploy/build-static /out") {
		t.Error("the build stage does not build with deploy/build-static /out, the command deploy's tests check")
	}
	if image.from != "scratch" {
		t.Errorf("the image is FROM %q, want scratch", image.from)
	}
	if ins := image.all("RUN"); len(ins) > 0 {
		t.Errorf("the image RUNs %q, but it has no shell", ins)
	}
	users := image.all("USER")
	if len(users) != 1 || strings.HasPrefix(users[0], "0") || strings.HasPrefix(users[0], "root") {
		t.Errorf("the image's USER is %q, want one non-root numeric user", users)
	}
	if !image.has("ENTRYPOINT", `["/usr/local/bin/flowrun"]`) {
		t.Errorf("the image's ENTRYPOINT is %q, want flowrun in exec form", image.all("ENTRYPOINT"))
	}
	for _, c := range image.all("COPY") {
		if !strings.HasPrefix(c, "--from=build ") {
			t.Errorf("the image copies %q from outside the build stage", c)
		}
	}
}

type stage struct {
	from string
	ins  [][2]string // instruction, arguments
}

func (s stage) all(name string) []string {
	var out []string
	for _, in := range s.ins {
		if in[0] == name {
			out = append(out, in[1])
		}
	}
	return out
}

func (s stage) has(name, prefix string) bool {
	for _, a := range s.all(name) {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// containerStages reads a Containerfile's stages: instructions with their
// continuation lines joined, comments dropped.
func containerStages(t *testing.T, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var line strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || (text == "" && line.Len() == 0) {
			continue
		}
		if cont, ok := strings.CutSuffix(text, "\\"); ok {
			line.WriteString(cont + " ")
			continue
		}
		line.WriteString(text)
		name, args, _ := strings.Cut(line.String(), " ")
		line.Reset()
		name = strings.ToUpper(name)
		args = strings.Join(strings.Fields(args), " ")
		if name == "FROM" {
			from, _, _ := strings.Cut(args, " ")
			stages = append(stages, stage{from: from})
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("%s: %s before any FROM", path, name)
		}
		s := &stages[len(stages)-1]
		s.ins = append(s.ins, [2]string{name, args})
	}
	return stages
}

// TestSystemdUnits: systemd-analyze verify accepts each unit (with its
// ExecStart pointing at a built binary) without a warning, and flowrun
// accepts each ExecStart's flags.
// TestSystemdUnitsRestartThroughOutages: a unit is restarted on failure
// and never stops being restarted. A worker exits 5 once its store failed
// for a whole lease, and every restart fails at once while the database
// is down; with systemd's default start limit (5 starts in 10s) a
// database outage of a minute left the host without a worker, for good,
// once the database was back.
func TestSystemdUnitsRestartThroughOutages(t *testing.T) {
	units, err := filepath.Glob("systemd/*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no units in deploy/systemd: %v", err)
	}
	for _, u := range units {
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		section := ""
		set := map[string]string{}
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "[") {
				section = l
				continue
			}
			if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
				set[section+k] = v
			}
		}
		if got := set["[Service]Restart"]; got != "on-failure" && got != "always" {
			t.Errorf("%s: Restart=%q, want on-failure", u, got)
		}
		if got := set["[Unit]StartLimitIntervalSec"]; got != "0" {
			t.Errorf("%s: [Unit] StartLimitIntervalSec=%q, want 0: systemd stops restarting a unit after 5 failed starts in 10s, as during a database outage", u, got)
		}
	}
}

func TestSystemdUnits(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("needs systemd-analyze (Debian's systemd package; .ci/run installs it)")
	}
	bin := buildStatic(t)
	units, err := filepath.Glob("systemd/*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no units in deploy/systemd: %v", err)
	}
	dir := t.TempDir()
	for _, u := range units {
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		var exec0 string
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
				exec0 = v
			}
		}
		fields := strings.Fields(exec0)
		if len(fields) < 2 || fields[0] != "/usr/local/bin/flowrun" {
			t.Errorf("%s: ExecStart=%q, want /usr/local/bin/flowrun VERB ...", u, exec0)
			continue
		}
		// Every flag parses: flowrun stops at --help after reading them.
		cmd := exec.Command(bin, append(fields[1:], "--help")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: flowrun refuses its ExecStart: %v\n%s", u, err, out)
		}
		local := filepath.Join(dir, filepath.Base(u))
		text := strings.ReplaceAll(string(data), "/usr/local/bin/flowrun", bin)
		if err := os.WriteFile(local, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		v := exec.Command("systemd-analyze", "verify", local)
		v.Stderr = &stderr
		if err := v.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", filepath.Base(u), err, stderr.String())
		}
	}
}
